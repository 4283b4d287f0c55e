"""Waiting for a job to change, for long polls and server-sent events: a store.notify.Listener
thread wakes the requests waiting on that job (in the event loop)."""
from __future__ import annotations

import asyncio
import threading
from collections import defaultdict
from contextlib import contextmanager

from store.config import Settings
from store.jobs import FINISHED
from store.notify import Listener


class JobWaiters:
    def __init__(self, settings: Settings):
        self.lock = threading.Lock()
        self.waiting: dict[str, set[tuple[asyncio.AbstractEventLoop, asyncio.Event, bool]]] = defaultdict(set)
        self.settings = settings
        self.listener: Listener | None = None
        self.lifespans = 0

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

    def changed(self, job_id: str, status: str | None) -> None:  # the listener's thread
        with self.lock:
            waiters = list(self.waiting.get(job_id, ()))
        for loop, event, final_only in waiters:
            if not (final_only and status is not None and status not in FINISHED):
                loop.call_soon_threadsafe(event.set)

    @contextmanager
    def watch(self, job_id: str, final_only: bool = False):
        """An asyncio.Event set whenever the job changes (`final_only`: when it may have finished:
        a long poll reads the job again only then, not after its claim or each heartbeat);
        register before reading the job, so that no change between the read and the wait is
        missed."""
        entry = (asyncio.get_running_loop(), asyncio.Event(), final_only)
        with self.lock:
            self.waiting[job_id].add(entry)
        try:
            yield entry[1]
        finally:
            with self.lock:
                self.waiting[job_id].discard(entry)
                if not self.waiting[job_id]:
                    del self.waiting[job_id]
