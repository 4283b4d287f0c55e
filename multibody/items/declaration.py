"""What an item type declares in its module (`ITEMS`), from which the core derives its registries.

An object type is one `ItemType`: its schema class, its role, the markers (connectors) or nodes
(bodies) it takes, its output variables, what the explicit solvers may do with it and, for a
joint with one free coordinate, that coordinate for motions. `items/__init__.py` collects the
declarations of the modules it lists; `tests/multibody/test_item_registry.py` fails when one is
incomplete.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, get_args

from ..kernels import ItemKernels

RIGID_MARKERS = frozenset({"BodyRigid", "NodeRigid"})
POSITION_MARKERS = frozenset({"BodyRigid", "BodyPosition", "NodeRigid", "NodePosition"})
COORDINATE_MARKERS = frozenset({"NodeCoordinate"})
MARKER_KINDS = {  # the marker kinds a connector takes, and what an error message calls them
    "rigid": (RIGID_MARKERS, "rigid-body markers (BodyRigid, NodeRigid)"),
    "position": (POSITION_MARKERS, "position markers"),
    "coordinate": (COORDINATE_MARKERS, "NodeCoordinate markers"),
}
ROLES = ("body", "constraint", "force")
# what Exudyn's explicit solvers do with a connector (solvers/explicit.py): "apply" its forces;
# "refuse" it when constraints are eliminated (else ignore it, as every constraint); "eliminate" it
# when it pins a node coordinate to a ground coordinate (else refuse it)
EXPLICIT = ("apply", "refuse", "eliminate")
MOTION_COORDINATES = ("sliding", "angle")  # a joint's free coordinate (kernels.joint_coordinates)


@dataclass(frozen=True)
class ItemType:
    schema: type  # its pydantic class in schema.py; its objectType literal is the type's name
    role: str  # one of ROLES
    outputs: tuple[str, ...]  # its sensors' output variables (Exudyn's list for the type)
    group: type | None = None  # constraint/force: the class that compiles all items of the type (items/__init__)
    markers: str | None = None  # connector: a key of MARKER_KINDS
    nodes: frozenset[str] = frozenset()  # body: the node types it sits on (none: a fixed body)
    body_markers: frozenset[str] = frozenset()  # body: the marker types that may sit on it
    explicit: str | None = None  # connector: one of EXPLICIT
    motion_coordinate: str | None = None  # joint with one free coordinate: one of MOTION_COORDINATES
    exudyn_multipliers: int | None = None  # Exudyn's multipliers per item where we carry fewer (solution files)
    kernels: ItemKernels | None = None  # a type with kernels of its own: its group is an items.compiled group
    # (a body's: force kernels, its group is also in System.forces)
    data_coordinates: int = 0  # force: the size of the NodeGenericData at its nodeNumber (kernels' post_newton)
    node_problems: Callable | None = None  # body on nodeNumbers: (item, its nodes' coordinates) -> [(path, message)]
    # connector: its own checks of its markers, (item, their markerTypes) -> [(path, message)]
    marker_problems: Callable | None = None

    @property
    def name(self) -> str:
        return get_args(self.schema.model_fields["objectType"].annotation)[0]

    @property
    def connector(self) -> bool:
        return self.role != "body"

    def problems(self) -> list[str]:
        """What is missing or inconsistent in this declaration."""
        out = []
        if self.role not in ROLES:
            out.append(f"role {self.role!r} is not one of {ROLES}")
        if not self.outputs:
            out.append("no output variables")
        if self.connector:
            if self.group is None:
                out.append("no group class")
            if self.markers not in MARKER_KINDS:
                out.append(f"markers {self.markers!r} is not one of {tuple(MARKER_KINDS)}")
            if self.explicit not in EXPLICIT:
                out.append(f"explicit {self.explicit!r} is not one of {EXPLICIT}")
            needed = {"constraint": ("groups", "evaluate", "output"),
                      "force": ("generalized", "jacobian_pattern", "jacobian_values", "output")}.get(self.role, ())
            out += [f"its group {self.group.__name__} has no {m}()" for m in needed
                    if self.group is not None and not callable(getattr(self.group, m, None))]
        elif self.markers or self.explicit or self.motion_coordinate:
            out.append("a body takes no markers, explicit rule or motion coordinate")
        if self.kernels is not None:
            if getattr(self.group, "KERNELS", None) is not self.kernels:
                out.append("its group is no items.compiled group with these KERNELS")
            if self.role != "constraint" and self.kernels.jacobians is None:
                out.append("a force or body type's kernels need jacobians")
        if self.data_coordinates and (self.role != "force" or self.kernels is None or self.kernels.post_newton is None):
            out.append("data coordinates need a force type's kernels with post_newton")
        if self.motion_coordinate is not None and (self.role != "constraint"
                                                   or self.motion_coordinate not in MOTION_COORDINATES):
            out.append(f"motion_coordinate {self.motion_coordinate!r}: a constraint's one of {MOTION_COORDINATES}")
        return out
