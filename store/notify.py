"""Job-change notifications from the worker to the API (long poll and server-sent events).

- PostgreSQL: `pg_notify('mbserve_jobs', '<job id> <status>')` as a RETURNING column of the worker's own
  UPDATE (no extra round trip; delivered at its commit, so a listener never sees a change
  before it is readable) and LISTEN in the API;
- SQLite (the embedded setup): a datagram to a Linux abstract unix socket named after the data
  directory, which the API binds.

A notification only says "job X changed" (and, where the sender knows it, to which status): the
listener re-reads the job, or a long poll skips the read while the job is still unfinished. A
lost one costs a delay, never a wrong answer, as waiters also re-read the job every
`RECHECK_SECONDS`.
"""
from __future__ import annotations

import hashlib
import logging
import socket
import threading
from collections.abc import Callable

from sqlalchemy import func

from .config import Settings, resolved

log = logging.getLogger(__name__)

CHANNEL = "mbserve_jobs"
RECHECK_SECONDS = 2.0


def postgres(settings: Settings) -> bool:
    return settings.database.startswith("postgresql")


def pg_notify(job_id_column, status_column=None):
    """A column expression that queues the notification for the row's job (PostgreSQL), with
    the status the change left when `status_column` is given."""
    return func.pg_notify(CHANNEL, job_id_column if status_column is None else
                          job_id_column.concat(" ").concat(status_column))


def socket_address(settings: Settings, role: str) -> str:
    """An abstract socket (no file, no path-length limit) per data directory and role."""
    digest = hashlib.sha1(str(resolved(settings.data_dir)).encode()).hexdigest()[:20]
    return f"\0mbserve-{role}-{digest}"


def send_datagram(address: str, payload: bytes) -> None:
    """Best effort: nobody listening is fine (the receiver polls as a fallback)."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
            s.setblocking(False)
            s.sendto(payload, address)
    except OSError:
        pass


def after_commit(settings: Settings, job_id: str, status: str | None = None) -> None:
    if not postgres(settings):
        send_datagram(socket_address(settings, "jobs"), (job_id if status is None else f"{job_id} {status}").encode())


class Listener(threading.Thread):
    """Calls `changed(job_id, status or None)` for every notification, until stop(); reconnects
    after errors."""

    def __init__(self, settings: Settings, changed: Callable[[str, str | None], None]):
        super().__init__(daemon=True, name="job-notifications")
        self.settings, self.changed = settings, changed
        self.stopping = threading.Event()

    def stop(self) -> None:
        self.stopping.set()
        if not postgres(self.settings):  # wake it: the next listener binds the same address
            send_datagram(socket_address(self.settings, "jobs"), b"")
        self.join(5)  # its connection closed before the caller goes on (tests drop the database next)

    def run(self) -> None:
        while not self.stopping.is_set():
            try:
                self._listenpostgres() if postgres(self.settings) else self._listen_socket()
            except Exception as exc:  # database restarting, ...: waiters re-check meanwhile
                log.warning("job notifications: %s", exc)
                self.stopping.wait(1.0)

    def _listenpostgres(self) -> None:
        import psycopg
        from sqlalchemy.engine import make_url
        url = make_url(self.settings.database).set(drivername="postgresql")  # a libpq URI, query kept
        with psycopg.connect(url.render_as_string(hide_password=False), autocommit=True, connect_timeout=5) as conn:
            conn.execute(f"LISTEN {CHANNEL}")
            while not self.stopping.is_set():
                for note in conn.notifies(timeout=0.5):
                    self._changed(note.payload)

    def _listen_socket(self) -> None:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
            s.bind(socket_address(self.settings, "jobs"))
            s.settimeout(0.5)
            while not self.stopping.is_set():
                try:
                    job_id = s.recv(256).decode()
                except TimeoutError:
                    continue
                if job_id:
                    self._changed(job_id)

    def _changed(self, payload: str) -> None:
        job_id, _, status = payload.partition(" ")
        self.changed(job_id, status or None)
