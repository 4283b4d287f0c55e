"""Job-change notifications from the worker to the API (long poll and server-sent events).

- PostgreSQL: `pg_notify('mbserve_jobs', '<job id> <status>')` as a RETURNING column of the worker's own
  UPDATE (no extra round trip; delivered at its commit, so a listener never sees a change
  before it is readable) and LISTEN in the API;
- SQLite (the embedded setup): a datagram to a Linux abstract unix socket named after the data
  directory, which the API binds.

A notification mostly says "job X changed" (and, where the sender knows it, to which status): the
listener re-reads the job, or a long poll skips the read while the job is still unfinished. A
finish's notification is a note: the columns of the job's status document as its commit left
them (JSON, `NOTE_COLUMNS`), so a long poll answers from it without reading the job again. A
lost one costs a delay, never a wrong answer, as waiters also re-read the job every
`RECHECK_SECONDS`.
"""
from __future__ import annotations

import hashlib
import json
import logging
import socket
import threading
from collections.abc import Callable
from datetime import UTC, datetime

from sqlalchemy import Text, case, false, func, literal_column, true

from .config import Settings, resolved

log = logging.getLogger(__name__)

CHANNEL = "mbserve_jobs"
RECHECK_SECONDS = 2.0
# the columns a finish's note carries; times as UTC text, NOTE_TIME
NOTE_COLUMNS = ("id", "status", "progress", "model_id", "created_at", "started_at", "finished_at", "error")
NOTE_TIME = "%Y-%m-%dT%H:%M:%S.%f"
# PostgreSQL refuses a payload of 8000 bytes or more: a longer note (a long error) goes as '<id> <status>'
NOTE_LIMIT = 7900


def postgres(settings: Settings) -> bool:
    return settings.database.startswith("postgresql")


def pg_notify(job_id_column, status_column=None):
    """A column expression that queues the notification for the row's job (PostgreSQL), with
    the status the change left when `status_column` is given."""
    return func.pg_notify(CHANNEL, job_id_column if status_column is None else
                          job_id_column.concat(" ").concat(status_column))


def note_sql(table, solution: bool):
    """PostgreSQL: a finish's note, from the row its UPDATE left (a RETURNING column's value)."""
    parts = []
    for name in NOTE_COLUMNS:
        column = table.c[name]
        if name.endswith("_at"):
            column = func.to_char(func.timezone("UTC", column), 'YYYY-MM-DD"T"HH24:MI:SS.US')
        parts += [literal_column(f"'{name}'"), column]
    note = func.json_build_object(*parts, literal_column("'solution'"), true() if solution else false()).cast(Text)
    return case((func.octet_length(note) <= NOTE_LIMIT, note),
                else_=table.c.id.concat(" ").concat(table.c.status))


def note_text(row, solution: bool) -> str | None:
    """A finish's note from the row (NOTE_COLUMNS) its UPDATE returned (SQLite); None when too long."""
    note = {name: row[name].astimezone(UTC).strftime(NOTE_TIME) if isinstance(row[name], datetime) else row[name]
            for name in NOTE_COLUMNS}
    text = json.dumps({**note, "solution": solution})
    return text if len(text.encode()) <= NOTE_LIMIT else None


def read_note(note: dict) -> tuple[dict, bool]:
    """(the job's columns, whether a solution is stored) of a note (its times in NOTE_TIME, which
    fromisoformat reads ~30x faster than strptime, in the event loop)."""
    return {name: datetime.fromisoformat(note[name]).replace(tzinfo=UTC) if name.endswith("_at")
            and note[name] is not None else note[name] for name in NOTE_COLUMNS}, note["solution"]


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


def after_commit(settings: Settings, job_id: str, status: str | None = None, note: str | None = None) -> None:
    """SQLite: the notification of a commit's change (`note`: a finish's, note_text)."""
    if not postgres(settings):
        send_datagram(socket_address(settings, "jobs"),
                      (note or (job_id if status is None else f"{job_id} {status}")).encode())


class Listener(threading.Thread):
    """Calls `changed(job_id, status or None, note or None)` for every notification, until stop();
    reconnects after errors."""

    def __init__(self, settings: Settings, changed: Callable[[str, str | None, dict | None], None]):
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
                    payload = s.recv(NOTE_LIMIT).decode()
                except TimeoutError:
                    continue
                if payload:
                    self._changed(payload)

    def _changed(self, payload: str) -> None:
        if payload.startswith("{"):
            note = json.loads(payload)
            self.changed(note["id"], note["status"], note)
        else:
            job_id, _, status = payload.partition(" ")
            self.changed(job_id, status or None, None)
