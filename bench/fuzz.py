"""Fuzzing at scale (issue 18): generated requests against a live service; no 5xx, no dropped connection.

    python bench/fuzz.py [--requests 10000] [--setup embedded|distributed|both]

Each setup runs as a user runs it: embedded is `mbserve serve` (SQLite, filesystem broker, its
worker); distributed is a fresh PostgreSQL database, a private redis-server, `mbserve serve
--no-worker` and `mbserve worker` (2 processes). The requests, about a third from each source:

- schemathesis: cases generated from the OpenAPI document for every operation, and its stateful
  runs along the links it infers (POST /v1/models, then GET /v1/models/{id}, POST /v1/jobs, ...);
- hypothesis: the mini example with a place replaced by a hostile value (nesting up to 3000
  levels, NUL and other control characters, lone surrogates, integers beyond a float64,
  NaN/Infinity, unicode in keys and values), overrides of real setting names, random bodies,
  hostile ids and names in every path, query and header parameter;
- HOSTILE: the red team's requests of issue 18, each once (bench/soak.py repeats them).

Prints, per setup: requests tried, answers 5xx, dropped connections (a transport error instead of
an answer), error answers not of the documented shape, the slowest response. Exit 1 when any of
the three counts is not 0. tests/service/test_fuzz_scale.py runs a 2,000-request slice in CI.
"""
from __future__ import annotations

import argparse
import contextlib
import copy
import json
import re
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import quote

import httpx
from hypothesis import HealthCheck, Phase, given, settings as hsettings, strategies as st
from hypothesis.errors import HypothesisException

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MINI = json.loads((ROOT.parent / "shared" / "examples" / "mini" / "model.json").read_text())
MOTION = json.loads((ROOT.parent / "shared" / "examples" / "motion_sine" / "model.json").read_text())
DEEP = "@@deep:"  # a string marker json.dumps writes as it is; replaced by nesting it could not write
DEEP_STRING = re.compile('"' + re.escape(DEEP) + r'(\d+)"')


class Tally:
    """Every answer, counted: 5xx, dropped connections, error bodies of the wrong shape, the slowest."""

    def __init__(self):
        self.requests = 0
        self.unsendable = 0  # generated, but not a request an HTTP client can send
        self.machine_runs_ended = 0  # stateful runs hypothesis stopped early (see run_schemathesis)
        self.server_errors: list[str] = []
        self.dropped: list[str] = []
        self.bad_shape: list[str] = []
        self.slowest = (0.0, "")
        self.statuses: dict[int, int] = {}
        self.lock = threading.Lock()

    def record(self, label: str, seconds: float, status: int | None, body: bytes = b"") -> None:
        with self.lock:
            self.requests += 1
            if seconds > self.slowest[0]:
                self.slowest = (seconds, f"{label} -> {status}")
            if status is None:
                self.dropped.append(label)
                return
            self.statuses[status] = self.statuses.get(status, 0) + 1
            if status >= 500:
                self.server_errors.append(f"{label} -> {status} {body[:300]!r}")
            elif status >= 400 and not label.startswith("HEAD") and not _error_shape(body):  # HEAD: no body
                self.bad_shape.append(f"{label} -> {status} {body[:300]!r}")

    def send(self, client: httpx.Client, method: str, url: str, **kwargs) -> httpx.Response | None:
        label = f"{method} {url[:120]}"
        started = time.perf_counter()
        try:
            request = client.build_request(method, url, **kwargs)
        except (ValueError, TypeError, httpx.InvalidURL):  # the client cannot write it (a lone surrogate ...)
            self.unsendable += 1
            return None
        try:
            answer = client.send(request)
        except httpx.LocalProtocolError:  # h11 refused to write it (control characters in the target ...)
            self.unsendable += 1
            return None
        except httpx.TransportError as exc:
            self.record(f"{label} ({type(exc).__name__})", time.perf_counter() - started, None)
            return None
        self.record(label, time.perf_counter() - started, answer.status_code, answer.content)
        return answer

    def ok(self) -> bool:
        return not (self.server_errors or self.dropped or self.bad_shape)

    def summary(self) -> str:
        lines = [f"requests tried {self.requests}, answered 5xx {len(self.server_errors)}, dropped connections "
                 f"{len(self.dropped)}, error bodies not as documented {len(self.bad_shape)}, slowest response "
                 f"{self.slowest[0]:.2f} s ({self.slowest[1]})",
                 f"generated but not sendable by an HTTP client: {self.unsendable}; stateful runs ended early by "
                 f"hypothesis: {self.machine_runs_ended}",
                 "answers by status: " + ", ".join(f"{k}: {v}" for k, v in sorted(self.statuses.items()))]
        for name, items in (("5xx", self.server_errors), ("dropped", self.dropped), ("shape", self.bad_shape)):
            lines += [f"  {name}: {item}" for item in items[:10]]
        return "\n".join(lines)


def _error_shape(body: bytes) -> bool:
    try:
        error = json.loads(body)["error"]
        return set(error) == {"code", "message", "detail"}
    except (ValueError, KeyError, TypeError):
        return False


def dumps(value) -> str:
    """JSON text, with DEEP markers written as nesting (json.dumps stops near 1000 levels) and
    NaN/Infinity as Python's json writes them (not JSON: the service must refuse them)."""
    # only whole strings that are a marker: generated text may hold the marker's characters too
    return DEEP_STRING.sub(lambda m: "[" * int(m[1]) + "1" + "]" * int(m[1]), json.dumps(value))


# ------------------------------------------------------------------ hypothesis: hostile values
CONTROL = st.characters(min_codepoint=0, max_codepoint=31)
SURROGATE = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)  # not encodable as UTF-8
TEXT = st.text(st.characters() | CONTROL | SURROGATE, max_size=12) | st.sampled_from(
    ["", "\0", "a/b", "..", "%00", "' OR 1=1 --", "é" * 300, "\u202e", "x" * 5000])
HUGE = st.sampled_from([10**400, -10**400, 10**308, 1e308, -1e308, 2**63, 2**64, -2**63 - 1, 1e-320, -0.0,
                        float("nan"), float("inf"), -float("inf"), 10**4000])
SCALAR = st.none() | st.booleans() | st.integers() | st.floats() | HUGE | TEXT
NESTED = st.sampled_from([31, 32, 33, 64, 65, 253, 254, 800, 3000]).map(lambda n: DEEP + str(n))
JSON = st.recursive(SCALAR | NESTED, lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(TEXT, inner, max_size=4), max_leaves=16)
SETTING_PATHS = [("timeIntegration", "numberOfSteps"), ("timeIntegration", "endTime"),
                 ("timeIntegration", "startTime"), ("staticSolver", "numberOfLoadSteps"),
                 ("solution", "sensors", "writePeriod"), ("timeIntegration", "newton", "maxIterations"),
                 ("timeIntegration", "generalizedAlpha", "spectralRadius"), ("staticSolver", "loadStepDuration")]


def places(doc, prefix=()):
    """Every place in a JSON document where a value can be replaced (or a key added)."""
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for key, value in items:
        yield prefix + (key,)
        yield from places(value, prefix + (key,))


PLACES = list(places(MINI))


def replaced(doc, path, value, new_key=None):
    doc = copy.deepcopy(doc)
    target = doc
    for key in path[:-1]:
        target = target[key]
    if new_key is not None and isinstance(target, dict):
        target[new_key] = value
    else:
        target[path[-1]] = value
    return doc


def nested_settings(path, value) -> dict:
    out = value
    for key in reversed(path):
        out = {key: out}
    return out


@st.composite
def hostile_model(draw):
    choice = draw(st.integers(0, 9))
    if choice == 0:
        return draw(JSON)
    path = draw(st.sampled_from(PLACES))
    new_key = draw(st.none() | TEXT | st.sampled_from(["Vcolor", "VgraphicsData", "name"]))
    return replaced(MINI, path, draw(JSON), new_key)


@st.composite
def hostile_request(draw, ids: dict):
    """(method, url, kwargs) of one generated request."""
    bad_id = draw(TEXT | st.sampled_from([ids["job"], ids["model"], ids["job"] + "\0", "0" * 65]))
    path_id = quote(bad_id.encode("utf-8", "surrogatepass"), safe="")
    kind = draw(st.integers(0, 11))
    headers = {"content-type": "application/json"}
    if draw(st.integers(0, 11)) == 0:
        header = draw(st.text(st.characters(min_codepoint=32, max_codepoint=255), max_size=300))
        headers[draw(st.sampled_from(["Idempotency-Key", "X-API-Key", "Authorization"]))] = header.encode("latin-1")
    if kind <= 2:
        return "POST", "/v1/models", {"content": dumps(draw(hostile_model())), "headers": headers}
    if kind <= 5:
        body = draw(st.sampled_from(["model", "modelId", "overrides", "raw"]))
        if body == "model":
            payload = {"model": draw(hostile_model())}
        elif body == "modelId":
            payload = {"modelId": draw(TEXT | st.just(ids["model"])), "simulationSettings": draw(st.none() | JSON)}
        elif body == "overrides":
            payload = {"model": MINI, "simulationSettings": nested_settings(draw(st.sampled_from(SETTING_PATHS)),
                                                                             draw(SCALAR | NESTED))}
        else:
            payload = draw(JSON)
        return "POST", "/v1/jobs", {"content": dumps(payload), "headers": headers}
    if kind == 6:
        tail = draw(st.sampled_from(["", "/results", "/solution", "/events", "/sensors/joint_HT",
                                     f"/sensors/{path_id}", "?wait=0"]))
        target = ids["job"] if "sensors/" + path_id in tail else path_id
        return "GET", f"/v1/jobs/{target}{tail}", {"headers": headers, "timeout": 10}
    if kind == 7:
        query = draw(st.sampled_from(["", "?expanded=true", "?expanded=" + path_id]))
        return "GET", f"/v1/models/{path_id}{query}", {"headers": headers}
    if kind == 8:
        return "DELETE", f"/v1/jobs/{path_id}", {"headers": headers}
    if kind == 9:
        params = {"cursor": bad_id.encode("utf-8", "surrogatepass"), "status": draw(TEXT),
                  "limit": draw(st.integers() | TEXT)}
        keep = draw(st.sets(st.sampled_from(list(params))))
        return "GET", "/v1/jobs", {"params": {k: v for k, v in params.items() if k in keep}, "headers": headers}
    if kind == 10:
        return "GET", f"/v1/jobs/{ids['job']}/sensors/{path_id}?format=" + quote(draw(TEXT).encode("utf-8", "surrogatepass"), safe=""), {}
    method = draw(st.sampled_from(["PUT", "PATCH", "OPTIONS", "HEAD", "TRACE"]))
    return method, draw(st.sampled_from(["/v1/jobs", "/v1/models", f"/v1/jobs/{path_id}", "/"])), {}


def run_hypothesis(client: httpx.Client, tally: Tally, count: int, ids: dict) -> None:
    @hsettings(max_examples=count, database=None, deadline=None, phases=[Phase.generate],
               suppress_health_check=list(HealthCheck))
    @given(hostile_request(ids))
    def one(request):
        method, url, kwargs = request
        tally.send(client, method, url, **kwargs)
    one()


# ------------------------------------------------------------------ schemathesis
def _timeout(case, base: float | None) -> float:
    """The client's timeout for a case: a long poll (`?wait=S`, S <= LONG_POLL_MAX_SECONDS) is
    answered after up to S seconds by design (a queued job that does not finish), so its client
    waits S more than `base` (schemathesis' default, 10 s): only a server that does not answer in
    time counts as a dropped connection."""
    from schemathesis.core.transport import DEFAULT_RESPONSE_TIMEOUT

    from service.api.routes.jobs import LONG_POLL_MAX_SECONDS
    try:
        wait = float((case.query or {}).get("wait", 0))
    except (TypeError, ValueError):
        wait = 0.0
    return (base or DEFAULT_RESPONSE_TIMEOUT) + (wait if 0 <= wait <= LONG_POLL_MAX_SECONDS else 0.0)


def run_schemathesis(schema, tally: Tally, count: int, call_kwargs: dict) -> None:
    """Per-operation cases (half of `count`) and stateful runs along inferred links (the rest)."""
    import requests
    operations = [result.ok() for result in schema.get_all_operations()]
    each = max(1, count // 2 // len(operations))

    def call(case):
        started = time.perf_counter()
        try:
            answer = case.call(**{**call_kwargs, "timeout": _timeout(case, call_kwargs.get("timeout"))})
        except requests.RequestException as exc:
            tally.record(f"{case.method} {case.formatted_path} ({type(exc).__name__})",
                         time.perf_counter() - started, None)
            return None
        tally.record(f"{case.method} {case.formatted_path}", time.perf_counter() - started,
                     answer.status_code, answer.content)
        return answer

    for operation in operations:
        @hsettings(max_examples=each, database=None, deadline=None, phases=[Phase.generate],
                   suppress_health_check=list(HealthCheck))
        @given(operation.as_strategy())
        def one(case):
            call(case)
        one()

    target = tally.requests + (count - each * len(operations))

    class Machine(schema.as_state_machine()):
        def call(self, case, **kwargs):
            answer = call(case)
            if answer is None:
                raise ConnectionError("dropped")  # counted; this run of the machine ends
            return answer

        def validate_response(self, response, case, **kwargs):
            pass  # the tally judges every answer

    while tally.requests < target:  # runs of at most 20 x 10 steps, until the budget is spent
        before = tally.requests
        try:
            Machine.run(settings=hsettings(max_examples=20, stateful_step_count=10, database=None, deadline=None,
                                           phases=[Phase.generate], suppress_health_check=list(HealthCheck)))
        except ConnectionError:
            pass
        except HypothesisException:  # a run that hypothesis ends (FlakyStrategyDefinition: the server's
            tally.machine_runs_ended += 1  # state changed under it); its requests were counted
        if tally.requests == before:
            break


# ------------------------------------------------------------------ the red team's requests
def hostile_requests(ids: dict, limit_bytes: int = 10_000_000) -> list[tuple[str, str, dict, str]]:
    """(method, url, kwargs, what) for each hostile request of issue 18."""
    def with_vcolor(depth):
        return {"model": replaced(MINI, ("objects", 1, "Vcolor"), DEEP + str(depth))}

    def steps(section, key, value, sensors=True):
        doc = replaced(MINI, ("simulationSettings",), nested_settings((section, key), value))
        if not sensors:
            doc["sensors"] = []
        return doc
    json_headers = {"content-type": "application/json"}
    out = [
        ("POST", "/v1/jobs", {"content": dumps(with_vcolor(254))}, "finding 3: Vcolor nested 254 levels"),
        ("POST", "/v1/jobs", {"content": dumps({"model": MINI, "simulationSettings": {"x": DEEP + "300"}})},
         "finding 3: simulationSettings nested 300 levels"),
        ("POST", "/v1/jobs", {"content": dumps(with_vcolor(100_000))}, "finding 3: nesting 1e5 levels"),
        ("POST", "/v1/models", {"content": dumps(with_vcolor(700)["model"])}, "finding 4: a poisoned stored model"),
        ("GET", "/v1/jobs/%00", {}, "finding 5: NUL job id"),
        ("GET", "/v1/jobs?cursor=%00", {}, "finding 5: NUL cursor"),
        ("POST", "/v1/jobs", {"json": {"modelId": "\u0000"}}, "finding 5: NUL modelId"),
        ("GET", "/v1/models/%00?expanded=true", {}, "finding 5: NUL model id"),
        ("DELETE", "/v1/jobs/%00", {}, "finding 5: NUL job id (DELETE)"),
        ("GET", f"/v1/jobs/{ids['job']}/sensors/%00", {}, "finding 5: NUL sensor name"),
        ("POST", "/v1/jobs", {"json": {"model": steps("timeIntegration", "numberOfSteps", 1e12, False)}},
         "finding 6: 1e12 steps"),
        ("POST", "/v1/jobs", {"json": {"model": {**MINI, "sensors": []}, "simulationSettings": nested_settings(
            ("timeIntegration", "numberOfSteps"), 1e30)}}, "finding 6: 1e30 steps as an override"),
        ("POST", "/v1/jobs", {"json": {"model": {**steps("staticSolver", "numberOfLoadSteps", 1e9, False),
                                                 "solve": {"type": "Static"}}}}, "finding 1: 1e9 load steps"),
        ("POST", "/v1/models", {"content": dumps(replaced(MINI, ("objects", 1, "Vcolor"), [float("nan"), 1.0]))},
         "finding 9: NaN in Vcolor"),
        ("POST", "/v1/models", {"json": replaced(MINI, ("sensors", 0, "name"), "a/b")}, "finding 10: sensor a/b"),
        ("GET", f"/v1/models/{ids['model']}?expanded=true", {}, "finding 11: expanded model"),
        ("POST", "/v1/jobs", {"json": {"model": dict(MOTION, motions=[
            dict(MOTION["motions"][0], name=f"m{k}", position="*".join(f"sin({i}*t + cos({k + 2}*t))"
                                                                      for i in range(1, 21))) for k in range(15)])}},
         "finding 7: 15 motions of 440 characters on one joint"),
        ("POST", "/v1/jobs", {"json": {"model": replaced(MOTION, ("motions", 0, "position"),
                                                         "t*1e100*1e100*1e100*1e100")}},
         "finding 8: a law beyond the float range"),
        ("POST", "/v1/jobs", {"json": {"model": replaced(MOTION, ("motions", 0, "position"), "log(t)")}},
         "finding 8: a law undefined at t0"),
        ("POST", "/v1/models", {"json": replaced(MINI, ("objects", 1, "mass"), 10**400)},
         "a number beyond a float64"),
        ("POST", "/v1/models", {"content": b'{"a": "' + b"x" * (2 * limit_bytes) + b'"}'},
         "a body twice the size limit"),
    ]
    return [(m, u, {"headers": json_headers, "timeout": 120, **k}, what) for m, u, k, what in out]


def seed(client: httpx.Client) -> dict:
    """A stored model and a finished job, so that generated requests also reach existing ids."""
    model = client.post("/v1/models", json=MINI).raise_for_status().json()["id"]
    job = client.post("/v1/jobs", json={"modelId": model}).raise_for_status().json()["id"]
    end = time.monotonic() + 120
    while client.get(f"/v1/jobs/{job}").json()["status"] in ("queued", "running") and time.monotonic() < end:
        time.sleep(0.2)
    return {"model": model, "job": job}


def fuzz(client: httpx.Client, schema, call_kwargs: dict, count: int, ids: dict | None = None, log=print) -> Tally:
    """`count` requests: the hostile list, then schemathesis and hypothesis for the rest; `ids`
    (a model and a finished job) are made by `seed` when not given."""
    tally = Tally()
    ids = ids or seed(client)
    for method, url, kwargs, _ in hostile_requests(ids):
        tally.send(client, method, url, **kwargs)
    rest = max(0, count - tally.requests)
    started = time.perf_counter()
    run_schemathesis(schema, tally, rest // 2, call_kwargs)
    log(f"  schemathesis done: {tally.requests} requests, {time.perf_counter() - started:.0f} s")
    run_hypothesis(client, tally, max(0, count - tally.requests), ids)
    log(f"  hypothesis done: {tally.requests} requests, {time.perf_counter() - started:.0f} s")
    return tally


# ------------------------------------------------------------------ the two setups
FUZZ_ENV = {"MBSERVE_RATE_LIMIT_PER_MINUTE": "100000000",
            "MBSERVE_READ_RATE_LIMIT_PER_MINUTE": "100000000", "MBSERVE_WORKER_CONCURRENCY": "2",
            "MBSERVE_JOB_TIME_LIMIT": "30"}  # generated jobs may be long: they must not pile up for an hour


@contextlib.contextmanager
def running(kind: str, work: Path):
    """The URL of a fresh embedded or distributed setup, stopped after."""
    from tests.support import free_port, redis_server, start, stop, wait_http, wait_redis
    env = {**FUZZ_ENV, "MBSERVE_DATA_DIR": str(work / "data")}
    if kind == "embedded":
        port = free_port()
        api = start(["mbserve.cli", "serve", "--port", str(port)], env, work / "api.log")
        try:
            wait_http(f"http://127.0.0.1:{port}/readyz", api, work / "api.log")
            yield f"http://127.0.0.1:{port}"
        finally:
            stop(api)
        return
    from tests.worker.conftest import distributed, fresh_database
    redis_port = free_port()
    redis = redis_server(redis_port)
    try:
        wait_redis(redis_port)
        with fresh_database("mbserve_fuzz") as database, \
                distributed(work, database, f"redis://127.0.0.1:{redis_port}/0", **env) as setup:
            yield setup["url"]
    finally:
        redis.terminate()
        redis.wait(timeout=10)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=10_000, help="per setup")
    parser.add_argument("--setup", choices=["embedded", "distributed", "both"], default="both")
    args = parser.parse_args()
    import schemathesis
    failed = False
    for kind in (["embedded", "distributed"] if args.setup == "both" else [args.setup]):
        with tempfile.TemporaryDirectory() as tmp, running(kind, Path(tmp)) as url:
            print(f"{kind} at {url}: {args.requests} requests", flush=True)
            schema = schemathesis.openapi.from_url(f"{url}/openapi.json")
            started = time.perf_counter()
            with httpx.Client(base_url=url, timeout=60) as client:
                tally = fuzz(client, schema, {"base_url": url, "timeout": 60}, args.requests)
            print(f"{kind}: {tally.summary()}\n  ({time.perf_counter() - started:.0f} s)", flush=True)
            failed |= not tally.ok()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
