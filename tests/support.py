"""Processes for end-to-end tests: an `mbserve serve` or a Celery worker, on free ports, stopped after."""
from __future__ import annotations

import functools
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent


POSTGRES = "host=127.0.0.1 user=postgres dbname=postgres"  # the maintenance database, for CREATE/DROP
# A test database's name says who made it and when: mbserve_<what>_p<pid>_t<unix time>_<random>.
_OURS = re.compile(r"(mbserve_[a-z_]+)_p(\d+)_t(\d+)_[0-9a-f]{8}")


def database_name(prefix: str, pid: int | None = None) -> str:
    """A new database's name, made now by `pid` (this process)."""
    assert re.fullmatch(r"mbserve_[a-z_]+", prefix), prefix
    return f"{prefix}_p{pid or os.getpid()}_t{int(time.time())}_{secrets.token_hex(4)}"


def drop_database(name: str) -> None:
    """DROP ... WITH (FORCE), again after a moment when a client connected between its
    termination of the others and the drop (a worker's reconnect)."""
    import psycopg
    for attempt in range(3):
        try:
            with psycopg.connect(POSTGRES, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            return
        except psycopg.errors.ObjectInUse:
            if attempt == 2:
                raise
            time.sleep(0.5)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def sweep_databases(before: float) -> list[str]:
    """Drop the test databases that killed runs left (SIGKILL, a CI timeout: no finalizer ran):
    only names of database_name's form, made before `before` by a process of this machine
    that is gone. Another run's database in use, and any other database, stay."""
    import psycopg
    with psycopg.connect(POSTGRES + " connect_timeout=3", autocommit=True) as conn:
        names = [row[0] for row in conn.execute("SELECT datname FROM pg_database")]
    stale = [name for name in names if (m := _OURS.fullmatch(name)) and int(m[3]) < before
             and not _alive(int(m[2]))]
    for name in stale:
        drop_database(name)
    return stale


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def redis_server(port: int) -> subprocess.Popen:
    """A private, empty redis-server on 127.0.0.1:port that keeps nothing on disk."""
    return subprocess.Popen(["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--save", "",
                             "--appendonly", "no"], stdout=subprocess.DEVNULL)


def wait_redis(port: int) -> None:
    import redis
    for _ in range(100):
        try:
            redis.Redis(port=port, socket_timeout=1).ping()
            return
        except redis.ConnectionError:
            time.sleep(0.05)
    raise RuntimeError("redis-server did not start")


def start(args: list[str], env: dict, log: Path) -> subprocess.Popen:
    """A child in its own process group, so stopping it also stops the worker processes it forked."""
    out = open(log, "wb")
    return subprocess.Popen([sys.executable, "-m", *args], cwd=ROOT, env={**os.environ, **env},
                            stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM to the child's process group; SIGKILL to whatever of it is left after 20 s."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        end = time.monotonic() + 20
        while time.monotonic() < end:
            proc.poll()
            os.killpg(proc.pid, 0)  # raises once the whole group is gone
            time.sleep(0.1)
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def wait_http(url: str, proc: subprocess.Popen, log: Path, timeout: float = 900) -> None:
    # /readyz answers 503 warming_up while a worker compiles the kernels (first start, minutes when busy)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args} exited with {proc.returncode}:\n{log.read_text()}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{url} not ready after {timeout} s:\n{log.read_text()}")


def wait_job(client: httpx.Client, job_id: str, timeout: float = 120,
             until=("succeeded", "failed", "canceled")) -> dict:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        job = client.get(f"/v1/jobs/{job_id}").raise_for_status().json()
        if job["status"] in until:
            return job
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} still {job['status']} after {timeout} s")


def same_document(served: str | bytes, doc: dict) -> bool:
    """The service's results text equals `mbserve run`'s (orjson's text of the in-process
    document), byte for byte, except solveSeconds (the wall time of each solve)."""
    import json

    import orjson
    served_doc = json.loads(served)
    doc = json.loads(json.dumps(doc))
    doc["solver"]["solveSeconds"] = served_doc["solver"].get("solveSeconds")
    return (served.encode() if isinstance(served, str) else served) == orjson.dumps(doc)


@functools.lru_cache
def in_process(case: str) -> tuple[str, dict | list]:
    """('ok', results document) or ('invalid', problems) from the core in this process, once per case."""
    import multibody

    from tests.conftest import example
    try:
        return "ok", multibody.simulate(example(case)).to_document()
    except multibody.ModelInvalid as exc:
        return "invalid", [p.to_dict() for p in exc.problems]


def check_like_in_process(client: httpx.Client, case: str) -> None:
    """POST the example as a job; the service's answer matches the core's in-process outcome."""
    from tests.conftest import example
    kind, expected = in_process(case)
    answer = client.post("/v1/jobs", json={"model": example(case)})
    if kind == "invalid":
        assert answer.status_code == 422, answer.text
        return
    job = answer.raise_for_status().json()
    assert wait_job(client, job["id"], timeout=300)["status"] == expected["status"]
    assert same_document(client.get(f"/v1/jobs/{job['id']}/results").text, expected)


def kill_busiest_descendant(pid: int) -> None:
    """SIGKILL the descendant process using the most CPU: the worker process running the job."""
    import signal

    import psutil
    children = psutil.Process(pid).children(recursive=True)
    for child in children:
        child.cpu_percent(None)
    time.sleep(0.5)
    busiest = max(children, key=lambda p: p.cpu_percent(None))
    os.kill(busiest.pid, signal.SIGKILL)


def long_running() -> dict:
    """Settings overrides that keep the mini example busy for minutes (tests cancel or time it out)."""
    return {"timeIntegration": {"numberOfSteps": 10_000_000, "endTime": 100_000.0},
            "solution": {"sensors": {"writePeriod": 10_000.0}}}


def lasting(seconds: float) -> dict:
    """Settings overrides that make the mini example's solve take about `seconds` in this process. The
    cost of a step is the difference of two solves of different lengths: a solve's fixed cost (loading,
    sensors) counted as steps would make a job on fast kernels end long before `seconds`."""
    import multibody

    from tests.conftest import example

    def overrides(steps: int) -> dict:
        return {"timeIntegration": {"numberOfSteps": steps, "endTime": steps / 100},
                "solution": {"sensors": {"writePeriod": 1.0}}}

    def solve_seconds(steps: int) -> float:
        return multibody.simulate(multibody.merge_settings(example("mini"), overrides(steps))).solver["solveSeconds"]

    solve_seconds(200)  # the first run in a process may compile
    per_step = (solve_seconds(50200) - solve_seconds(200)) / 50000
    return overrides(int(seconds / max(per_step, 1e-7)) + 1)
