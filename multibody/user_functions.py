"""User functions as expressions (SPEC section 1): which `...UserFunction` parameter takes what.

Exudyn calls a user function with `mbs`, `t` and arguments that it documents per parameter
(Exudyn 1.13.6's names). In a document the parameter holds, instead of 0, an expression over
`t` and those arguments (`mbs` is not available): a string for a scalar result, a list of
strings for a vector. An argument that is one of the item's own parameters (`loadVector`,
`stiffness`, ...) or its `itemNumber` is a constant of the solve and is substituted when the
model is loaded; the state-dependent ones (`deltaL`, `displacement`, ...) are the program's
variables, after `t`. Compiling is user_function_programs.py (sympy); this module is the table.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from . import programs as P


@dataclass(frozen=True)
class Signature:
    """One user-function parameter: its arguments after `t` (name -> shape) in Exudyn's order,
    which of them vary with the state (the program's variables, in this order), the shape of
    its result, the item parameter each constant argument is, and an example expression."""
    arguments: dict[str, tuple[int, ...]]
    varying: tuple[str, ...]
    result: tuple[int, ...]
    example: str | list[str]
    from_item: dict[str, str]  # argument -> the item's parameter it is ("itemNumber": the item's index)


def _constants(*names: str) -> dict[str, str]:
    return {n: n for n in names}


_LOAD_VECTOR = Signature({"loadVector": (3,)}, (), (3,), ["0", "loadVector[1]*sin(2*pi*t)", "0"],
                         _constants("loadVector"))
SIGNATURES: dict[tuple[str, str, str], Signature] = {  # (list, item type, parameter) -> signature
    ("loads", "ForceVector", "loadVectorUserFunction"): _LOAD_VECTOR,
    ("loads", "TorqueVector", "loadVectorUserFunction"): _LOAD_VECTOR,
    ("loads", "MassProportional", "loadVectorUserFunction"): _LOAD_VECTOR,
    ("loads", "Coordinate", "loadUserFunction"): Signature(
        {"load": ()}, (), (), "load*sin(2*pi*t)", _constants("load")),
    ("objects", "ConnectorSpringDamper", "springForceUserFunction"): Signature(
        {"itemNumber": (), "deltaL": (), "deltaL_t": (), "stiffness": (), "damping": (), "force": ()},
        ("deltaL", "deltaL_t"), (), "stiffness*deltaL + damping*deltaL_t + force",
        {"itemNumber": "itemNumber", **_constants("stiffness", "damping", "force")}),
    ("objects", "ConnectorCoordinateSpringDamper", "springForceUserFunction"): Signature(
        {"itemNumber": (), "displacement": (), "velocity": (), "stiffness": (), "damping": (), "offset": ()},
        ("displacement", "velocity"), (), "stiffness*(displacement - offset) + damping*velocity",
        {"itemNumber": "itemNumber", **_constants("stiffness", "damping", "offset")}),
    ("objects", "ConnectorCartesianSpringDamper", "springForceUserFunction"): Signature(
        {"itemNumber": (), "displacement": (3,), "velocity": (3,), "stiffness": (3,), "damping": (3,),
         "offset": (3,)},
        ("displacement", "velocity"), (3,),
        [f"stiffness[{i}]*(displacement[{i}] - offset[{i}]) + damping[{i}]*velocity[{i}]" for i in range(3)],
        {"itemNumber": "itemNumber", **_constants("stiffness", "damping", "offset")}),
}


@dataclass
class UserFunctions:
    """The compiled user functions of a model (user_function_programs.compile_user_functions): one
    program set, and the first program of each (list, item index) that has one."""
    programs: P.ProgramSet = P.UNDEFINED
    first: dict[tuple[str, int], int] = field(default_factory=dict)
    fields: dict[tuple[str, int], str] = field(default_factory=dict)  # its parameter

    def of(self, kind: str, index: int) -> int:
        """The item's first program, or -1 (no user function)."""
        return self.first.get((kind, index), -1)

    def kernel_arguments(self) -> tuple:
        """(code, consts, start, x, work) as the kernels take them (scratch included)."""
        code, consts, start, size = self.programs
        return code, consts, start, np.empty(7), np.empty(size)

    def evaluate(self, first: int, count: int, t, *args) -> np.ndarray:
        """Programs first..first+count-1 at x = [t, *args] (t and args of one shape: one state or
        sensor rows), as an array of that shape plus (count,)."""
        t = np.asarray(t, float)
        X = np.stack(np.broadcast_arrays(t, *args), axis=-1)
        shape = X.shape[:-1]
        out = np.empty((int(np.prod(shape)), count))
        code, consts, start, size = self.programs
        P.eval_rows(code, consts, start, first, np.ascontiguousarray(X.reshape(-1, X.shape[-1])), out,
                    np.empty(size))
        return out.reshape(shape + (count,))


def signature(kind: str, item_type: str, parameter: str) -> Signature | None:
    return SIGNATURES.get((kind, item_type, parameter))


def arguments_text(sig: Signature) -> str:
    """The arguments as an expression writes them: t, deltaL, loadVector[0], loadVector[1], ..."""
    names = ["t"]
    for name, shape in sig.arguments.items():
        names += [name] if not shape else [f"{name}[{i}]" for i in range(shape[0])]
    return ", ".join(names)


def expression_form(sig: Signature) -> str:
    """How to write the parameter, for messages and the model reference."""
    what = "a string" if not sig.result else f"a list of {sig.result[0]} strings (one per component)"
    return f"{what} over {arguments_text(sig)} and the document's parameters, e.g. {json.dumps(sig.example)}"
