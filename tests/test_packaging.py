"""The wheel ships ontology/, shapes/, queries/, languages/, the HTML view's assets and the licence; the assets resolve;
the public surface is honest."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_wheel_contains_every_asset(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp_path), str(ROOT)],
        check=True, capture_output=True,
    )
    wheel = next(tmp_path.glob("acms-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {
        f"acms/_assets/{p.relative_to(ROOT).as_posix()}"
        for folder in ("ontology", "shapes", "queries", "languages")
        for p in (ROOT / folder).rglob("*")
        if p.is_file()
    }
    assert expected and expected <= names, sorted(expected - names)
    # the HTML view's page and vendored JavaScript (with their licences), and the licence itself
    view = {f"acms/export/{p.relative_to(ROOT / 'src/acms/export').as_posix()}"
            for folder in ("page", "vendor") for p in (ROOT / "src/acms/export" / folder).rglob("*") if p.is_file()}
    assert {"acms/export/vendor/cytoscape.min.js", "acms/export/vendor/LICENSE.cytoscape"} <= view <= names
    assert any(n.endswith(".dist-info/licenses/LICENSE") or n.endswith(".dist-info/LICENSE") for n in names)
