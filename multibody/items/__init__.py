"""Item types, one module each; the registries below are what the system compiles.

Each group handles all items of its type at once (vectorized). Constraint groups provide
`evaluate(kin, velocity_level) -> (g, C)` with index arrays `ae`, `cols`, `active`; force
groups provide `generalized(kin)` and `jacobian_values(kin)`; both provide `output(kin, k, var, ...)`,
a sensor's values over the rows of a chunk (kin: their kinematics, with a leading row axis).
A constraint type's `groups(system)` compiles its items into one group, or one per distinct row set.
"""
from .coordinate_connectors import CoordinateConstraints, CoordinateSpringDampers
from .joint_generic import JointGeneric, JointSpherical
from .joint_prismatic_x import JointPrismaticX
from .joint_revolute_z import JointRevoluteZ
from .spring_damper import CartesianSpringDampers, SpringDampers

CONSTRAINT_GROUPS = [JointPrismaticX, JointRevoluteZ, JointSpherical, JointGeneric, CoordinateConstraints]
FORCE_GROUPS = [SpringDampers, CartesianSpringDampers, CoordinateSpringDampers]
