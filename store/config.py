"""One settings object for the API, the worker and the command line (env prefix MBSERVE_).

The defaults are the embedded setup: SQLite, a filesystem broker and results files, all under
`data_dir`. The distributed setup sets database_url and broker_url (see docker-compose.yml).
"""
from __future__ import annotations

import ipaddress
import os
from functools import lru_cache
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


def resolved(path: Path) -> Path:
    """path.resolve(): system calls for each component, and the settings' paths are read several
    times per job; so once per path and working directory."""
    return _resolve(path, os.getcwd())


@lru_cache(maxsize=64)
def _resolve(path: Path, cwd: str) -> Path:
    return path.resolve()


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="MBSERVE_", frozen=True)  # hashable: caches key on it

    data_dir: Path = Path("data")
    database_url: str | None = Field(None, description="default: sqlite:///<data_dir>/mbserve.sqlite3")
    broker_url: str | None = Field(None, description="default: the filesystem broker under <data_dir>/broker")
    results_dir: Path | None = Field(None, description="default: <data_dir>/results")
    results_url: str | None = Field(None, description="an fsspec URL (s3://bucket/prefix, ...): big results "
                                                      "go there instead of the database or results_dir")
    results_in_database: bool | None = Field(None, description="default: true unless the database is SQLite "
                                                               "(a worker then needs no shared filesystem)")
    inline_result_bytes: int = 1_000_000  # results up to this size go into the database in every setup

    host: str = "127.0.0.1"
    require_api_key: bool | None = Field(None, description="default: required unless host is loopback")

    # worker reliability
    worker_concurrency: int = 2
    lease_seconds: float = 30.0  # a running job whose lease is older than this is re-run
    progress_seconds: float = 0.5  # the heartbeat: lease extended and progress written this often
    reconcile_seconds: float = 10.0  # how often the API re-queues jobs the broker may have lost
    requeue_after_seconds: float = 60.0  # a job queued this long without a worker is sent again
    max_attempts: int = 3
    job_time_limit: float = 3600.0  # wall seconds per job, then failed with code time_limit
    # memory a job may take: a worker process's address space (RLIMIT_AS) is what it has after
    # loading the core (~0.8 GB here) plus this; a job over it fails with code memory_limit
    job_memory_limit_mb: int = 4096
    broker_poll_seconds: float = 1.0  # filesystem broker only: the fallback when a wake-up datagram is lost

    # limits on user input
    max_request_bytes: int = 10_000_000
    max_items: int = 10_000  # per list of the model document
    max_sensor_rows: int = 5_000_000  # stored rows over all sensors (about steps x sensors)
    max_result_bytes: int = 2_000_000_000  # float64 values of all sensors of one job, uncompressed
    max_expression_chars: int = 1_000
    max_motions: int = 100  # per document
    max_expressions: int = 300  # expression fields per document
    max_expression_cost: int = 500_000  # tree nodes parsed, differentiated and compiled per document
    max_expression_seconds: float = 5.0  # CPU seconds of that work per document
    max_steps: int = 10_000_000  # timeIntegration.numberOfSteps (the core's own bound is 1e8)
    max_load_steps: int = 100_000  # staticSolver.numberOfLoadSteps (the core's: 1e6)
    max_nesting_depth: int = 32  # JSON nesting anywhere in a body, V* keys included (the core's: 64)
    rate_limit_per_minute: int = 600  # POST requests per key (or client) and minute
    read_rate_limit_per_minute: int = 6_000  # GET requests under /v1 per key (or client) and minute
    max_list_limit: int = 200
    # big downloads (results, sensors, solutions over 4 MB of values) are formatted in this many
    # processes beside the API (0: in the API's threads, slowing its other requests)
    download_processes: int = 2

    # sweeps: variations are sent in batches of sweep_batch_size jobs (one task runs them all); each
    # sweep keeps sweep_batches_queued batches in the broker, so sweeps take turns on the workers
    sweep_batch_size: int = 16
    sweep_batches_queued: int = 4
    # a batch stores its finished variations together this often (worker.runner.execute_batch)
    sweep_store_seconds: float = 1.0
    # a batch task that has run this long sends the rest of its batch back to the queue, so other
    # sweeps get their turn (a single job waiting in the broker stops a batch at its next variation)
    sweep_batch_seconds: float = 2.0
    max_sweep_variations: int = 10_000  # per sweep
    max_owner_sweep_variations: int = 50_000  # queued or running, over all sweeps of one owner

    @property
    def database(self) -> str:
        return self.database_url or f"sqlite:///{resolved(self.data_dir) / 'mbserve.sqlite3'}"

    @property
    def results_in_db(self) -> bool:
        if self.results_in_database is not None:
            return self.results_in_database
        return not self.database.startswith("sqlite")

    @property
    def broker(self) -> str:
        return self.broker_url or "filesystem://"

    @property
    def broker_dir(self) -> Path:
        return resolved(self.data_dir) / "broker"

    @property
    def results(self) -> Path:
        return resolved(self.results_dir or self.data_dir / "results")

    @property
    def api_key_required(self) -> bool:
        if self.require_api_key is not None:
            return self.require_api_key
        try:
            return not ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return self.host != "localhost"

    def ensure_dirs(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.results.mkdir(parents=True, exist_ok=True)
        if self.broker_url is None:
            self.broker_dir.mkdir(parents=True, exist_ok=True)


@lru_cache
def get_settings() -> Settings:
    return Settings()
