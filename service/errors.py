"""Every error answer has one shape: {"error": {"code", "message", "detail": [{"path", "message"}]}}."""
from __future__ import annotations

import json
import logging
import re

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse as _JSONResponse
from sqlalchemy.exc import DataError, OperationalError
from starlette.exceptions import HTTPException

log = logging.getLogger(__name__)
ID = re.compile(r"[0-9a-f]{1,64}")


class JSONResponse(_JSONResponse):
    """Error answers quote the request (paths, names, values); \\u escapes keep them JSON text even
    when the request held a lone surrogate, which no UTF-8 encoder takes."""

    def render(self, content) -> bytes:
        return json.dumps(content, separators=(",", ":")).encode("ascii")


class ApiError(HTTPException):
    """An HTTPException so that FastAPI passes it through unchanged even from body parsing."""

    def __init__(self, status: int, code: str, message: str, detail: list[dict] | None = None,
                 headers: dict | None = None):
        super().__init__(status, message, headers)
        self.status, self.code, self.message, self.problems = status, code, message, detail or []


def error_body(code: str, message: str, detail: list[dict] | None = None) -> dict:
    return {"error": {"code": code, "message": message, "detail": detail or []}}


def not_found(what: str, ident: str) -> ApiError:
    return ApiError(404, "not_found", f"{what} {ident[:100]!r} not found")


def checked_id(what: str, ident: str) -> str:
    """A job or model id as the service makes them (lowercase hex), or 404 before any database call:
    an id of any other form names nothing, and some (a NUL byte) the database would refuse."""
    if not ID.fullmatch(ident):
        raise not_found(what, ident)
    return ident


def join_path(prefix: str, path: str) -> str:
    """Paths as the core writes them: 'objects[2].markerNumbers', '$' for the whole document."""
    if not prefix or prefix == "$":
        return path
    if path in ("", "$"):
        return prefix
    return prefix + path if path.startswith("[") else f"{prefix}.{path}"


def json_path(loc) -> str:
    """('body', 'model', 'nodes', 0) -> 'model.nodes[0]'; ('query', 'limit') -> 'query.limit'."""
    head, *rest = loc or ("body",)
    path = "" if head == "body" else str(head)
    for part in rest:
        path = join_path(path, f"[{part}]" if isinstance(part, int) else str(part))
    return path or "$"


def install(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError):
        return JSONResponse(error_body(exc.code, exc.message, exc.problems), exc.status, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError):
        detail = [{"path": json_path(e.get("loc")), "message": e.get("msg", "")} for e in exc.errors()]
        return JSONResponse(error_body("invalid_request", "the request does not match the API schema", detail), 422)

    @app.exception_handler(HTTPException)
    async def _http(_: Request, exc: HTTPException):
        if exc.status_code == 400 and isinstance(exc.__cause__, RecursionError):  # json.loads past ~1000 levels
            return JSONResponse(error_body("limit_exceeded", "the body is nested too deeply to be read "
                                           "(MBSERVE_MAX_NESTING_DEPTH)", [{"path": "$", "message": str(exc.__cause__)}]),
                                422)
        if exc.status_code == 400:  # FastAPI's answer to a body it cannot decode: malformed like any other
            return JSONResponse(error_body("invalid_request", "the body is not a JSON document (UTF-8)",
                                           [{"path": "$", "message": str(exc.detail)}]), 422)
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return JSONResponse(error_body(code, str(exc.detail)), exc.status_code, headers=exc.headers)

    @app.exception_handler(DataError)
    async def _unstorable(_: Request, exc: DataError):  # ids are checked at the edge; this is the net below
        log.warning("the database refused a value of a request: %s", exc)
        return JSONResponse(error_body("invalid_request", "a value of the request cannot be stored or looked up",
                                       [{"path": "$", "message": str(exc.orig).splitlines()[0]}]), 422)

    @app.exception_handler(OperationalError)
    async def _database_down(_: Request, exc: OperationalError):
        log.warning("database unavailable: %s", exc)
        return JSONResponse(error_body("database_unavailable", "the database is not reachable; try again"),
                            503, headers={"Retry-After": "5"})
