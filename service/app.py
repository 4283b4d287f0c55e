"""The FastAPI application: `create_app(settings)`; uvicorn runs it (`mbserve serve`)."""
from __future__ import annotations

import logging
import threading
from contextlib import asynccontextmanager

from fastapi import FastAPI

from . import errors
from .api.routes import health, jobs, models
from .config import Settings, get_settings
from .embedded import EmbeddedWorker
from .limits import BodyLimit, RateLimiter

log = logging.getLogger(__name__)


def reconcile_loop(settings: Settings, stop: threading.Event) -> None:
    """Re-queue jobs the broker may have lost; the database is the record of every job."""
    from .db.session import get_sessionmaker
    from .jobs import dispatch, reconcile
    Session = get_sessionmaker(settings.database)
    while not stop.wait(settings.reconcile_seconds):
        try:
            with Session() as session:
                ids = reconcile(session, settings)
                if ids:
                    log.info("re-queueing %d job(s)", len(ids))
                    dispatch(settings, session, ids)
        except Exception as exc:  # database or broker down: try again next round
            log.warning("reconciler: %s", exc)


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
        yield
        stop.set()
        if worker:
            worker.stop()
        if thread:
            thread.join(timeout=5)

    app = FastAPI(title="mbserve", version="0.1.0", lifespan=lifespan,
                  description="Multibody-dynamics simulation service: Exudyn-compatible model documents in, "
                              "sensor time series out.")
    app.state.settings = settings
    app.state.rate_limiter = RateLimiter(settings.rate_limit_per_minute)
    errors.install(app)
    for module in (models, jobs, health):
        app.include_router(module.router)
    app.add_middleware(BodyLimit, max_bytes=settings.max_request_bytes)
    return app
