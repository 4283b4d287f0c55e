"""The worker's Celery app: the queue's app (store.queue, configured from the same Settings as
the API's) with the execution options and the tasks.

`celery -A worker.celery_app worker` and `mbserve worker` use the module-level `app`.
"""
from __future__ import annotations

import gc
import multiprocessing
import os
import sys

from celery import Celery
from celery.signals import worker_init, worker_process_init

from store.config import Settings, get_settings
from store.queue import get_celery


def worker_app(settings: Settings) -> Celery:
    app = get_celery(settings)
    app.conf.update(
        include=["worker.tasks"],
        # a task is acked after it ran, and re-delivered when its worker process dies
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        # the cooperative limit (worker.runner) comes first; these catch a stuck solve
        task_soft_time_limit=settings.job_time_limit + 30,
        task_time_limit=settings.job_time_limit + 60,
        worker_concurrency=settings.worker_concurrency,
        # a process whose heap stayed large after a big job is replaced after it (KiB of RSS)
        worker_max_memory_per_child=(1024 + settings.job_memory_limit_mb // 2) * 1024 if settings.job_memory_limit_mb
        else None,
        worker_send_task_events=False,
    )
    return app


def _compile_kernels() -> None:
    from multibody.kernel_cache import ensure_compiled, print_progress
    seconds = ensure_compiled(lambda done, total: print_progress(done, total, sys.__stderr__))
    if seconds is not None:
        print(f"numerical kernels compiled in {seconds:.0f} s", file=sys.__stderr__, flush=True)


@worker_init.connect
def _compile(**_) -> None:
    """The one-time compile of the core's kernels, before the pool starts and takes jobs (one
    process at a time: a file lock next to numba's cache); its progress on stderr. It runs in a
    process of its own: a compile leaves LLVM's memory behind (~15 MB per kernel measured, where
    loading from the cache takes ~4), and every pool process forked from this one would carry it."""
    from multibody.kernel_cache import stale
    if not stale():
        return
    compiler = multiprocessing.get_context("spawn").Process(target=_compile_kernels, name="compile-kernels")
    compiler.start()
    compiler.join()
    if compiler.exitcode != 0:
        raise RuntimeError(f"compiling the numerical kernels failed (exit code {compiler.exitcode})")


@worker_process_init.connect
def _warm_up(**_) -> None:
    """Each worker process loads the core's compiled kernels before its first job (~1 s), then
    bounds its own address space to what it has now plus MBSERVE_JOB_MEMORY_LIMIT_MB (RLIMIT_AS;
    relative, as the libraries' share grows with the host's cores): a job that needs more gets a
    MemoryError (worker.runner fails it with code memory_limit) instead of the kernel's OOM killer
    taking the worker."""
    import resource

    import multibody
    multibody.warm_up()
    gc.freeze()  # the core's loaded kernels and tables stay for the process's life: no collection walks them
    if not app.settings.job_memory_limit_mb:  # 0: no limit
        return
    with open("/proc/self/statm") as f:
        own = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    limit = own + (app.settings.job_memory_limit_mb << 20)
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))


app = worker_app(get_settings())
