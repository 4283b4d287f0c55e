"""The FastAPI application: `create_app(settings)`; uvicorn runs it (`mbserve serve`)."""
from __future__ import annotations

import gc
import logging
import threading
from contextlib import asynccontextmanager

from fastapi import FastAPI
from starlette.middleware.gzip import GZipMiddleware

from store.config import Settings, get_settings

from . import errors, web
from .api.routes import health, jobs, models, solution, sweeps, validate
from .embedded import EmbeddedWorker
from .events import JobWaiters
from .api.deps import ReadLimited
from .limits import BodyLimit, DisconnectWatch, RateLimiter

log = logging.getLogger(__name__)

# Answers smaller than this go uncompressed: gzip of a small job's 31 KB results document cost the
# API 0.3 ms of CPU idle and ~1.5 ms on the loaded development machine, for a saving of ~25 KB
# on the wire (0.2 ms on a gigabit link, 2 ms at 100 Mbit/s); bigger ones, and streamed ones,
# are compressed when the client accepts it.
GZIP_MINIMUM_BYTES = 32 << 10


def reconcile_loop(settings: Settings, stop: threading.Event) -> None:
    """Re-queue jobs the broker may have lost; the database is the record of every job."""
    from store.db import get_sessionmaker
    from store.jobs import reconcile
    from store.sweeps import dispatch, restart_stalled
    Session = get_sessionmaker(settings.database)
    while not stop.wait(settings.reconcile_seconds):
        try:
            with Session() as session:
                ids = reconcile(session, settings)
                if ids:
                    log.info("re-queueing %d job(s)", len(ids))
                    dispatch(settings, session, ids)
                if restart_stalled(settings, session):
                    log.info("sent the first batches of stalled sweeps again")
        except Exception as exc:  # database or broker down: try again next round
            log.warning("reconciler: %s", exc)


def _openapi(app: FastAPI) -> dict:
    """FastAPI's document, with the model document's schema taken from the core (multibody.schema):
    the routes read the body as a plain object so that the core reports every problem with its path."""
    from fastapi.openapi.utils import get_openapi
    from multibody.reference import document_json_schema
    schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
    model = document_json_schema(ref_template="#/components/schemas/{model}")
    components = schema["components"]["schemas"]
    assert not set(model.get("$defs", {})) & set(components), "schema names of core and service collide"
    components.update(model.pop("$defs", {}), ModelDocument=model)
    ref = {"$ref": "#/components/schemas/ModelDocument"}
    schema["paths"]["/v1/models"]["post"]["requestBody"]["content"]["application/json"]["schema"] = ref
    for body in ("JobCreate", "SweepCreate"):
        components[body]["properties"]["model"] = {"anyOf": [ref, {"type": "null"}],
                                                   "description": "or the model document itself"}
    app.openapi_schema = schema
    return schema


def create_app(settings: Settings | None = None, embedded_worker: bool = False) -> FastAPI:
    """The API; with embedded_worker, also a `celery worker` child process (`mbserve serve`)."""
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        stop = threading.Event()
        thread = None
        if settings.reconcile_seconds > 0:
            thread = threading.Thread(target=reconcile_loop, args=(settings, stop), daemon=True, name="reconciler")
            thread.start()
        worker = EmbeddedWorker(settings) if embedded_worker else None
        if worker:
            worker.start()
        app.state.waiters.start()
        # what start-up made (modules, the app, the core's tables) lives as long as the process:
        # out of the collector's sight, a full collection took ~150 ms of a request every ~100 jobs
        gc.freeze()
        yield
        app.state.waiters.stop()
        stop.set()
        if worker:
            worker.stop()
        if thread:
            thread.join(timeout=5)

    app = FastAPI(title="mbserve", version="0.1.0", lifespan=lifespan, docs_url=None, redoc_url=None,
                  description="Multibody-dynamics simulation service: Exudyn-compatible model documents in, "
                              "sensor time series out.")
    app.state.settings = settings
    app.state.embedded_worker = embedded_worker
    app.state.rate_limiter = RateLimiter(settings.rate_limit_per_minute)
    app.state.read_rate_limiter = RateLimiter(settings.read_rate_limit_per_minute, "GET requests",
                                              "MBSERVE_READ_RATE_LIMIT_PER_MINUTE")
    app.state.waiters = JobWaiters(settings)
    app.state.read_ahead = jobs.ReadAhead()
    app.openapi = lambda: app.openapi_schema or _openapi(app)
    errors.install(app)
    web.install(app)
    for module in (models, validate, jobs, solution, sweeps):
        app.include_router(module.router, dependencies=[ReadLimited])
    app.include_router(health.router)  # probes are not callers
    app.add_middleware(DisconnectWatch)
    app.add_middleware(BodyLimit, max_bytes=settings.max_request_bytes)
    # results and sensors are streamed: Starlette compresses chunk by chunk (never event streams)
    app.add_middleware(GZipMiddleware, minimum_size=GZIP_MINIMUM_BYTES, compresslevel=1)  # 9 (the default): ~10x slower
    return app
