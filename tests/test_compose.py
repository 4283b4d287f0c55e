"""No Docker engine in CI: check that docker-compose.yml parses and wires the services as documented."""
from pathlib import Path

import yaml

COMPOSE = Path(__file__).resolve().parent.parent / "docker-compose.yml"


def test_compose_has_the_distributed_setup():
    spec = yaml.safe_load(COMPOSE.read_text())
    services = spec["services"]
    assert set(services) == {"api", "worker", "redis", "postgres"}
    assert all("healthcheck" in s for s in services.values())
    for name in ("api", "worker"):
        env = services[name]["environment"]
        assert env["MBSERVE_BROKER_URL"].startswith("redis://redis:")
        assert env["MBSERVE_DATABASE_URL"].startswith("postgresql+psycopg://")
    assert "volumes" not in services["worker"]  # results go to PostgreSQL: no shared filesystem
    assert services["worker"]["command"] == ["mbserve", "worker"]
    assert set(spec["volumes"]) == {"pgdata", "redisdata", "results"}
