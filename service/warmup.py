"""Whether the core's kernels are being compiled (the one-time compile): /readyz answers 503
`warming_up` meanwhile, and a queued job's status says why it waits."""
from __future__ import annotations

from fastapi import FastAPI

from multibody import kernel_cache

WAITING = "waiting for a worker: it is compiling the numerical kernels first (first start only)"


def warming_up(app: FastAPI) -> bool:
    """A process of this installation holds the compile lock, or (embedded worker) the kernels are
    not compiled yet: that worker compiles them before it takes jobs. Workers on other hosts are
    not seen."""
    if getattr(app.state, "kernels_ready", False):
        return False
    embedded = getattr(app.state, "embedded_worker", False)
    busy = kernel_cache.compiling() or (embedded and bool(kernel_cache.stale()))
    if embedded and not busy:
        app.state.kernels_ready = True  # compiled once: stays so for this process
    return busy


def with_detail(app: FastAPI, doc: dict) -> dict:
    """A status document with statusDetail set when a queued job waits for the compile."""
    if doc["status"] == "queued" and warming_up(app):
        doc["statusDetail"] = WAITING
    return doc
