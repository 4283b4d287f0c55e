"""Engines, sessions and migrations for a Settings object."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import sessionmaker

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


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
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20,
                         connect_args={"connect_timeout": 5})


@lru_cache
def get_sessionmaker(url: str) -> sessionmaker:
    return sessionmaker(get_engine(url), expire_on_commit=False)


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
