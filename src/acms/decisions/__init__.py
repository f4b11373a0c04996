"""Plans and decisions: why the code is the way it is, as graph nodes that context assembly can use.

``model`` (statuses, result records), ``emit`` (a decision and its fragment as quads, shared by the
two sources), ``records`` (validated writes and reads for ``acms plan`` / ``acms decision``), ``adr``
(architecture decision records found in the project: a pure parser) and ``ingest`` (ADRs into an
index batch).
"""
