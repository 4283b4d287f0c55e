"""Run one job: claim it, simulate with progress and cooperative cancel, store the outcome.

Testable without a broker: `execute(settings, job_id)` is all the Celery task calls.
"""
from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from celery.exceptions import SoftTimeLimitExceeded
from sqlalchemy import select

import multibody
from multibody.model import LoadedModel, load_model
from multibody.solvers import run
from store import design, jobs, queue, sweeps
from store.config import Settings
from store.db import get_autocommit, get_autocommit_engine, get_sessionmaker
from store.models import Job, Model, Sweep, utcnow
from store.results import Prepared, prepare, remove_other_attempts

log = logging.getLogger(__name__)


class _Watch:
    """A running job's heartbeat: this process's heartbeat thread (_Heartbeats) writes its
    progress and extends its lease every `progress_seconds` from start() to stop(), and sets
    `lost` once the heartbeat no longer matches our token (canceled, or taken over)."""

    def __init__(self, settings: Settings, job_id: str, token: str):
        self.settings, self.job_id, self.token = settings, job_id, token
        self.progress = 0.0
        self.lost = threading.Event()
        self.due = 0.0

    def start(self) -> None:
        self.due = time.monotonic() + self.settings.progress_seconds
        heartbeats().watch(self)

    def stop(self) -> None:
        heartbeats().release(self)

    def beat(self, session) -> bool:
        return jobs.heartbeat(session, self.settings, self.job_id, self.token, self.progress)


class _Heartbeats(threading.Thread):
    """One thread per worker process beats for its running jobs (one; a few in tests): a thread
    started and joined per job cost ~3 ms of a small job on a loaded machine. A beat still
    under way when its job finishes matches nothing (the job is no longer running). A new job
    wakes the thread only when its first beat is due before the thread wakes anyway: jobs in
    close succession do not (a woken thread takes the GIL and a core from the job)."""

    def __init__(self):
        super().__init__(daemon=True, name="heartbeats")
        self.pid = os.getpid()
        self.lock = threading.Lock()
        self.watches: set[_Watch] = set()
        self.wake = threading.Event()
        self.wakes_at = 0.0  # monotonic; the thread's next wake-up unless woken

    def watch(self, watch: _Watch) -> None:
        with self.lock:
            self.watches.add(watch)
            if watch.due < self.wakes_at:
                self.wake.set()

    def release(self, watch: _Watch) -> None:
        with self.lock:
            self.watches.discard(watch)

    def run(self) -> None:
        while True:
            with self.lock:
                watches = list(self.watches)
            for watch in watches:
                if watch.due <= time.monotonic():
                    self._beat(watch)
            with self.lock:  # the watches added meanwhile count; those added after compare with wakes_at
                self.wake.clear()
                self.wakes_at = min((w.due for w in self.watches), default=time.monotonic() + 3600)
            self.wake.wait(self.wakes_at - time.monotonic())

    @staticmethod
    def _beat(watch: _Watch) -> None:
        try:
            with get_sessionmaker(watch.settings.database)() as session:
                if not watch.beat(session):
                    watch.lost.set()
        except Exception as exc:  # database hiccup: the lease has slack for a few misses
            log.warning("heartbeat of job %s failed: %s", watch.job_id, exc)
        watch.due = time.monotonic() + watch.settings.progress_seconds


_HEARTBEATS: _Heartbeats | None = None


def heartbeats() -> _Heartbeats:
    """This process's heartbeat thread (a pool process forked from one that had a thread has none)."""
    global _HEARTBEATS
    if _HEARTBEATS is None or _HEARTBEATS.pid != os.getpid():
        _HEARTBEATS = _Heartbeats()
        _HEARTBEATS.start()
    return _HEARTBEATS


class _BatchWatch(_Watch):
    """The heartbeat of a batch's jobs (store.sweeps.heartbeat_batch): `held`, the ids still
    held, tells the batch which of its jobs were canceled meanwhile."""

    def __init__(self, settings: Settings, token: str, job_ids: list[str]):
        super().__init__(settings, "batch", token)
        self.current: str | None = None
        self.held = set(job_ids)

    def beat(self, session) -> bool:
        self.held = sweeps.heartbeat_batch(session, self.settings, self.token, self.held, self.current, self.progress)
        return bool(self.held)


class _LoadedModels:
    """Loaded (validated) models with their compiled System, by model id (the owner and content
    hash: a stored model never changes) and settings overrides: jobs of the same content skip
    loading, checking and compiling. Bounded, least recently used out."""

    def __init__(self, size: int = 16):
        self.size, self.items = size, OrderedDict()

    def get(self, session, job: Job) -> LoadedModel:
        key = (job.model_id, json.dumps(job.settings_overrides, sort_keys=True))
        loaded = self.items.pop(key, None)
        if loaded is None:
            model = session.get(Model, job.model_id)
            # raises ModelInvalid for a document this core cannot load (stored by another version)
            loaded = load_model(multibody.merge_settings(json.loads(model.document), job.settings_overrides))
        self.items[key] = loaded
        while len(self.items) > self.size:
            self.items.popitem(last=False)
        return loaded


LOADED = _LoadedModels()
# a batch stores its finished variations once their results reach this many bytes (or after
# sweep_store_seconds): it bounds the memory of a batch's unstored results. A waiting single job
# runs before a store. A store costs about 2 ms per 200 kB variation plus 25 ms under load on the
# development machine: at 1 MB (every 5 spring_slider variations) it took 5.4-8.0 ms a variation,
# at 8 MB 3.8-4.0 (stores then come every sweep_store_seconds)
STORE_BYTES = 8 << 20
# a batch runs a waiting single job itself only this long after it began: the job may take up to
# job_time_limit, and the batch's task is stopped 30 s after that (worker.celery_app)
INLINE_SECONDS = 20.0


def execute(settings: Settings, job_id: str) -> str:
    """Returns what happened: the final status, 'skipped' when the job was not ours to run, or
    'abandoned' when it was canceled or taken over while it ran."""
    with get_autocommit_engine(settings.database).connect() as conn:  # the claim: one statement, one round trip
        claimed = jobs.claim(conn, settings, job_id)
    if claimed is None:
        return "skipped"
    job, token = claimed

    def load() -> LoadedModel:
        with get_autocommit(settings.database)() as session:  # used only when the model is not loaded yet
            return LOADED.get(session, job)

    watch = _Watch(settings, job_id, token)
    watch.start()
    try:
        outcome = _simulate(settings, job_id, token, load, None, watch.lost.is_set,
                            lambda fraction: setattr(watch, "progress", float(fraction)))
    finally:
        watch.stop()
    if outcome is None:
        return "abandoned"
    status, error, prepared, _ = outcome
    stored = jobs.finish(settings, job_id, token, status, error=error, results=prepared)
    if stored:
        if job.attempts > 1:  # earlier attempts may have left a file
            remove_other_attempts(settings, job_id, prepared.result.path if prepared else None)
        return status
    if prepared is not None:  # canceled or taken over meanwhile: drop only our file
        prepared.discard(settings)
    return "abandoned"


def _simulate(settings: Settings, job_id: str, token: str, load: Callable[[], LoadedModel],
              outputs: list[design.Output] | None, lost: Callable[[], bool], progress: Callable[[float], None]
              ) -> tuple[str, dict | None, Prepared | None, dict | None] | None:
    """Run a claimed job: (status, error, its results prepared for storing, the sweep outputs
    when `outputs`), or None when it was canceled or taken over while it ran (`lost`)."""
    deadline = time.monotonic() + settings.job_time_limit
    timed_out = False

    def cancel() -> bool:
        nonlocal timed_out
        timed_out = time.monotonic() > deadline
        return timed_out or lost()

    error = prepared = reduced = None
    try:
        results = run(load(), progress=progress, cancel=cancel)
        size = sum(s.data.nbytes for s in results.sensors.values()) \
            + (results.solution.data.nbytes if results.solution is not None else 0)
        if size > settings.max_result_bytes:  # the row pre-check estimates; this is the real size
            status, error = "failed", {"code": "result_too_large", "detail": [], "message":
                                       f"the results hold {size} bytes; the limit is {settings.max_result_bytes} "
                                       "(MBSERVE_MAX_RESULT_BYTES): fewer sensors or a longer writePeriod"}
        else:
            prepared = prepare(settings, job_id, token, results)
            status, error = results.status, results.error
            if outputs is not None and status == "succeeded":
                reduced = design.outputs(outputs, results.sensors)
    except (multibody.SimulationCanceled, SoftTimeLimitExceeded):
        if lost() and not timed_out:
            return None
        status, error = "failed", {"code": "time_limit", "detail": [], "message":
                                   f"the job ran longer than the limit of {settings.job_time_limit:g} s"}
    except multibody.ModelInvalid as exc:
        over = any(p.limit for p in exc.problems)
        status, error = "failed", {"code": "limit_exceeded" if over else "model_invalid", "message": str(exc),
                                   "detail": [{"path": p.path, "message": p.message} for p in exc.problems]}
    except MemoryError:  # over the worker's memory limit (RLIMIT_AS, worker.celery_app); its arrays are freed
        log.warning("job %s ran out of memory", job_id)
        status, error = "failed", {"code": "memory_limit", "detail": [], "message":
                                   "the job needed more memory than the limit of a job "
                                   f"({settings.job_memory_limit_mb} MB, MBSERVE_JOB_MEMORY_LIMIT_MB)"}
    except RecursionError:
        log.warning("job %s nested too deep", job_id)
        status, error = "failed", {"code": "recursion_limit", "detail": [], "message":
                                   "the model is nested too deeply to be read (Python's recursion limit)"}
    except Exception as exc:  # a crash in the core fails this job; the worker goes on
        log.exception("job %s crashed", job_id)
        status, error = "failed", {"code": "internal_error", "message": f"{type(exc).__name__}: {exc}",
                                   "detail": []}
    return status, error, prepared, reduced


def take_turn(settings: Settings) -> tuple[str, list[str]] | None:
    """A sweep's turn (store.sweeps): the batch whose turn it is, as (sweep id, job ids), or None
    when no batch is left; the next turn is sent first, so another worker process can start
    meanwhile."""
    with get_sessionmaker(settings.database)() as session:
        taken = sweeps.take_batch(settings, session)
    if taken is not None:
        sweeps.send_turns(settings, 1)
    return taken


def execute_named(settings: Settings, sweep_id: str, job_ids: list[str]) -> list[str]:
    """A batch message naming its jobs (a rest, or jobs the broker lost): when another owner has
    fewer jobs running than this sweep's, a batch of theirs runs instead (store.sweeps.take_batch)
    and this one goes to the queue's end again; what the batch run returned (execute_batch)."""
    with get_sessionmaker(settings.database)() as session:
        owner = session.scalar(select(Sweep.owner).where(Sweep.id == sweep_id))
        fairer = sweeps.take_batch(settings, session, before=owner) if owner is not None else None
        if fairer is not None:
            sweeps.send_rest(settings, session, sweep_id, job_ids)
            sweep_id, job_ids = fairer
    return execute_batch(settings, sweep_id, job_ids)


def _singles_first(settings: Settings, began: float) -> bool:
    """Run the single jobs waiting in the broker here, between two variations of a batch that
    began at `began` (its process is busy: their messages would wait for the batch to stop, its
    results to be stored and the worker to hand them on). A message left behind finds its job
    taken (`execute` returns 'skipped'). False, running none, when the batch has run for
    INLINE_SECONDS: it then stops, and the single job gets the process through the broker."""
    while queue.waiting(settings, queue.JOB_QUEUE):
        if time.monotonic() - began > INLINE_SECONDS:
            return False
        with get_sessionmaker(settings.database)() as session:
            job_id = sweeps.waiting_single(session)
        if job_id is None:  # the messages are of jobs already taken
            return True
        execute(settings, job_id)
    return True


def execute_batch(settings: Settings, sweep_id: str, job_ids: list[str]) -> list[str]:
    """Run a batch of a sweep's variations in turn (what each returned, as `execute`; 'deferred'
    for those sent back). The batch is claimed at once and its finished variations are stored
    together every `sweep_store_seconds` or STORE_BYTES of results, and at its end
    (store.sweeps.claim_batch, finish_batch), under one heartbeat. A single job waiting in the
    broker runs at the next variation (_singles_first). The rest goes back to the queue after
    `sweep_batch_seconds`, so that other sweeps get their turn on this worker process."""
    Session = get_sessionmaker(settings.database)
    with Session() as session:
        claimed = sweeps.claim_batch(session, settings, sweep_id, job_ids)
    if claimed is None:
        return ["skipped"] * len(job_ids)
    sweep, token, taken = claimed
    outputs = design.SweepSpec.model_validate(sweep.spec).outputs
    outcome = dict.fromkeys(job_ids, "skipped")
    attempts = {job.id: job.attempts for job, _ in taken}
    done: list[sweeps.Finished] = []
    watch = _BatchWatch(settings, token, [job.id for job, _ in taken])
    watch.start()

    def store(durable: bool, rest: list[str] = ()) -> None:
        if not done and not rest:
            return
        with Session() as session:
            stored = set(sweeps.finish_batch(settings, session, sweep_id, token, done, durable, rest))
        for f in done:
            outcome[f.job_id] = f.status if f.job_id in stored else "abandoned"
            if f.job_id in stored and attempts[f.job_id] > 1:  # earlier attempts may have left a file
                remove_other_attempts(settings, f.job_id, f.results.result.path if f.results else None)
            elif f.job_id not in stored and f.results is not None:  # canceled meanwhile: drop only our file
                f.results.discard(settings)
        done.clear()

    began = stored_at = time.monotonic()
    rest = []
    try:
        for k, (job, document) in enumerate(taken):
            if k and (time.monotonic() > began + settings.sweep_batch_seconds or not _singles_first(settings, began)):
                rest = [j.id for j, _ in taken[k:]]
                break
            if time.monotonic() - stored_at > settings.sweep_store_seconds or \
                    sum(a.nbytes for f in done if f.results for a in f.results.arrays) >= STORE_BYTES:
                store(durable=False)  # after the single jobs waiting: they do not wait for it
                stored_at = time.monotonic()
            if job.id not in watch.held:  # canceled since the claim
                outcome[job.id] = "abandoned"
                continue
            watch.current, watch.progress = job.id, 0.0
            started = utcnow()
            ran = _simulate(settings, job.id, token, lambda: load_model(json.loads(document)), outputs,
                            lambda: job.id not in watch.held,
                            lambda fraction: setattr(watch, "progress", float(fraction)))
            if ran is None:
                outcome[job.id] = "abandoned"
                continue
            done.append(sweeps.Finished(job.id, *ran, started_at=started, finished_at=utcnow(),
                                        progress=watch.progress))
        store(durable=True, rest=rest)  # the batch's last commit: the log up to it on disk
        outcome.update(dict.fromkeys(rest, "deferred"))
    finally:
        watch.stop()
    return [outcome[j] for j in job_ids]
