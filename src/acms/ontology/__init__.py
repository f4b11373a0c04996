"""Ontology extensions by domain teams: loading (``extensions``), checks (``check``, ``reasoner``),
rules run over an index (``rules``), registration in the project's config (``config_file``),
``describe`` and UKO versioning (``versioning``)."""
