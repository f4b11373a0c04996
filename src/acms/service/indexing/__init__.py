"""The index run as a package: a run context, the write modes behind one interface, the phases after
the files, and the orchestrator that chooses the mode.

- ``report``: :class:`IndexReport`, what a run reports;
- ``context``: :class:`RunContext` (settings, IRI minter, phases and timings, progress, report, the
  run record), the files' transaction :class:`Plan`, and the :class:`WriteMode` protocol;
- ``batch``, ``refresh``, ``stream``, ``reindex``, ``child``: the write modes (one batch, the live
  refresh, the streamed first index, the streamed re-index, the first index in a child process);
- ``after_files``: history, copies, tiers, the secrets policy, caches, embeddings, vectors;
- ``run``: :class:`IndexRun`, the orchestrator, and :func:`index_project`.

The modes import ``context`` (and what they build on); ``run`` imports the modes; nothing imports
``run`` but this module, so the imports form no ring (``tests/test_architecture.py`` checks it).
"""

from acms.service.indexing.report import IndexReport
from acms.service.indexing.run import IndexRun, index_project

__all__ = ["IndexReport", "IndexRun", "index_project"]
