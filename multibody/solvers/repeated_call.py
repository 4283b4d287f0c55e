"""Repeated calls of one compiled kernel with the same argument objects (the step loops' chunks)."""
from __future__ import annotations

FIRST_CALL_WORK = 4000  # steps × unknowns of a step loop's first call


def first_call_steps(unknowns: int) -> int:
    """The steps of a solve's first step-loop call: a small model's whole solve (each call unboxes every
    array of the model's tuples), at most FIRST_CALL_WORK / unknowns so that it stays ~0.1 s at ~25 µs per
    step and unknown; the next calls take as many as last about the polling interval."""
    return max(16, FIRST_CALL_WORK // max(1, unknowns))


class RepeatedCall:
    """kernel(*args): the first call through numba's dispatcher (which loads or compiles the kernel and
    picks its signature), the next straight into that signature's machine code. At each call the
    dispatcher fingerprints and types every array of the model's tuples: for run_steps on mini ~3x
    the call itself (unboxing the arrays), 0.22 vs 0.07 ms under load, against a solve of ~0.5 ms.
    Only for calls whose arguments are the objects of the first call (so of its types); with more
    than one compiled signature, which one the dispatcher chose is not known, and every call goes
    through it."""

    # kernel -> the machine-code entry of its only signature, found once per process: the lookup
    # hashes the signature's nested tuple types (~0.15 ms, which numba does not cache)
    _entries: dict = {}

    def __init__(self, kernel):
        self.kernel, self.entry = kernel, None

    def __call__(self, *args):
        if self.entry is not None:
            return self.entry(*args)
        result = self.kernel(*args)
        overloads = getattr(self.kernel, "overloads", {})  # none: a stand-in (a test's wrapper)
        if len(overloads) == 1:  # overloads are never removed: a cached entry is still this one
            entry = self._entries.get(self.kernel)
            if entry is None:
                entry = self._entries[self.kernel] = next(iter(overloads.values())).entry_point
            self.entry = entry
        return result
