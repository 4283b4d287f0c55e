"""Schemathesis against the OpenAPI document (the app's, which test_openapi keeps equal to
openapi/openapi.json): no 5xx, every answer's status, content type and body as documented."""
import shutil
import tempfile
from pathlib import Path

import schemathesis
from hypothesis import HealthCheck, settings as hsettings
from schemathesis.specs.openapi.checks import (content_type_conformance, response_schema_conformance,
                                               status_code_conformance)

from service.app import create_app
from store.config import Settings
from store.db import migrate

DATA = Path(tempfile.mkdtemp(prefix="mbserve-schemathesis-"))
SETTINGS = Settings(data_dir=DATA, reconcile_seconds=0, rate_limit_per_minute=1_000_000,
                    read_rate_limit_per_minute=1_000_000)
SETTINGS.ensure_dirs()
migrate(SETTINGS.database)
schema = schemathesis.openapi.from_asgi("/openapi.json", create_app(SETTINGS))


@schema.parametrize()
@hsettings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_answers_as_documented(case):
    case.call_and_validate(checks=[schemathesis.checks.not_a_server_error, status_code_conformance,
                                   content_type_conformance, response_schema_conformance])


def teardown_module():
    shutil.rmtree(DATA, ignore_errors=True)
