"""One error hierarchy; every message is meant for the user, every class carries its exit code.

    AcmsError (exit 1)
    ├── UsageError (2)            bad input: a missing path, an unknown saved query, a bad binding
    │   ├── PathNotFound
    │   └── NotADirectory
    ├── QueryError (3)            a query that cannot be run
    │   ├── QueryRejected         refused before parsing (SERVICE, too long, too deeply nested)
    │   └── QuerySyntaxError      the SPARQL parser said no
    ├── StoreError (4)            the on-disk store
    │   ├── StoreLocked           another process is writing to it
    │   └── StoreMissing          nothing indexed yet
    ├── ValidationFailed (5)      a batch or the store does not conform to the SHACL shapes
    ├── ConfigError (6)           a bad acms.toml / [tool.acms] / ACMS_* value, a bad strategy folder
    ├── ProviderError (7)         the embedding provider failed (acms.embeddings.base)
    │   └── ProviderTimeout       it did not answer in time, retries included
    └── ModelMismatch (7)         a query embedded by another model than the index's (acms.retrieval)

Third-party errors are converted where they are seen (store adapter, query layer, validation); the
CLI has one boundary that prints ``message`` and exits with ``exit_code``.
"""

from __future__ import annotations


class AcmsError(Exception):
    """Base of every error acms raises on purpose."""

    exit_code = 1
    code = "INTERNAL"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UsageError(AcmsError):
    exit_code = 2
    code = "INVALID_REQUEST"


class PathNotFound(UsageError):
    pass


class NotADirectory(UsageError):
    pass


class QueryError(AcmsError):
    exit_code = 3
    code = "QUERY_ERROR"


class QueryRejected(QueryError):
    code = "QUERY_REJECTED"


class QuerySyntaxError(QueryError):
    code = "QUERY_SYNTAX"


class StoreError(AcmsError):
    exit_code = 4
    code = "STORE_ERROR"


class StoreLocked(StoreError):
    code = "STORE_LOCKED"


class StoreMissing(StoreError):
    code = "STORE_MISSING"


class ValidationFailed(AcmsError):
    """A batch (or the whole store) violates the shapes; ``report`` holds one line per violation."""

    exit_code = 5
    code = "VALIDATION_FAILED"

    def __init__(self, message: str, report: list[str] | None = None) -> None:
        super().__init__(message)
        self.report = report or []


class ConfigError(AcmsError):
    exit_code = 6
    code = "CONFIG_ERROR"
