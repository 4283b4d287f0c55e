from pathlib import Path

from service.openapi import openapi_text

COMMITTED = Path(__file__).resolve().parents[2] / "openapi" / "openapi.json"


def test_openapi_json_is_up_to_date():
    assert COMMITTED.read_text() == openapi_text(), "openapi/openapi.json is stale: run `mbserve openapi`"
