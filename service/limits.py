"""Limits on user input that the core cannot know about: request size, document size, stored rows."""
from __future__ import annotations

import asyncio
import math
import threading
import time

import multibody
from store.config import Settings

from multibody.limits import MAX_NESTING_DEPTH, json_shape
from multibody.schema import NODE_COORDINATES

from .errors import ApiError, JSONResponse, error_body, join_path

LISTS = ("nodes", "objects", "markers", "loads", "sensors", "motions")
EXPRESSION_KEYS = ("position", "positionDot", "positionDotDot", "velocity", "velocityDot", "acceleration")


class BodyLimit:
    """ASGI middleware: 413 for a body larger than the limit, whether or not Content-Length says so.

    The rest of the body is read and dropped before the answer (up to DRAIN_FACTOR times the
    limit): a server that closes a connection with unread data makes the client's TCP stack
    reset it, and the client never reads the 413."""
    DRAIN_FACTOR = 10

    def __init__(self, app, max_bytes: int):
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            await self._drain(receive, 0)
            return await self._reject(scope, receive, send)
        seen = 0

        async def counted():
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.max_bytes:
                if message.get("more_body"):
                    await self._drain(receive, seen)
                raise self._error()
            return message
        await self.app(scope, counted, send)

    async def _drain(self, receive, seen: int) -> None:
        while seen <= self.DRAIN_FACTOR * self.max_bytes:
            message = await receive()
            seen += len(message.get("body", b""))
            if message["type"] != "http.request" or not message.get("more_body"):
                return

    def _error(self) -> ApiError:
        return ApiError(413, "request_too_large", f"the request body exceeds the limit of {self.max_bytes} bytes "
                        "(MBSERVE_MAX_REQUEST_BYTES)", headers={"Connection": "close"})

    async def _reject(self, scope, receive, send):
        e = self._error()
        await JSONResponse(error_body(e.code, e.message), e.status, headers=e.headers)(scope, receive, send)


def expression_limits(settings: Settings) -> multibody.ExpressionLimits:
    """The core's bounds on a document's expressions, named by their settings in messages."""
    return multibody.ExpressionLimits(
        max_motions=settings.max_motions, max_expressions=settings.max_expressions,
        max_cost=settings.max_expression_cost, max_seconds=settings.max_expression_seconds,
        names={"max_motions": "MBSERVE_MAX_MOTIONS", "max_expressions": "MBSERVE_MAX_EXPRESSIONS",
               "max_cost": "MBSERVE_MAX_EXPRESSION_COST", "max_seconds": "MBSERVE_MAX_EXPRESSION_SECONDS"})


class DisconnectWatch:
    """ASGI middleware: once a request's body is in, watches for the client going away and sets
    scope["mbserve.gone"] (a threading.Event), which validation polls (deps.ClientGone): the
    work of a request nobody waits for stops. The app's own later receive() gets the same message."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        gone = scope["mbserve.gone"] = threading.Event()
        after_body: asyncio.Future | None = None

        def seen(future: asyncio.Future) -> None:
            if not future.cancelled() and future.exception() is None and future.result()["type"] == "http.disconnect":
                gone.set()

        async def watched():
            nonlocal after_body
            if after_body is not None:
                return await asyncio.shield(after_body)
            message = await receive()
            if message["type"] == "http.disconnect":
                gone.set()
            elif not message.get("more_body"):
                after_body = asyncio.ensure_future(receive())
                after_body.add_done_callback(seen)
            return message
        try:
            await self.app(scope, watched, send)
        finally:
            if after_body is not None and not after_body.done():
                after_body.cancel()


def check_json(value, settings: Settings, prefix: str) -> None:
    """Before anything else reads a body: 422 for nesting over MBSERVE_MAX_NESTING_DEPTH
    (`limit_exceeded`) or a NaN/Infinity anywhere (`invalid_request`), each with its path."""
    depth = min(settings.max_nesting_depth, MAX_NESTING_DEPTH)
    shape = json_shape(value, depth, (prefix,) if prefix else ())
    detail = [{"path": p.path, "message": p.message} for p in ([shape.too_deep] if shape.too_deep else [])
              + shape.values]
    if shape.too_deep:
        raise ApiError(422, "limit_exceeded", f"the body is nested deeper than {depth} levels "
                       "(MBSERVE_MAX_NESTING_DEPTH)", detail)
    if detail:
        raise ApiError(422, "invalid_request", "the body holds values that JSON text cannot carry (NaN, Infinity, "
                       "numbers beyond 1.8e308, lone surrogates)", detail)


def _number(doc: dict, *keys: str):
    value = doc
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def check_model(doc: dict, settings: Settings, prefix: str = "", run: bool = True) -> None:
    """422 `limit_exceeded`, naming the limit, for a document the service will not store or, with
    `run`, not run (steps, load steps, sensor rows: settings a job's overrides may change)."""
    problems = []
    for keys, limit, name in ((("timeIntegration", "numberOfSteps"), settings.max_steps, "MBSERVE_MAX_STEPS"),
                              (("staticSolver", "numberOfLoadSteps"), settings.max_load_steps,
                               "MBSERVE_MAX_LOAD_STEPS")):
        value = _number(doc, "simulationSettings", *keys)
        if run and value is not None and value > limit:
            problems.append({"path": join_path(prefix, ".".join(("simulationSettings",) + keys)),
                             "message": f"{value:.6g}; the limit is {limit} ({name})"})
    for key in LISTS:
        items = doc.get(key)
        if isinstance(items, list) and len(items) > settings.max_items:
            problems.append({"path": join_path(prefix, key), "message": f"{len(items)} items; the limit is "
                             f"{settings.max_items} per list (MBSERVE_MAX_ITEMS)"})
    motions = doc.get("motions")
    for i, motion in enumerate(motions if isinstance(motions, list) else []):
        for key in EXPRESSION_KEYS:
            text = motion.get(key) if isinstance(motion, dict) else None
            if isinstance(text, str) and len(text) > settings.max_expression_chars:
                problems.append({"path": join_path(prefix, f"motions[{i}].{key}"),
                                 "message": f"{len(text)} characters; "
                                 f"the limit is {settings.max_expression_chars} (MBSERVE_MAX_EXPRESSION_CHARS)"})
    rows = stored_rows(doc) if run else None
    if rows is not None and rows > settings.max_sensor_rows:
        problems.append({"path": join_path(prefix, "simulationSettings"), "message": f"about {rows} stored sensor rows "
                         f"(steps x sensors); the limit is {settings.max_sensor_rows} (MBSERVE_MAX_SENSOR_ROWS)"})
    size = solution_bytes(doc) if run else None
    if size is not None and size > settings.max_result_bytes:
        problems.append({"path": join_path(prefix, "simulationSettings.solution.file"), "message": f"about {size} "
                         f"bytes of stored solution (rows x coordinates); the limit is {settings.max_result_bytes} "
                         "(MBSERVE_MAX_RESULT_BYTES): a longer solution.file.writePeriod"})
    if problems:
        raise ApiError(422, "limit_exceeded", "the model exceeds a limit of this service", problems)


def _rows(doc: dict, period_keys: tuple, default_period: float) -> int:
    settings = doc.get("simulationSettings") or {}
    if (doc.get("solve") or {}).get("type") == "Static":
        return int((settings.get("staticSolver") or {}).get("numberOfLoadSteps", 1)) + 1
    ti = settings.get("timeIntegration") or {}
    steps = int(ti.get("numberOfSteps", 100))
    end, start = float(ti.get("endTime", 1.0)), float(ti.get("startTime", 0.0))
    period = settings
    for key in period_keys:
        period = period.get(key) or {}
    period = float(period or default_period)
    per_period = math.ceil((end - start) / period) if period > 0 else steps
    return min(steps, per_period) + 2


def solution_bytes(doc: dict) -> int | None:
    """Bytes of the stored solution, when the job stores one: rows x (time, q, q̇, q̈) at least."""
    try:
        file = ((doc.get("simulationSettings") or {}).get("solution") or {}).get("file") or {}
        if file.get("write") is not True:
            return None
        coordinates = sum(int(node.get("numberOfODE2Coordinates") or 0) if node.get("nodeType") == "GenericODE2"
                          else NODE_COORDINATES.get(node.get("nodeType"), 0) for node in doc.get("nodes") or [])
        return _rows(doc, ("solution", "file", "writePeriod"), 0.01) * (1 + 3 * coordinates) * 8
    except (TypeError, ValueError, AttributeError, OverflowError, ZeroDivisionError):
        return None  # malformed: the core's validation names the problem


def stored_rows(doc: dict) -> int | None:
    """Sensor rows the solve will store: one per write period (at most one per step) plus start and end."""
    try:
        return len(doc.get("sensors") or []) * _rows(doc, ("solution", "sensors", "writePeriod"), 0.01)
    except (TypeError, ValueError, AttributeError, OverflowError, ZeroDivisionError):
        return None  # malformed: the core's validation names the problem


class RateLimiter:
    """Token bucket per caller, in this process: `per_minute` requests, bursts up to that many.
    `what` and `setting` name the requests and the limit in the 429."""

    def __init__(self, per_minute: int, what: str = "POST requests", setting: str = "MBSERVE_RATE_LIMIT_PER_MINUTE"):
        self.rate, self.capacity = per_minute / 60.0, float(per_minute)
        self.what, self.setting = what, setting
        self.buckets: dict[str, tuple[float, float]] = {}
        self.lock = threading.Lock()

    def check(self, caller: str) -> None:
        now = time.monotonic()
        with self.lock:
            tokens, last = self.buckets.get(caller, (self.capacity, now))
            tokens = min(self.capacity, tokens + (now - last) * self.rate)
            if tokens < 1.0:
                self.buckets[caller] = (tokens, now)
                wait = math.ceil((1.0 - tokens) / self.rate)
                raise ApiError(429, "rate_limited", f"more than {int(self.capacity)} {self.what} per minute "
                               f"({self.setting})", headers={"Retry-After": str(wait)})
            self.buckets[caller] = (tokens - 1.0, now)
            if len(self.buckets) > 10_000:  # forget callers whose bucket has refilled anyway
                full = now - self.capacity / self.rate
                self.buckets = {k: v for k, v in self.buckets.items() if v[1] > full}
