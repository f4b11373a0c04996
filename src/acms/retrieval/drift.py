"""How far the corpus has moved from the one the LSA model was fitted on, and when to fit it again.

A live index folds the fragments of every edit into the model fitted at the first index: cheap, but the
vocabulary and term weights stay the fit's, so retrieval drifts as the project changes. Fitting again
costs a first embedding (every vector recomputed: ~20 s a standard library), so it is done only when the
fragments folded since the fit pass ``REFIT_SHARE`` of the fragments the model was fitted over, a
threshold measured in ``bench/lsa_drift.py`` (see ``REFIT_SHARE``), never on every edit.

The count lives beside the caches (``cache/lsa-drift.json``), for one model id: a lost count restarts
from zero, which only delays a refit.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["REFIT_SHARE", "Drift"]

# Folded fragments (since the fit) per fragment the model was fitted over, past which the next run fits
# the model again. bench/lsa_drift.py: see the figures in docs/DESIGN.md ("Refitting the LSA model").
REFIT_SHARE = 0.5
FILE = "lsa-drift.json"


@dataclass
class Drift:
    model_id: str
    fitted_on: int  # searchable fragments when the model was fitted (and every vector made with it)
    folded: int = 0  # fragments folded in since

    @property
    def share(self) -> float:
        return self.folded / max(1, self.fitted_on)

    def due(self, more: int) -> bool:
        """Whether folding ``more`` fragments would take the drift past ``REFIT_SHARE``."""
        return (self.folded + more) / max(1, self.fitted_on) > REFIT_SHARE

    @classmethod
    def load(cls, directory: Path, model_id: str) -> Drift | None:
        """The count for ``model_id``; None when there is none (or it is another model's)."""
        try:
            data = json.loads((directory / FILE).read_text(encoding="utf-8"))
            if data.get("model_id") == model_id:
                return cls(model_id, int(data["fitted_on"]), int(data["folded"]))
        except (OSError, ValueError, KeyError, TypeError):
            pass
        return None

    def save(self, directory: Path) -> None:
        """Atomically; a directory that cannot be written keeps the old count (a later refit, no harm)."""
        target = directory / FILE
        tmp = target.with_name(f".{FILE}.{os.getpid()}.tmp")
        try:
            directory.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps({"model_id": self.model_id, "fitted_on": self.fitted_on,
                                       "folded": self.folded}), encoding="utf-8")
            os.replace(tmp, target)
        except OSError:
            tmp.unlink(missing_ok=True)
