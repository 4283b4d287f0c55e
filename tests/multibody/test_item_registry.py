"""Every object type of the schema is declared once, completely, in an item module, and the
registries the core reads are the declarations' (issue 12: a forgotten registry failed silently)."""
from __future__ import annotations

import pytest

from multibody import capabilities, items, model, outputs, schema as S
from multibody.items.declaration import ItemType
from multibody.items.spring_damper import SpringDampers


def test_every_schema_object_type_has_a_complete_declaration():
    schema_types = S.ITEM_TYPES["objects"]
    assert set(schema_types) == set(items.OBJECT_TYPES), "schema object types without an item module, or back"
    for name, decl in items.OBJECT_TYPES.items():
        assert decl.schema is schema_types[name], f"{name}: its declaration names another schema class"
        assert not decl.problems(), (name, decl.problems())
        if decl.connector:
            assert decl.group.OBJECT_TYPE == name, f"{name}: its group compiles {decl.group.OBJECT_TYPE}"


def test_an_incomplete_declaration_is_reported():
    class NoJacobian:  # a force group without jacobian_pattern/jacobian_values
        OBJECT_TYPE = "ConnectorSpringDamper"

        def generalized(self, kin): ...

        def output(self, kin, k, var): ...

    assert ItemType(S.ObjectConnectorSpringDamper, "force", (), SpringDampers, markers="position",
                    explicit="apply").problems() == ["no output variables"]
    problems = ItemType(S.ObjectConnectorSpringDamper, "force", ("Force",), NoJacobian, markers="positions").problems()
    assert any("markers 'positions'" in p for p in problems) and any("explicit None" in p for p in problems)
    assert any("no jacobian_pattern()" in p for p in problems) and any("no jacobian_values()" in p for p in problems)
    with pytest.raises(ValueError, match="declared twice"):
        items.register(items.OBJECT_TYPES["JointGeneric"])


def test_the_registries_are_derived_from_the_declarations():
    decl = items.OBJECT_TYPES
    assert items.constraint_groups() == list(dict.fromkeys(t.group for t in decl.values() if t.role == "constraint"))
    assert dict(items.MOTION_JOINTS) == {"JointPrismaticX": "sliding", "JointRevoluteZ": "angle"}
    assert {t: v for t, v in outputs.OUTPUT_VARIABLES["objects"].items()} == {t: d.outputs for t, d in decl.items()}
    assert model.CONNECTOR_MARKERS["JointSpherical"][0] == {"BodyRigid", "BodyPosition", "NodeRigid", "NodePosition"}
    assert outputs.body_types() == {"Ground", "RigidBody", "MassPoint", "RigidBody2D", "MassPoint2D", "GenericODE2",
                                   "BeamGeometricallyExact2D", "Mass1D", "RotationalMass1D", "ANCFCable2D"}
    assert model.MARKER_BODIES["BodyMass"] == {"RigidBody", "MassPoint", "RigidBody2D", "MassPoint2D", "Mass1D"}
    assert capabilities.EXPLICIT_RULES["ConnectorCoordinate"] == "eliminate"
