"""Ontology extensions of one index: list, add, remove, describe a term; ``check`` needs no index."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from acms.service.host import Host

if TYPE_CHECKING:
    from acms.ontology.check import CheckReport
    from acms.ontology.service import Change, Description, Loaded


@dataclass
class Checked:
    """One extension checked without loading it anywhere."""

    name: str
    version: str
    namespace: str
    report: CheckReport

    @property
    def ok(self) -> bool:
        return self.report.ok


def check(ref: str, root: Path, *, reasoner: bool = True) -> Checked:
    """Every check over the extension ``ref`` (a shipped name or a folder, relative to ``root``)."""
    from acms.ontology.check import check_extension
    from acms.ontology.extensions import load_extension

    ext = load_extension(ref, root)
    return Checked(ext.name, ext.version, ext.namespace, check_extension(ext, reasoner=reasoner))


class Ontologies:
    """``index.ontology``: the ontologies of the index (UKO and extensions)."""

    def __init__(self, host: Host) -> None:
        self._host = host

    def list(self) -> list[Loaded]:
        from acms.ontology.service import list_ontologies

        with self._host.session.reading() as store:
            return list_ontologies(store, self._host.settings, self._host.root)

    def add(self, ref: str, *, reasoner: bool = True) -> Change:
        """Check ``ref``, register it in the project's config, load it and run its rules (one transaction)."""
        from acms.ontology.service import add_extension

        with self._host.session.writing() as store:
            return add_extension(store, self._host.settings, self._host.root, ref, reasoner=reasoner)

    def remove(self, name: str) -> Change:
        from acms.ontology.service import remove_extension

        with self._host.session.writing() as store:
            return remove_extension(store, self._host.settings, self._host.root, name)

    def describe(self, term: str) -> Description:
        from acms.ontology.service import describe

        with self._host.session.reading() as store:
            return describe(store, term)

    @staticmethod
    def check(ref: str, root: Path, *, reasoner: bool = True) -> Checked:
        return check(ref, root, reasoner=reasoner)
