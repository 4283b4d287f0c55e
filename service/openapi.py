"""The OpenAPI document, generated from the application (`mbserve openapi` writes openapi/openapi.json)."""
import json


def openapi_text() -> str:
    from .app import create_app
    from store.config import Settings
    return json.dumps(create_app(Settings()).openapi(), indent=2, sort_keys=False) + "\n"
