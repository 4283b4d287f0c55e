"""The embedded worker of `mbserve serve`: `celery worker` as a child process (the same task code
as the distributed setup), restarted when it dies, stopped with the API (in its lifespan)."""
from __future__ import annotations

import ctypes
import logging
import signal
import subprocess
import sys
import threading

from store.config import Settings
from store.queue import WORKER_QUEUES

log = logging.getLogger(__name__)


def _die_with_parent() -> None:
    """Linux: the worker gets SIGTERM when `mbserve serve` dies, even by SIGKILL."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class EmbeddedWorker:
    def __init__(self, settings: Settings):
        self.command = [sys.executable, "-m", "celery", "-A", "worker.celery_app", "worker", "--loglevel=WARNING",
                        "-Q", WORKER_QUEUES, f"--concurrency={settings.worker_concurrency}",
                        "--without-gossip", "--without-mingle", "--without-heartbeat"]
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True, name="embedded-worker")

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(30)

    def _run(self) -> None:
        while not self.stopping.is_set():
            proc = subprocess.Popen(self.command, preexec_fn=_die_with_parent)
            while proc.poll() is None:
                if self.stopping.wait(0.5):
                    proc.terminate()  # warm shutdown: a running job finishes or is re-run by lease
                    try:
                        proc.wait(20)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                        proc.wait()
                    return
            log.warning("embedded worker exited with %s; restarting", proc.returncode)
            self.stopping.wait(1)
