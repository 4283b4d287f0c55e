"""Tables. The jobs table is the record of every job: the broker only carries wake-up calls."""
from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (JSON, DateTime, Float, ForeignKey, Index, Integer, LargeBinary, String, Text,
                        UniqueConstraint)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

# plain JSON, not JSONB: JSONB reorders keys and the results document must come out as stored
JSONType = JSON()


class UTCDateTime(TypeDecorator):
    """Timezone-aware UTC datetimes on every backend (SQLite drops the zone)."""
    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value, dialect):
        return value.astimezone(UTC) if value is not None else None

    def process_result_value(self, value, dialect):
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    type_annotation_map = {datetime: UTCDateTime, dict[str, Any]: JSONType}


class Model(Base):
    """A validated model document, stored once per owner and content hash."""
    __tablename__ = "models"
    __table_args__ = (UniqueConstraint("owner", "content_hash"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    owner: Mapped[str] = mapped_column(String(64))
    content_hash: Mapped[str] = mapped_column(String(64))
    document: Mapped[str] = mapped_column(Text)  # JSON text as received (key order kept)
    summary: Mapped[dict[str, Any]]
    warnings: Mapped[list] = mapped_column(JSONType)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Job(Base):
    __tablename__ = "jobs"
    __table_args__ = (
        UniqueConstraint("owner", "idempotency_key"),
        Index("ix_jobs_owner_id", "owner", "id"),
        Index("ix_jobs_status", "status"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True)  # time-ordered, see store.jobs.new_job_id
    owner: Mapped[str] = mapped_column(String(64))
    model_id: Mapped[str] = mapped_column(ForeignKey("models.id"))
    settings_overrides: Mapped[dict[str, Any] | None]
    status: Mapped[str] = mapped_column(String(16), default="queued")
    progress: Mapped[float] = mapped_column(Float, default=0.0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]
    error: Mapped[dict[str, Any] | None]
    # claims: a worker owns a running job while lease_expires_at is in the future
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    lease_token: Mapped[str | None] = mapped_column(String(32))
    lease_expires_at: Mapped[datetime | None]
    dispatched_at: Mapped[datetime | None]
    idempotency_key: Mapped[str | None] = mapped_column(String(255))
    request_hash: Mapped[str | None] = mapped_column(String(64))


class Result(Base):
    """A finished job's results: the document without sensor data, and where the arrays are
    (store.results)."""
    __tablename__ = "results"

    job_id: Mapped[str] = mapped_column(ForeignKey("jobs.id"), primary_key=True)
    head: Mapped[dict[str, Any]]  # status, warnings, solver, error
    # [{name, key, sensorType, item, outputVariableType, columns, rows, cols, offset}]
    sensors: Mapped[list] = mapped_column(JSONType)
    storage: Mapped[str | None] = mapped_column(String(8))  # db | file | url | npz (stored before 0003)
    path: Mapped[str | None] = mapped_column(String(255))  # file: relative to Settings.results; url: to results_url
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class ResultChunk(Base):
    """Raw little-endian float64 rows of one sensor, ~1 MiB per chunk, in order of seq."""
    __tablename__ = "result_chunks"

    job_id: Mapped[str] = mapped_column(ForeignKey("results.job_id", ondelete="CASCADE"), primary_key=True)
    sensor: Mapped[int] = mapped_column(Integer, primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    data: Mapped[bytes] = mapped_column(LargeBinary)


class ApiKey(Base):
    __tablename__ = "api_keys"

    id: Mapped[str] = mapped_column(String(16), primary_key=True)  # the key's public prefix
    owner: Mapped[str] = mapped_column(String(64))
    secret_hash: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    revoked_at: Mapped[datetime | None]


class Sweep(Base):
    """A parameter sweep: its variations are ordinary jobs (sweep_variations), sent to the broker
    a batch at a time in design order; `sent` counts the variations sent so far."""
    __tablename__ = "sweeps"
    __table_args__ = (Index("ix_sweeps_owner_id", "owner", "id"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    owner: Mapped[str] = mapped_column(String(64))
    model_id: Mapped[str] = mapped_column(ForeignKey("models.id"))
    spec: Mapped[dict[str, Any]]  # store.design.SweepSpec, with the seed used
    columns: Mapped[list] = mapped_column(JSONType)  # the parameters' paths as given, in order
    total: Mapped[int] = mapped_column(Integer)
    sent: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    canceled_at: Mapped[datetime | None]


class SweepVariation(Base):
    __tablename__ = "sweep_variations"

    sweep_id: Mapped[str] = mapped_column(ForeignKey("sweeps.id"), primary_key=True)
    index: Mapped[int] = mapped_column(Integer, primary_key=True)  # design order
    job_id: Mapped[str] = mapped_column(ForeignKey("jobs.id"), unique=True)
    values: Mapped[list] = mapped_column(JSONType)
    # {"values": {name: number | null}, "errors": {name: message}}, stored with the job's result
    outputs: Mapped[dict[str, Any] | None]
