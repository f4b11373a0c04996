"""How far the corpus has moved from the one the LSA model was fitted on, and when to fit it again.

A live index folds the fragments of every edit into the model fitted at the first index: cheap, but the
vocabulary and term weights stay the fit's, so retrieval drifts as the project changes. Fitting again
costs a first embedding (every vector recomputed: a fit of 4-6 s and ~2 s of folding a standard
library, plus writing the vectors), so it is done only when the fragments folded since the fit reach
``REFIT_SHARE`` of the fragments the index held at the fit, never on every edit.

Measured (``bench/lsa_drift.py``: fit on the first part of a corpus grown in five orders, fold the rest,
vector-only MRR of docstring queries against a full fit; the standard library and scipy): with 25 %
folded the MRR is 0.991 of a full fit on both (a refit that differs only by its seed moves it up to
1.7 %); at 43 % the standard library's falls to 0.975. Neither the out-of-vocabulary share of the
documents nor of the queries predicted the loss better than the folded share. The count here is a
running sum of what each run folded, so a fragment edited twice counts twice: it errs towards an
earlier refit.

A refit is a write as long as a first embedding, so it is kept out of the runs a read waits for: a live
refresh (``Index.refresh``: a read's, a watcher's) folds on past ``REFIT_SHARE`` and leaves the refit
due; ``acms index`` fits again when it is, and so does a watcher once the project has been quiet for a
while (:mod:`acms.service.watch`), outside the writer's lock but for the landing
(:mod:`acms.retrieval.refit_ahead`). Only past ``REFIT_CAP`` does a refresh fit again itself (a server that
does not watch, whose every write is a read's): at 43 % folded the measured MRR was still 0.975 of a
full fit's.

The count lives beside the caches (``cache/lsa-drift.json``), for one model id: a lost count restarts
from zero, which only delays a refit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from acms.paths import write_whole

__all__ = ["REFIT_CAP", "REFIT_SHARE", "Drift"]

REFIT_SHARE = 0.25  # fragments folded since the fit, per fragment the index held then
REFIT_CAP = 0.5  # past this share a live refresh fits again too, rather than leave the refit due
FILE = "lsa-drift.json"


@dataclass
class Drift:
    model_id: str
    fitted_on: int  # searchable fragments when the model was fitted (and every vector made with it)
    folded: int = 0  # fragments folded in since

    def due(self, more: int = 0, share: float = REFIT_SHARE) -> bool:
        """Whether folding ``more`` fragments would take the drift to ``share``."""
        return (self.folded + more) / max(1, self.fitted_on) >= share

    @classmethod
    def pending(cls, directory: Path) -> bool:
        """Whether the count beside the caches says a refit is due (whichever model it counts for: the run
        that fits again checks it against the graph's)."""
        counted = cls._read(directory)
        return counted is not None and counted.due()

    @classmethod
    def load(cls, directory: Path, model_id: str) -> Drift | None:
        """The count for ``model_id``; None when there is none (or it is another model's)."""
        counted = cls._read(directory)
        return counted if counted is not None and counted.model_id == model_id else None

    @classmethod
    def _read(cls, directory: Path) -> Drift | None:
        try:
            data = json.loads((directory / FILE).read_text(encoding="utf-8"))
            return cls(str(data["model_id"]), int(data["fitted_on"]), int(data["folded"]))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def save(self, directory: Path) -> None:
        """Whole or not at all; where it cannot be written the old count stays (a later refit, no harm)."""
        write_whole(directory / FILE, json.dumps({"model_id": self.model_id, "fitted_on": self.fitted_on,
                                                  "folded": self.folded}))
