"""Loading cached kernels without the work numba does for compiling: most of a cold `mbserve run`.

Measured on mini (one process, the cache fresh), numba's cache loading spends its time on two
things that only a compile needs:

- It sets up its compiler first (`target_context.refresh()`: the typing and lowering registries,
  ~0.25 s, of which ~0.18 s is scipy.linalg, imported by numba.np.arraymath to check for BLAS).
  The machine code of a cached kernel needs only numba's runtime (NRT), which is set up here; a
  compile in the same process still refreshes first, as numba's compiler always does.
- It parses the kernel's whole optimized LLVM module (bitcode, kept for linking the kernel into
  a later compile that calls it) to learn the names the kernel defines: ~0.26 s for the step
  loop's initial_accelerations alone, whose machine code loads in ~0.01 s. Here the bitcode is
  kept as bytes, the names come from the object file's symbol table (the same names:
  tests/multibody/test_kernel_loading.py), and the bitcode is parsed when a compile first links
  the kernel. (numba also counted the kernel's internal functions as defined; they cannot be
  looked up from outside its object anyway.)

`install()` replaces private methods of numba's Cache and CPUCodeLibrary, so it does so only on the
numba releases this was checked with (TESTED_NUMBA) and only if those methods are there; otherwise
loading stays numba's own (correct, slower). Machine code that is not 64-bit little-endian ELF is
loaded numba's way too.
"""
from __future__ import annotations

import struct

import numba
from llvmlite import binding as ll
from numba.core import caching, codegen
from numba.core.runtime import rtsys

TESTED_NUMBA = ("0.68",)  # major.minor releases whose private loading methods this replaces was checked with

_SHT_SYMTAB = 2
_STB_GLOBAL, _STB_WEAK = 1, 2


def exported_symbols(obj: bytes) -> set[str] | None:
    """The names an ELF64 little-endian object file defines for other objects (global and weak
    symbols not undefined); None for another format."""
    if obj[:6] != b"\x7fELF\x02\x01":
        return None
    shoff, = struct.unpack_from("<Q", obj, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", obj, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", obj, shoff + i * shentsize) for i in range(shnum)]
    names = set()
    for _, kind, _, _, offset, size, link, _, _, _ in sections:
        if kind != _SHT_SYMTAB:
            continue
        strings = sections[link][4]
        for at in range(offset, offset + size, 24):
            name, info, _, shndx, _, _ = struct.unpack_from("<IBBHQQ", obj, at)
            if name and shndx and info >> 4 in (_STB_GLOBAL, _STB_WEAK):
                start = strings + name
                names.add(obj[start:obj.index(b"\0", start)].decode())
    return names


def _load_overload(self, sig, target_context):
    rtsys.initialize(target_context)
    with self._guard_against_spurious_io_errors():
        return self._load_overload(sig, target_context)


def _unserialize(cls, codegen_, state):
    name, kind, data = state
    exported = exported_symbols(data[0]) if kind == "object" else None
    if exported is None:
        return _numba["unserialize"].__func__(cls, codegen_, state)
    object_code, shared_bitcode = data
    self = codegen_.create_library(name)
    self.enable_object_caching()
    self._set_compiled_object(object_code)
    self._lazy_bitcode = shared_bitcode
    self._finalize_final_module()
    codegen_._engine._defined_symbols |= exported
    return self


def _get_module_for_linking(self):
    bitcode = self.__dict__.pop("_lazy_bitcode", None)
    if bitcode is not None:
        self._shared_module = ll.parse_bitcode(bitcode)
        self._codegen._engine._load_defined_symbols(self._shared_module)
    return _numba["get_module_for_linking"](self)


_numba = {"load_overload": caching.Cache.__dict__.get("load_overload"),
          "unserialize": codegen.CPUCodeLibrary.__dict__.get("_unserialize"),
          "get_module_for_linking": codegen.CPUCodeLibrary.__dict__.get("_get_module_for_linking")}


def install() -> bool:
    """Load kernels this way from now on (in this process); False on another numba release or if its
    internals differ."""
    expected = (".".join(numba.__version__.split(".")[:2]) in TESTED_NUMBA
                and callable(_numba["load_overload"]) and isinstance(_numba["unserialize"], classmethod)
                and callable(_numba["get_module_for_linking"])
                and all(hasattr(caching.Cache, m) for m in ("_load_overload", "_guard_against_spurious_io_errors"))
                and hasattr(codegen.JitEngine, "_load_defined_symbols") and hasattr(rtsys, "initialize"))
    if not expected:
        return False
    caching.Cache.load_overload = _load_overload
    codegen.CPUCodeLibrary._unserialize = classmethod(_unserialize)
    codegen.CPUCodeLibrary._get_module_for_linking = _get_module_for_linking
    return True
