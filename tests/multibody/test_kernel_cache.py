"""The one-time compile: it finds every kernel of the package (no list to keep up to date), its
warm-up reaches each of them, and one process compiles at a time."""
from __future__ import annotations

import subprocess
import sys

from numba.core.dispatcher import Dispatcher

from multibody import kernel_cache


def _reached(found) -> set:
    """The kernels that have run (signatures), and those their code calls, transitively (also through
    inline="always" kernels, which kernel_cache leaves out: they are compiled into their callers)."""
    modules = {sys.modules[k.py_func.__module__] for k in found}
    every = [v for m in modules for v in vars(m).values() if isinstance(v, Dispatcher) and v.py_func.__module__ == m.__name__]
    by_name: dict[str, list] = {}
    for k in every:
        by_name.setdefault(k.py_func.__name__, []).append(k)
    reached = {k for k in every if k.signatures}
    todo = list(reached)
    while todo:
        for name in todo.pop().py_func.__code__.co_names:  # globals and attributes it reads (K.kinematics)
            for callee in by_name.get(name, []):
                if callee not in reached:
                    reached.add(callee)
                    todo.append(callee)
    return reached


def test_the_compile_finds_every_kernel_and_its_warm_up_reaches_each():
    found = kernel_cache.kernels()
    modules = {k.py_func.__module__ for k in found}
    assert {"multibody.kernels", "multibody.output_kernels", "multibody.programs",
            "multibody.solvers.alpha_kernel"} <= modules
    assert all(hasattr(k._cache, "_cache_file") for k in found), "every kernel caches its machine code on disk"
    kernel_cache.warm_up()
    missing = sorted(f"{k.py_func.__module__}.{k.py_func.__name__}" for k in set(found) - _reached(found))
    assert not missing, f"kernels the warm-up models never run (add a model to kernel_cache.warm_up): {missing}"
    # what the warm-up compiled is on disk: a fresh start finds nothing stale (an inline="always" kernel
    # never gets a cache file of its own, and would keep /readyz at warming_up and recompile every start)
    assert not kernel_cache.stale(found), [k.py_func.__name__ for k in kernel_cache.stale(found)]


def test_a_fresh_cache_is_not_compiled_again(monkeypatch):
    monkeypatch.setattr(kernel_cache, "stale", lambda found=None: [])
    monkeypatch.setattr(kernel_cache, "warm_up", lambda: (_ for _ in ()).throw(AssertionError("compiled")))
    assert kernel_cache.ensure_compiled() is None


def test_a_stale_cache_is_compiled_whole_under_the_lock_with_progress(monkeypatch):
    found = kernel_cache.kernels()
    removed, reports = [], []
    monkeypatch.setattr(kernel_cache, "stale", lambda found=None: [found[0]])
    monkeypatch.setattr(kernel_cache.os, "remove", removed.append)  # the cache itself is left alone
    monkeypatch.setattr(kernel_cache, "warm_up", lambda: reports.append(("locked", kernel_cache.compiling())))
    seconds = kernel_cache.ensure_compiled(lambda done, total: reports.append((done, total)))
    assert seconds is not None and len(removed) == len(found)  # a stale callee makes every caller stale
    assert ("locked", True) in reports  # the warm-up ran while the lock was held
    progress = [r for r in reports if r[0] != "locked"]  # the watcher may report before the warm-up's entry
    assert progress and progress[-1][1] == len(found)


def test_compiling_is_seen_while_another_process_holds_the_lock():
    lock = kernel_cache._lock_path(kernel_cache.kernels())
    holder = subprocess.Popen([sys.executable, "-c", f"""
import fcntl, sys, time
f = open({str(lock)!r}, "a+")
fcntl.flock(f, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(30)
"""], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        assert kernel_cache.compiling()
    finally:
        holder.kill()
        holder.wait()
    assert not kernel_cache.compiling()


def test_progress_lines_count_up_to_the_total(capsys):
    kernel_cache.print_progress(12, 45)
    kernel_cache.print_progress(45, 45)
    assert capsys.readouterr().err.splitlines() == ["compiling numerical kernels, first start only: 12/45",
                                                    "compiling numerical kernels, first start only: 45/45"]
