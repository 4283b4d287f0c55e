"""Waiting for a job to change, for long polls and server-sent events: a store.notify.Listener
thread wakes the requests waiting on that job (in the event loop)."""
from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict, defaultdict
from contextlib import contextmanager

from store.config import Settings
from store.jobs import FINISHED
from store.notify import Listener


class Waiter:
    """A request waiting for a job's changes: `changed` is set at each (`final_only`: each that may
    have finished it), `note` is the last finish's note (store.notify), taken with take()."""

    def __init__(self, final_only: bool):
        self.loop = asyncio.get_running_loop()
        self.changed = asyncio.Event()
        self.final_only = final_only
        self.note: dict | None = None

    def wake(self, note: dict | None) -> None:  # in the event loop
        self.note = note or self.note
        self.changed.set()

    def take(self) -> dict | None:
        """The note received since the last take(), if any; clears `changed`."""
        note, self.note = self.note, None
        self.changed.clear()
        return note


# jobs this process created lately (their owners) and the finish notes of those that finished
CREATED_KEPT = 4096


class JobWaiters:
    """The waiters of each job, woken by the listener. It also remembers the jobs this process
    created lately and their finish notes: a long poll on one of them needs no read of the job
    before it finishes (its owner is known, and a note that came before the poll is kept)."""

    def __init__(self, settings: Settings):
        self.lock = threading.Lock()
        self.waiting: dict[str, set[Waiter]] = defaultdict(set)
        self.settings = settings
        self.listener: Listener | None = None
        self.lifespans = 0
        self.created: OrderedDict[str, str] = OrderedDict()  # job id -> owner
        self.finished: dict[str, dict | None] = {}  # job id (of `created`) -> its finish note (None: read it)

    def add_created(self, job_id: str, owner: str) -> None:
        with self.lock:
            self.created[job_id] = owner
            while len(self.created) > CREATED_KEPT:
                self.finished.pop(self.created.popitem(last=False)[0], None)

    def unfinished_or_note(self, job_id: str, owner: str) -> tuple[bool, dict | None]:
        """(True when this process created the job for `owner` and has heard of no finish yet,
        the finish note of such a job if one came)."""
        with self.lock:
            ours = self.created.get(job_id) == owner
            return ours and job_id not in self.finished, self.finished.get(job_id) if ours else None

    def start(self) -> None:
        """In the app's lifespan, which may run more than once at a time (a test client per
        request inside another's): one listener for all, stopped by the last stop()."""
        with self.lock:
            self.lifespans += 1
            if self.listener is None:
                self.listener = Listener(self.settings, self.changed)
                self.listener.start()

    def stop(self) -> None:
        with self.lock:
            self.lifespans -= 1
            listener, self.listener = (self.listener, None) if self.lifespans == 0 else (None, self.listener)
        if listener:
            listener.stop()

    def others_waited_for(self, job_id: str) -> bool:
        """Whether a request waits for a job other than this one."""
        with self.lock:
            return len(self.waiting) > (job_id in self.waiting)

    def changed(self, job_id: str, status: str | None, note: dict | None) -> None:  # the listener's thread
        with self.lock:
            waiters = list(self.waiting.get(job_id, ()))
            if job_id in self.created and status in FINISHED:
                self.finished[job_id] = note  # None (a cancel, a note too long): the job is read
        for waiter in waiters:
            if not (waiter.final_only and status is not None and status not in FINISHED):
                waiter.loop.call_soon_threadsafe(waiter.wake, note)

    @contextmanager
    def watch(self, job_id: str, final_only: bool = False):
        """A Waiter of the job's changes (`final_only`: of those that may have finished it: a long
        poll reads the job again only then, not after its claim or each heartbeat); register
        before reading the job, so that no change between the read and the wait is missed."""
        waiter = Waiter(final_only)
        with self.lock:
            self.waiting[job_id].add(waiter)
        try:
            yield waiter
        finally:
            with self.lock:
                self.waiting[job_id].discard(waiter)
                if not self.waiting[job_id]:
                    del self.waiting[job_id]
