"""No Docker engine in CI: check that docker-compose.yml parses and wires the services as documented."""
import tomllib
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


def test_the_image_copies_every_package_the_project_installs():
    """The Dockerfile's `pip install .` packages what it copied: a package left out of a COPY line
    is missing from the image although pyproject.toml lists it."""
    root = COMPOSE.parent
    listed = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]["include"]
    packages = {pattern.rstrip("*") for pattern in listed}
    copied = {line.split()[1] for line in (root / "Dockerfile").read_text().splitlines() if line.startswith("COPY ")}
    assert packages <= copied, packages - copied
