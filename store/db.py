"""Engines, sessions and migrations for a Settings object."""
from __future__ import annotations

import time
from functools import lru_cache
from pathlib import Path

from sqlalchemy import Engine, create_engine, event, exc
from sqlalchemy.orm import sessionmaker

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
PING_AFTER_IDLE_SECONDS = 1.0


@lru_cache
def get_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(conn, _record):
            # WAL: the API reads while a worker process writes progress
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
        return engine
    engine = create_engine(url, pool_size=10, max_overflow=20, connect_args={"connect_timeout": 5})

    # A connection is pinged at checkout only when it has been idle for a while (SQLAlchemy's
    # pool_pre_ping pings every time: a round trip per request and per page of a download). One
    # that fails is replaced, as after a restart of the database.
    @event.listens_for(engine, "checkin")
    def _idle_since(_conn, record):
        record.info["idle_since"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _ping_if_idle(conn, record, _proxy):
        if time.monotonic() - record.info.get("idle_since", time.monotonic()) > PING_AFTER_IDLE_SECONDS:
            try:
                engine.dialect.do_ping(conn)
            except Exception as e:
                raise exc.DisconnectionError() from e
    return engine


@lru_cache
def get_sessionmaker(url: str) -> sessionmaker:
    return sessionmaker(get_engine(url), expire_on_commit=False)


@lru_cache
def get_autocommit_engine(url: str) -> Engine:
    """The engine with its connections in autocommit, each statement its own transaction: no
    BEGIN and COMMIT/ROLLBACK round trips around work of one statement. Its Core connections
    (`.connect()`) run a statement without an ORM session's machinery, a third of the CPU of a
    small job's claim and finish in the worker's pool process. The same pool as get_engine's."""
    return get_engine(url).execution_options(isolation_level="AUTOCOMMIT")


@lru_cache
def get_autocommit(url: str) -> sessionmaker:
    """Sessions on get_autocommit_engine, for one statement that reads ORM objects (a job's
    status, a download's job and result, a page of result chunks)."""
    return sessionmaker(get_autocommit_engine(url), expire_on_commit=False)


def alembic_config(url: str):
    from alembic.config import Config
    cfg = Config(str(MIGRATIONS / "alembic.ini"))
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["url"] = url
    return cfg


def migrate(url: str) -> None:
    """Bring the database to the newest schema (run at start-up and by `mbserve migrate`)."""
    from alembic import command
    command.upgrade(alembic_config(url), "head")
