"""The LSA model is fitted again only when the fragments folded since its fit pass REFIT_SHARE of those
it was fitted over: edits fold into the model they found, a project that changed enough gets a new one."""

from __future__ import annotations

import shutil
from pathlib import Path

from acms.api import Index
from acms.retrieval.drift import REFIT_SHARE, Drift
from acms.retrieval.embedding_store import active_model

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def model_id(idx: Index) -> str:
    with idx.reading() as store:
        model = active_model(store)
        assert model is not None
        return model.model_id


def functions(n: int, prefix: str) -> str:
    return "\n\n".join(f"def {prefix}_{i}(value):\n    \"\"\"Scale the {prefix} value {i}.\"\"\"\n"
                       f"    return value * {i} + len('{prefix}')\n" for i in range(n))


def test_edits_fold_into_the_model_until_the_drift_passes_the_share(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    shutil.copytree(FIXTURES / "sample_project", root)
    (root / "pkg" / "numbers.py").write_text(functions(40, "number"))
    with Index.open(root, record_use=False) as idx:
        idx.index()
        first = model_id(idx)
        drift = Drift.load(idx.layout.cache, first)
        assert drift is not None and drift.folded == 0 and drift.fitted_on > 40

        (root / "pkg" / "util.py").write_text((root / "pkg" / "util.py").read_text() + "\n\ndef extra():\n    return 1\n")
        report = idx.refresh()
        assert report is not None and report.embedded >= 1
        drift = Drift.load(idx.layout.cache, first)
        assert model_id(idx) == first and drift is not None and 0 < drift.folded <= report.embedded
        folded = drift.folded

        # lines inserted above functions: their fragments keep their IRIs and vectors, only the
        # module's own text is embedded again
        util = root / "pkg" / "numbers.py"
        util.write_text("# a comment\n# another\n" + util.read_text())
        report = idx.refresh()
        assert report is not None and 1 <= report.embedded <= 2
        drift = Drift.load(idx.layout.cache, first)
        assert drift is not None and drift.folded - folded <= 2  # the module's own text changed

        # a new module of more fragments than REFIT_SHARE of the fit: the next run fits again
        (root / "pkg" / "letters.py").write_text(functions(int(drift.fitted_on * REFIT_SHARE) + 5, "letter"))
        report = idx.refresh()
        assert report is not None
        second = model_id(idx)
        assert second != first
        refit = Drift.load(idx.layout.cache, second)
        assert refit is not None and refit.folded == 0 and refit.fitted_on == report.embedded
        assert idx.search("scale the letter value", "vector", 3).hits  # the new model's vectors answer


class _FailAfter:
    """A progress that raises as ``phase`` ends: the run rolls the store back (its caches stay as written)."""

    def __init__(self, phase: str) -> None:
        self.phase = phase

    def start(self, phase: str, total: int | None = None) -> None:
        pass

    def update(self, done: int, total: int | None = None) -> None:
        pass

    def finish(self, phase: str) -> None:
        if phase == self.phase:
            raise RuntimeError(f"after {phase}")


def test_a_refit_that_does_not_land_leaves_the_old_model_usable(tmp_path: Path) -> None:
    """The new model is written beside the caches before the run lands; a run that then fails leaves the
    graph on the old model, which queries and the next run still find (kept under its id)."""
    root = tmp_path / "proj"
    shutil.copytree(FIXTURES / "sample_project", root)
    with Index.open(root, record_use=False) as idx:
        idx.index()
        first = model_id(idx)
        fitted = Drift.load(idx.layout.cache, first)
        assert fitted is not None
        (root / "pkg" / "letters.py").write_text(functions(int(fitted.fitted_on * REFIT_SHARE) + 5, "letter"))
        try:
            idx.refresh(progress=_FailAfter("vectors"))  # the new model landed, the graph not
        except RuntimeError:
            pass
        else:
            raise AssertionError("the run did not fail")
    with Index.open(root, mode="read", refresh="off") as reader:  # rolled back; the old model still answers
        assert model_id(reader) == first and reader.search("parse header", "vector", 3).hits
    with Index.open(root, record_use=False) as idx:
        report = idx.refresh()
        assert report is not None and model_id(idx) != first
        assert idx.search("scale the letter value", "vector", 3).hits
