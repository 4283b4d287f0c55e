"""docs/model-reference.md is generated from the schema; this fails when it is stale."""
from multibody import schema as S
from multibody.field_docs import field_description
from multibody.reference import COMMAND, model_reference
from tests.conftest import ROOT

COMMITTED = ROOT / "docs" / "model-reference.md"


def test_model_reference_is_up_to_date():
    assert COMMITTED.read_text() == model_reference(), f"docs/model-reference.md is stale: run `{COMMAND}`"


def test_every_item_type_and_parameter_is_documented():
    text = COMMITTED.read_text()
    for kind, types in S.ITEM_TYPES.items():
        for item_type, cls in types.items():
            assert f"### `{item_type}`" in text
            for name in cls.model_fields:
                if name not in (S.TYPE_KEY[kind], "visualization"):
                    assert field_description(cls, name), f"{cls.__name__}.{name} has no description"
    assert "| `HomogeneousTransformation` | `H00` … `H33` (16 values, row by row) |" in text
