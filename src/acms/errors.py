"""One error hierarchy and one code table; every message is meant for the user.

    AcmsError                     INTERNAL           exit 1
    ├── UsageError                INVALID_REQUEST    exit 2   bad input: a missing path, a bad binding
    │   ├── PathNotFound
    │   ├── NotADirectory
    │   ├── InvalidRequest        INVALID_REQUEST             a render_request.v0 that fails the schema
    │   ├── BudgetTooSmall        BUDGET_TOO_SMALL            not even one useful block fits
    │   └── ProtocolError         INVALID_REQUEST             an HTTP request ``acms serve`` refuses; its ``status``:
    │       ├── Forbidden                            (403)    an update to a server started without --allow-update
    │       ├── NotFound                             (404)    no such graph
    │       ├── MethodNotAllowed                     (405)    a write to the read-only default graph
    │       ├── NotAcceptable                        (406)    no format the client accepts
    │       ├── PayloadTooLarge                      (413)    a body or a result over its limit
    │       ├── UnsupportedMediaType                 (415)    a body in a format the route does not read
    │       └── Unavailable                          (503)    stopped at the server's deadline
    ├── QueryError                QUERY_ERROR        exit 3   a query that cannot be run
    │   ├── QueryRejected         QUERY_REJECTED              refused before parsing (SERVICE, too long, too deep)
    │   ├── QueryLimitExceeded    QUERY_ERROR                 passed its time limit or memory bound and was stopped
    │   └── QuerySyntaxError      QUERY_SYNTAX                the SPARQL parser said no
    ├── StoreError                STORE_ERROR        exit 4   the on-disk store
    │   ├── StoreLocked           STORE_LOCKED                another process is writing to it
    │   ├── StoreReadOnly                                     a writer on an index it cannot write (readers work)
    │   └── StoreMissing          STORE_MISSING               nothing indexed yet
    ├── ValidationFailed          VALIDATION_FAILED  exit 5   a batch or the store does not conform to the shapes
    ├── ConfigError               CONFIG_ERROR       exit 6   a bad acms.toml / ACMS_* / flag value, a bad strategy folder
    ├── ProviderError             PROVIDER_ERROR     exit 7   the embedding provider failed
    │   └── ProviderTimeout       PROVIDER_TIMEOUT            it did not answer in time, retries included
    ├── ModelMismatch             MODEL_MISMATCH     exit 7   the query would be embedded by another model than the index's
    ├── GitError                  GIT_ERROR          exit 1   git failed while reading history
    ├── TiersInconsistent         TIERS_INCONSISTENT exit 1   an entity sits in two tiers (``acms tiers --check``)
    └── Unsatisfied               NOT_CONFORMING     exit 1   a check the command ran and reported found problems (``acms validate``)
        └── ExtensionRejected     EXTENSION_REJECTED exit 6   an ontology extension fails its checks (``acms ontology check``)

``DEADLINE_EXCEEDED`` belongs to the v0 contract; acms itself cuts late phases and reports them in
the reply's warnings instead of failing. ``CODES`` is the one table: each code's exit code (the CLI), HTTP status (``acms serve``), whether a
client may retry, how often, and the retry options offered (the v0 error envelope of
:mod:`acms.assembly.protocol` and MCP tool errors). A class names its code; its ``exit_code`` comes
from the table. Third-party errors are converted where they are seen (store adapter, query layer,
validation); the CLI has one boundary that prints ``message`` and exits with ``exit_code``.

Every option's hint names something that exists: a strategy (``strategy=NAME``), a CLI command and
its flags (``acms reindex --embeddings``), or a request field (``budgets.time_ms``); a test checks it.
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum


class ErrorCode(str, Enum):
    INVALID_REQUEST = "INVALID_REQUEST"
    BUDGET_TOO_SMALL = "BUDGET_TOO_SMALL"
    DEADLINE_EXCEEDED = "DEADLINE_EXCEEDED"
    PROVIDER_TIMEOUT = "PROVIDER_TIMEOUT"
    PROVIDER_ERROR = "PROVIDER_ERROR"
    STORE_MISSING = "STORE_MISSING"
    STORE_LOCKED = "STORE_LOCKED"
    STORE_ERROR = "STORE_ERROR"
    MODEL_MISMATCH = "MODEL_MISMATCH"
    QUERY_ERROR = "QUERY_ERROR"
    QUERY_REJECTED = "QUERY_REJECTED"
    QUERY_SYNTAX = "QUERY_SYNTAX"
    VALIDATION_FAILED = "VALIDATION_FAILED"
    CONFIG_ERROR = "CONFIG_ERROR"
    GIT_ERROR = "GIT_ERROR"
    TIERS_INCONSISTENT = "TIERS_INCONSISTENT"
    NOT_CONFORMING = "NOT_CONFORMING"
    EXTENSION_REJECTED = "EXTENSION_REJECTED"
    INTERNAL = "INTERNAL"


@dataclass(frozen=True)
class CodeSpec:
    """How one code reaches each interface: exit code, HTTP status, retry advice."""

    exit_code: int
    http_status: int
    retriable: bool
    max_attempts: int
    options: tuple[tuple[str, str], ...]  # (action, hint)


SIMPLE_STRATEGY = "simple-keyword"  # needs no embedding provider: the retry when the provider fails
_RETURN_MINIMAL = ("return_minimal", "return what we have now")
_KEYWORD = ("retry_with_strategy", f"strategy={SIMPLE_STRATEGY} (no embedding provider needed)")
_FIX = ("fix_request", "correct the named field and resend")
_REPORT = ("report", "a bug in acms; quote the request_id")

CODES: Mapping[ErrorCode, CodeSpec] = {
    ErrorCode.INVALID_REQUEST: CodeSpec(2, 400, False, 1, (_FIX,)),
    ErrorCode.BUDGET_TOO_SMALL: CodeSpec(2, 422, True, 2, (
        ("retry_with_budget", "budgets.tokens_max >= N"),
        ("return_minimal", "privacy_mode=block or lod=[macro] for ids and outlines only"),
    )),
    ErrorCode.DEADLINE_EXCEEDED: CodeSpec(1, 504, True, 2, (
        ("retry_with_time_budget", "raise budgets.time_ms"),
        ("retry_with_reduced_scope", "lower filters.k or breadth"),
        _RETURN_MINIMAL,
    )),
    ErrorCode.PROVIDER_TIMEOUT: CodeSpec(7, 504, True, 2, (
        ("retry_same", "lower filters.k"), _KEYWORD, _RETURN_MINIMAL,
    )),
    ErrorCode.PROVIDER_ERROR: CodeSpec(7, 502, True, 2, (
        ("retry_same", "transient provider failure"), _KEYWORD,
    )),
    ErrorCode.STORE_MISSING: CodeSpec(4, 503, False, 1, (("run_index", "acms index <project>"),)),
    ErrorCode.STORE_LOCKED: CodeSpec(4, 503, True, 3, (
        ("retry_after", "another writer holds the index; retry in a few seconds"),
    )),
    ErrorCode.STORE_ERROR: CodeSpec(4, 500, False, 1, (("run_index", "acms index <project>"),)),
    ErrorCode.MODEL_MISMATCH: CodeSpec(7, 409, False, 1, (
        ("reindex_embeddings", "acms reindex --embeddings"), _KEYWORD,
    )),
    ErrorCode.QUERY_ERROR: CodeSpec(3, 400, False, 1, (_FIX,)),
    ErrorCode.QUERY_REJECTED: CodeSpec(3, 400, False, 1, (_FIX,)),
    ErrorCode.QUERY_SYNTAX: CodeSpec(3, 400, False, 1, (_FIX,)),
    ErrorCode.VALIDATION_FAILED: CodeSpec(5, 422, False, 1, (("validate", "acms validate"),)),
    ErrorCode.CONFIG_ERROR: CodeSpec(6, 500, False, 1, (("fix_config", "acms.toml, ACMS_* or --set NAME=VALUE"),)),
    ErrorCode.GIT_ERROR: CodeSpec(1, 500, False, 1, (_REPORT,)),
    ErrorCode.TIERS_INCONSISTENT: CodeSpec(1, 500, False, 1, (("rebalance", "acms tiers rebalance"),)),
    ErrorCode.NOT_CONFORMING: CodeSpec(1, 422, False, 1, (("validate", "acms validate"),)),
    ErrorCode.EXTENSION_REJECTED: CodeSpec(6, 422, False, 1, (
        ("fix_extension", "fix the findings, then run acms ontology check <extension>"),)),
    ErrorCode.INTERNAL: CodeSpec(1, 500, False, 1, (_REPORT,)),
}


class AcmsError(Exception):
    """Base of every error acms raises on purpose; ``code`` names its row in ``CODES``. ``reported``: the
    command already printed the verdict this error ends with, so an interface adds no error document."""

    code: ErrorCode = ErrorCode.INTERNAL
    exit_code = CODES[ErrorCode.INTERNAL].exit_code
    reported = False

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls.exit_code = CODES[cls.code].exit_code

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    @property
    def spec(self) -> CodeSpec:
        return CODES[self.code]

    @property
    def http_status(self) -> int:
        """The status ``acms serve`` answers with: its code's, unless the error carries its own."""
        return self.spec.http_status


class UsageError(AcmsError):
    code = ErrorCode.INVALID_REQUEST


class PathNotFound(UsageError):
    pass


class NotADirectory(UsageError):
    pass


class InvalidRequest(UsageError):
    """The request does not match the schema; ``errors`` holds one ``field: problem`` per error."""

    def __init__(self, errors: list[str]) -> None:
        shown = "; ".join(errors[:3]) + (f" (and {len(errors) - 3} more)" if len(errors) > 3 else "")
        super().__init__(f"invalid render_request.v0: {shown}")
        self.errors = errors
        self.field = errors[0].split(":", 1)[0] if errors else ""


class BudgetTooSmall(UsageError):
    """Not even the preamble and one useful block fit; ``minimum`` is a budget that would."""

    code = ErrorCode.BUDGET_TOO_SMALL

    def __init__(self, budget: int, minimum: int) -> None:
        super().__init__(
            f"a budget of {budget} tokens is too small: the smallest useful context needs "
            f"{minimum} tokens (use a budget of at least {minimum})"
        )
        self.budget = budget
        self.minimum = minimum


class ProtocolError(UsageError):
    """An HTTP-level refusal of ``acms serve`` (one line of ``text/plain``, or the v0 envelope at
    ``/v0/render``); ``status`` is the HTTP status, data of each subclass (400 here)."""

    status = 400

    @property
    def http_status(self) -> int:
        return self.status

    def __reduce__(self) -> tuple[object, ...]:  # crosses from a server's worker process
        return (type(self), (self.message,))


class Forbidden(ProtocolError):
    status = 403


class NotFound(ProtocolError):
    status = 404


class MethodNotAllowed(ProtocolError):
    status = 405


class NotAcceptable(ProtocolError):
    status = 406


class PayloadTooLarge(ProtocolError):
    status = 413


class UnsupportedMediaType(ProtocolError):
    status = 415


class Unavailable(ProtocolError):
    status = 503


class QueryError(AcmsError):
    code = ErrorCode.QUERY_ERROR


class QueryRejected(QueryError):
    code = ErrorCode.QUERY_REJECTED


class QuerySyntaxError(QueryError):
    code = ErrorCode.QUERY_SYNTAX


class QueryLimitExceeded(QueryError):
    """A query's process was stopped at its time limit or memory bound; ``limit`` is ``time`` or ``memory``."""

    def __init__(self, message: str, limit: str) -> None:
        super().__init__(message)
        self.limit = limit


class StoreError(AcmsError):
    code = ErrorCode.STORE_ERROR


_UNKNOWN_FUNCTION = re.compile(r"The custom function (<[^>]*>) is not supported")


def query_failed(exc: Exception) -> AcmsError:
    """What a query's failure in the engine (``OSError``, ``RuntimeError``) is: a call of a function acms
    does not define is the query's fault (exit 3, HTTP 400), anything else the store's."""
    unknown = _UNKNOWN_FUNCTION.search(str(exc))
    if unknown:
        return QueryError(f"the query calls {unknown.group(1)}, a function acms does not define "
                          "(queries can call fn:tokenCount(?text))")
    return StoreError(f"query failed: {exc}")


class StoreLocked(StoreError):
    code = ErrorCode.STORE_LOCKED


class StoreMissing(StoreError):
    code = ErrorCode.STORE_MISSING


class StoreReadOnly(StoreError):
    """The index cannot be written here (a read-only mount, no write permission); readers need no
    write access, so only a write (``acms index``, a refresh, ``ontology add``) says this."""


class ValidationFailed(AcmsError):
    """A batch (or the whole store) violates the shapes; ``report`` holds one line per violation."""

    code = ErrorCode.VALIDATION_FAILED

    def __init__(self, message: str, report: list[str] | None = None) -> None:
        super().__init__(message)
        self.report = report or []


class ConfigError(AcmsError):
    code = ErrorCode.CONFIG_ERROR


class ProviderError(AcmsError):
    code = ErrorCode.PROVIDER_ERROR


class ProviderTimeout(ProviderError):
    code = ErrorCode.PROVIDER_TIMEOUT


class ModelMismatch(AcmsError):
    code = ErrorCode.MODEL_MISMATCH


class GitError(AcmsError):
    code = ErrorCode.GIT_ERROR


class TiersInconsistent(AcmsError):
    code = ErrorCode.TIERS_INCONSISTENT


class Unsatisfied(AcmsError):
    """A check that ran to its end found problems; its report is the command's output, this error
    carries the exit code."""

    code = ErrorCode.NOT_CONFORMING
    reported = True


class ExtensionRejected(Unsatisfied):
    code = ErrorCode.EXTENSION_REJECTED


_FULL = {errno.ENOSPC: "the disk is full", errno.EDQUOT: "the disk quota is used up",
         errno.EFBIG: "the file would pass the file system's (or the process's) size limit"}
_DENIED = {errno.EROFS, errno.EACCES, errno.EPERM}


def environment_error(exc: BaseException) -> AcmsError | None:
    """A write the machine refused (a full disk, a read-only file system, no permission) as a
    one-line error naming the file; ``None`` for anything else. Every writer of acms writes a file
    whole or not at all (a partial file then ``os.replace``, a store transaction), so the message
    can say that what was there is kept."""
    if not isinstance(exc, OSError):
        return None
    code = exc.errno if exc.errno is not None else next(  # pyoxigraph's OSError names it only in its text
        (number for number in (*_FULL, *_DENIED) if os.strerror(number) in str(exc)), None)
    if code is None:
        return None
    where = f" writing {exc.filename}" if exc.filename else ""
    if code in _FULL:
        return StoreError(f"{os.strerror(code).lower()}{where}: {_FULL[code]}; nothing was "
                          "half-written (the files as they were are kept): free some space and run it again")
    if code in _DENIED:
        target = f" {exc.filename}" if exc.filename else ""
        return StoreReadOnly(f"cannot write{target}: {os.strerror(code).lower()} (a read-only index is "
                             "readable while its caches are current; writing it needs write access)")
    return None


def code_of(exc: BaseException) -> ErrorCode:
    """The code an exception travels as: its own, or INTERNAL for anything acms did not raise on purpose."""
    return exc.code if isinstance(exc, AcmsError) else ErrorCode.INTERNAL
