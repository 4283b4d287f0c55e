"""Dependencies shared by the routes: settings, a database session, the caller (owner).

Those that do no I/O are `async def`: FastAPI runs a plain `def` dependency in its thread pool,
and each such hop waits for the GIL, which a busy download holds for milliseconds at a time."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Annotated

from fastapi import Depends, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session

from ..auth import ANONYMOUS, owner_of
from store.config import Settings
from store.db import get_sessionmaker
from ..errors import ApiError


async def get_settings(request: Request) -> Settings:
    return request.app.state.settings


SettingsDep = Annotated[Settings, Depends(get_settings)]


def get_db(settings: SettingsDep) -> Iterator[Session]:
    with get_sessionmaker(settings.database)() as session:
        yield session


SessionDep = Annotated[Session, Depends(get_db)]

_bearer = HTTPBearer(auto_error=False, description="an API key from `mbserve keys create`")
_header = APIKeyHeader(name="X-API-Key", auto_error=False)


def _key_owner(settings: Settings, presented: str) -> str | None:
    with get_sessionmaker(settings.database)() as session:  # its own: a long poll holds no connection
        return owner_of(session, presented)


async def get_owner(settings: SettingsDep,
                    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
                    header: Annotated[str | None, Depends(_header)]) -> str:
    presented = header or (bearer.credentials if bearer else None)
    if presented is None:
        if settings.api_key_required:
            raise ApiError(401, "unauthorized", "an API key is required (Authorization: Bearer <key>)",
                           headers={"WWW-Authenticate": "Bearer"})
        return ANONYMOUS
    owner = await run_in_threadpool(_key_owner, settings, presented)
    if owner is None:
        raise ApiError(401, "unauthorized", "unknown or revoked API key", headers={"WWW-Authenticate": "Bearer"})
    return owner


OwnerDep = Annotated[str, Depends(get_owner)]


def _caller(request: Request, owner: str) -> str:
    return owner if owner != ANONYMOUS else f"ip:{request.client.host if request.client else '-'}"


def rate_limited(request: Request, owner: str) -> None:
    request.app.state.rate_limiter.check(_caller(request, owner))


async def _rate_limited(request: Request, owner: OwnerDep) -> None:
    rate_limited(request, owner)


RateLimited = Depends(_rate_limited)


async def read_limited(request: Request, owner: OwnerDep) -> None:
    """GETs have a bucket of their own (a long poll or an event stream counts once), POSTs
    theirs (rate_limited)."""
    if request.method in ("GET", "HEAD"):
        request.app.state.read_rate_limiter.check(_caller(request, owner))


ReadLimited = Depends(read_limited)


async def client_gone(request: Request) -> Callable[[], bool]:
    """True once the client has disconnected (service.limits.DisconnectWatch)."""
    gone = request.scope.get("mbserve.gone")
    return gone.is_set if gone is not None else (lambda: False)


ClientGone = Annotated[Callable[[], bool], Depends(client_gone)]
