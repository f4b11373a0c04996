"""The one place ``acms serve`` turns an error into an HTTP answer: the status is the error's own
(``AcmsError.http_status``: its code's row in :data:`acms.errors.CODES`, or a protocol error's status),
500 for anything acms did not raise on purpose; ``/v0/render`` answers with the v0 error envelope, the
SPARQL routes with one line of text."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from starlette.responses import JSONResponse, PlainTextResponse

from acms.assembly.protocol import envelope_for
from acms.errors import CODES, AcmsError, ErrorCode, Unavailable, environment_error

log = logging.getLogger("acms.server")

CLI_HINT = "pass --allow-service to permit it"
STATUS_BY_CODE: Mapping[ErrorCode, int] = {code: spec.http_status for code, spec in CODES.items()}  # the table's column


def status_of(exc: BaseException) -> int:
    return exc.http_status if isinstance(exc, AcmsError) else 500


def for_client(message: str) -> str:
    """A refusal as an HTTP client should read it: the guard's hint names the CLI flag; the server's
    flag of the same name is ``acms serve --allow-service``."""
    return message.replace(CLI_HINT, "start the server with --allow-service to permit it")


def plain_error(exc: AcmsError) -> PlainTextResponse:
    """A SPARQL or Graph Store route's refusal: one line of text with the error's status."""
    return PlainTextResponse(for_client(exc.message) + "\n", status_code=status_of(exc))


def envelope_error(exc: BaseException, request_id: str) -> JSONResponse:
    """A JSON route's failure as the v0 error envelope (a full disk or a read-only index said as such;
    anything unexpected logged, and answered INTERNAL)."""
    exc = environment_error(exc) or exc
    if not isinstance(exc, AcmsError):
        log.error("request %s failed", request_id, exc_info=exc)
    return JSONResponse(envelope_for(exc, request_id), status_code=status_of(exc))


def health_error(exc: AcmsError) -> JSONResponse:
    """``/health`` when the index does not answer: the server is up and the index is not, whatever the
    cause, so a load balancer reads it as unavailable."""
    return JSONResponse({"status": "error", "message": exc.message}, status_code=Unavailable.status)
