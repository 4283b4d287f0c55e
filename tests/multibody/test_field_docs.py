"""Field descriptions read from attribute docstrings when a schema is made (multibody.field_docs) are
the ones pydantic's use_attribute_docstrings gives at class creation: the same JSON schema."""
import importlib.util
import sys

from multibody.field_docs import field_description

SOURCE = '''
from pydantic import BaseModel, ConfigDict, Field

from multibody import schema as S
from multibody.field_docs import add_descriptions


class Base(BaseModel):
    model_config = ConfigDict({config})
    a: float = 1.0
    """a number"""
    b: S.Vector3 = Field(default_factory=lambda: [0.0] * 3, description="given with the field")
    """not this one"""
    c: S.HT | None = None
    """a field whose schema is a reference"""
    d: int = 0


class Child(Base):
    a: float = 2.0
    d: int = 1
    """given again, with a docstring"""
'''


def _module(tmp_path, monkeypatch, name: str, config: str):
    """SOURCE with `config` as a module of its own (both ways read the docstrings from its file)."""
    path = tmp_path / f"{name}.py"
    path.write_text(SOURCE.format(config=config))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module


def test_descriptions_match_use_attribute_docstrings(tmp_path, monkeypatch):
    by_pydantic = _module(tmp_path, monkeypatch, "docs_by_pydantic", "use_attribute_docstrings=True")
    by_hook = _module(tmp_path, monkeypatch, "docs_by_hook", "json_schema_extra=add_descriptions")
    for name in ("Base", "Child"):
        expected, got = getattr(by_pydantic, name), getattr(by_hook, name)
        assert got.model_json_schema() == expected.model_json_schema()
        for field, info in expected.model_fields.items():
            assert field_description(got, field) == info.description
    # a field given again without a docstring has none (pydantic does not look in the base class)
    assert field_description(by_hook.Child, "a") is None and field_description(by_hook.Base, "a") == "a number"
