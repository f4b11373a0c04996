"""What an operation group needs of the index it works on: the façade (``acms.Index``) provides it, and
the groups under :mod:`acms.service` are typed against this, not against the façade above them."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from acms.config import Settings
from acms.service.session import RemoteTarget, Session
from acms.store.layout import IndexLayout


class Host(Protocol):
    root: Path
    settings: Settings
    layout: IndexLayout
    remote: RemoteTarget | None
    session: Session

    @property
    def project_name(self) -> str: ...

    def freshen(self) -> tuple[str, ...]: ...
