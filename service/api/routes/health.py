from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from sqlalchemy import text

from store.db import get_engine
from store.queue import check_broker

from ...errors import error_body
from ...schemas import ErrorResponse
from ...warmup import warming_up
from ..deps import SettingsDep

router = APIRouter(tags=["health"])


@router.get("/healthz")
def healthz() -> dict:
    return {"status": "ok"}


@router.get("/readyz", responses={503: {"model": ErrorResponse}})
def readyz(request: Request, settings: SettingsDep):
    problems = []
    try:
        with get_engine(settings.database).connect() as conn:
            conn.execute(text("SELECT 1"))
    except Exception as exc:
        problems.append({"path": "database", "message": str(exc).splitlines()[0]})
    try:
        check_broker(settings)
    except Exception as exc:
        problems.append({"path": "broker", "message": str(exc).splitlines()[0] if str(exc) else repr(exc)})
    if problems:
        return JSONResponse(error_body("not_ready", "a dependency is not reachable", problems), 503)
    if warming_up(request.app):
        return JSONResponse(error_body("warming_up", "a worker is compiling the numerical kernels (first start only)",
                                       [{"path": "kernels", "message": "compiling"}]), 503)
    return {"status": "ready", "database": "ok", "broker": "ok", "kernels": "ok"}
