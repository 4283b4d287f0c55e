"""Item types, one module each; every registry of object types is derived from their declarations.

Each module declares `ITEMS`, a tuple of declaration.ItemType (schema class, role, markers or
nodes, outputs, explicit-solver rule, motion coordinate) with the group class that compiles all
items of the type at once (vectorized). Constraint groups provide `evaluate(kin, velocity_level)
-> (g, C)` with index arrays `ae`, `cols`, `active`; force groups provide `generalized(kin)` and
`jacobian_values(kin)`; both provide `output(kin, k, var, ...)`, a sensor's values over the rows
of a chunk (kin: their kinematics, with a leading row axis). A constraint type's `groups(system)`
compiles its items into one group, or one per distinct row set. To add a type: its module, and
its name in MODULES (see README.md).
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Callable

from .. import kernels as K
from .. import schema as S
from . import (ancf_cable_2d, beam_2d, bodies, connector_distance, connector_gravity, contact_sphere_sphere, contact_sphere_triangle,
               coordinate_connectors, generic_ode2, joint_generic, joint_prismatic_2d, joint_prismatic_x,
               joint_revolute_2d, joint_revolute_z, joint_rolling_disc, onedim, rigid_body_spring_damper,
               rolling_disc_penalty, spring_damper, torsional_spring_damper)
from .declaration import MARKER_KINDS, ItemType

# the order is that of the compiled model: λ indices, and the sums of forces
MODULES = [bodies, joint_prismatic_x, joint_revolute_z, joint_generic, joint_revolute_2d, joint_prismatic_2d,
           spring_damper, coordinate_connectors, torsional_spring_damper, connector_distance,
           rigid_body_spring_damper, joint_rolling_disc, generic_ode2, connector_gravity, rolling_disc_penalty,
           contact_sphere_sphere, beam_2d, onedim, contact_sphere_triangle, ancf_cable_2d]
OBJECT_TYPES: dict[str, ItemType] = {}  # objectType -> its declaration, in the order of MODULES


_version = [0]  # bumped by register: derived tables recompute


def register(item: ItemType, rebuild_schema: bool = True) -> None:
    """Add a declaration (the modules of MODULES at import; a test's own item type at its start).
    rebuild_schema=False: the document's schema is rebuilt later (schema.rebuild_objects)."""
    if item.name in OBJECT_TYPES:
        raise ValueError(f"item type {item.name} is declared twice")
    OBJECT_TYPES[item.name] = item
    if S.ITEM_TYPES["objects"].get(item.name) is not item.schema:  # a schema class of the item's own module
        S.add_object_type(item.schema, rebuild=rebuild_schema)
    if item.kernels is not None:
        if item.kernels.data in K.ITEM_KERNELS:
            raise ValueError(f"item type {item.name}: its data class is another type's")
        K.ITEM_KERNELS[item.kernels.data] = item.kernels
    _version[0] += 1


def unregister(name: str) -> None:
    """Undo register (registry(): a test's registry without some types)."""
    item = OBJECT_TYPES.pop(name)
    if item.schema.__module__ != S.__name__:
        S.remove_object_type(name)
    if item.kernels is not None:
        del K.ITEM_KERNELS[item.kernels.data]
    _version[0] += 1


@contextmanager
def registry(*added: ItemType, without: Callable[[ItemType], bool] = lambda item: False) -> Iterator[None]:
    """The registry with the types `added` and without those `without` selects (a test's own types), then
    exactly as before, order included: it is the compiled model's, and the kernels cached on disk key on it."""
    saved = dict(OBJECT_TYPES), dict(K.ITEM_KERNELS), dict(S.ITEM_TYPES["objects"])
    try:
        for item in [t for t in OBJECT_TYPES.values() if without(t)]:
            unregister(item.name)
        for item in added:
            register(item)
        yield
    finally:
        for table, before in zip((OBJECT_TYPES, K.ITEM_KERNELS, S.ITEM_TYPES["objects"]), saved):
            table.clear()
            table.update(before)
        S.rebuild_objects()
        _version[0] += 1


class Derived(Mapping):
    """A registry table made from the declarations, remade when a type is registered later."""

    def __init__(self, make: Callable[[], dict]):
        self._make, self._seen, self._table = make, -1, {}

    def _current(self) -> dict:
        if self._seen != _version[0]:
            self._table, self._seen = self._make(), _version[0]
        return self._table

    def __getitem__(self, key):
        return self._current()[key]

    def __iter__(self):
        return iter(self._current())

    def __len__(self) -> int:
        return len(self._current())


for _module in MODULES:
    for _item in _module.ITEMS:
        register(_item, rebuild_schema=False)
S.rebuild_objects()


def of_role(role: str) -> list[ItemType]:
    return [t for t in OBJECT_TYPES.values() if t.role == role]


def constraint_groups() -> list[type]:
    """The group classes of the constraint types, in declaration order."""
    return list(dict.fromkeys(t.group for t in of_role("constraint")))


def force_groups() -> list[type]:
    """The group classes of the force types and of the bodies with force kernels of their own."""
    return list(dict.fromkeys(t.group for t in OBJECT_TYPES.values() if t.role == "force"
                              or (t.role == "body" and t.kernels is not None)))


def mass_body_groups() -> list[type]:
    """The group classes of the bodies without kernels of their own whose constant mass matrix joins
    System.constant_mass (mass_triplets()); ObjectGenericODE2's, which the System holds itself, first."""
    return list(dict.fromkeys(t.group for t in of_role("body") if t.kernels is None and t.group is not None
                              and hasattr(t.group, "mass_triplets")))


def _by_name(value: Callable[[ItemType], object], where: Callable[[ItemType], bool]) -> Derived:
    return Derived(lambda: {t.name: value(t) for t in OBJECT_TYPES.values() if where(t)})


# objectType -> (allowed marker types, what to call them) of every connector
CONNECTOR_MARKERS = _by_name(lambda t: MARKER_KINDS[t.markers], lambda t: t.connector)
# objectType -> its free coordinate ("sliding" or "angle"): the joints a motion can drive
MOTION_JOINTS = _by_name(lambda t: t.motion_coordinate, lambda t: t.motion_coordinate is not None)
OBJECT_OUTPUTS = Derived(lambda: {t.name: t.outputs for role in ("body", "constraint", "force")  # objectType -> its
                                  for t in of_role(role)})  # output variables
BODY_NODES = _by_name(lambda t: t.nodes, lambda t: t.role == "body")  # body type -> its node types
EXPLICIT_RULES = _by_name(lambda t: t.explicit, lambda t: t.connector)  # connector -> declaration.EXPLICIT
# connector -> the number of data coordinates of its NodeGenericData (types with a discontinuous iteration)
DATA_COORDINATES = _by_name(lambda t: t.data_coordinates, lambda t: t.data_coordinates > 0)
EXUDYN_MULTIPLIERS = _by_name(lambda t: t.exudyn_multipliers, lambda t: t.exudyn_multipliers is not None)
# body marker type -> the body types it may sit on
MARKER_BODIES = Derived(lambda: {m: {t.name for t in of_role("body") if m in t.body_markers}
                                 for m in dict.fromkeys(m for t in of_role("body") for m in sorted(t.body_markers))})
