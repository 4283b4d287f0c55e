from fastapi import APIRouter
from fastapi.responses import JSONResponse
from sqlalchemy import text

from ...db.session import get_engine
from ...errors import error_body
from ...schemas import ErrorResponse
from ..deps import SettingsDep

router = APIRouter(tags=["health"])


@router.get("/healthz")
def healthz() -> dict:
    return {"status": "ok"}


@router.get("/readyz", responses={503: {"model": ErrorResponse}})
def readyz(settings: SettingsDep):
    problems = []
    try:
        with get_engine(settings.database).connect() as conn:
            conn.execute(text("SELECT 1"))
    except Exception as exc:
        problems.append({"path": "database", "message": str(exc).splitlines()[0]})
    try:
        from worker.celery_app import get_celery
        with get_celery(settings).connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
    except Exception as exc:
        problems.append({"path": "broker", "message": str(exc).splitlines()[0] if str(exc) else repr(exc)})
    if problems:
        return JSONResponse(error_body("not_ready", "a dependency is not reachable", problems), 503)
    return {"status": "ready", "database": "ok", "broker": "ok"}
