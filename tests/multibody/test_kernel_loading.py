"""Cached kernels load without numba's compiler set-up and without parsing their bitcode
(multibody.kernel_loading), and a compile that calls such a kernel still links it."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from llvmlite import binding as ll

import multibody
from multibody import kernel_cache, kernel_loading

ROOT = Path(__file__).resolve().parents[2]
MINI = ROOT.parent / "shared" / "examples" / "mini" / "model.json"


def _cached_libraries(kernel):
    """(object code, bitcode) of each overload of `kernel` in its cache."""
    cache = kernel._cache._cache_file
    for key in cache._load_index():
        name, kind, data = cache.load(key)[0]
        assert kind == "object"
        yield data


def test_the_names_come_from_the_object_file_as_from_the_bitcode():
    """Every name the kernel's module defines for other modules (all but its internal functions) is
    an exported symbol of its object code, and no other."""
    assert not kernel_cache.stale()
    checked = 0
    for kernel in kernel_cache.kernels():
        for object_code, bitcode in _cached_libraries(kernel):
            module = ll.parse_bitcode(bitcode)
            defined = {g.name for part in (module.functions, module.global_variables) for g in part
                       if not g.is_declaration and g.linkage != ll.Linkage.internal}
            assert kernel_loading.exported_symbols(object_code) == defined, kernel.py_func.__name__
            checked += 1
    assert checked >= len(kernel_cache.kernels())
    assert kernel_loading.exported_symbols(b"\xcf\xfa\xed\xfe" + bytes(60)) is None  # Mach-O: numba's own way


_FRESH_PROCESS = """
import json, sys
import numba
import numpy as np
import multibody
from multibody import kernels
doc = json.load(open(sys.argv[1]))
out = {"sensors": multibody.simulate(doc).to_document()["sensors"]}
out["scipy"] = sorted(m for m in ("scipy.linalg", "scipy.sparse") if m in sys.modules)

k = kernels.lu_solve_csc  # x = A⁻¹b from L, U in CSC: here L = 1, U = diag(Ud), no permutation
sig = next(iter(k._cache._cache_file._load_index()))[0]
k.compile(sig)
library = k.overloads[sig].library
out["loaded"] = [sum(k.stats.cache_hits.values()), hasattr(library, "_lazy_bitcode")]
n = 3
values = [[2.0, 6.0, 12.0], range(n), range(n), [0] * (n + 1), [], [], [0] * (n + 1), [], [], [1.0, 2.0, 3.0]]
args = [np.array(v, dtype=str(t.dtype)) for v, t in zip(values, sig)]
assert tuple(numba.typeof(a) for a in args) == sig

@numba.njit
def caller(b, perm_r, perm_c, Lp, Li, Lx, Up, Ui, Ux, Ud):
    return 2.0 * kernels.lu_solve_csc(b, perm_r, perm_c, Lp, Li, Lx, Up, Ui, Ux, Ud)

out["linked"] = [caller(*args).tolist(), k(*args).tolist(), hasattr(library, "_lazy_bitcode")]
print(json.dumps(out))
"""


def test_a_fresh_process_loads_the_kernels_and_a_compile_links_one():
    assert not kernel_cache.stale()
    run = subprocess.run([sys.executable, "-c", _FRESH_PROCESS, str(MINI)], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    out = json.loads(run.stdout)
    assert out["sensors"] == multibody.simulate(json.loads(MINI.read_text())).to_document()["sensors"]
    assert out["scipy"] == []  # neither numba's compiler set-up nor a small model's solve imports it
    assert out["loaded"] == [1, True]  # from the cache, its bitcode not parsed
    assert out["linked"] == [[4.0, 6.0, 8.0], [2.0, 3.0, 4.0], False]  # parsed once a compile linked it
