"""Python client of a running mbserve service (SPEC section 6).

    from mbserve.client import Client
    with Client("http://127.0.0.1:8000") as client:
        job = client.submit("model.json", timeIntegration={"numberOfSteps": 500})
        job.wait()                                   # a progress bar on stderr
        res = job.results()                          # sensors as numpy arrays
        res.sensors["joint_HT"].data, res.sensors["joint_HT"].column("H03")

One `httpx.Client` per `Client`: its connections are kept alive across calls. Every answer
that is not a success raises an `ApiError` carrying the API's problems (path, message).
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from multibody.values import Results, SensorSeries

FINISHED = ("succeeded", "failed", "canceled")
LONG_POLL_SECONDS = 1.0  # the server answers at once when the job finishes, else after this
MIN_POLL_SECONDS = 0.2  # a server without long poll answers at once: poll at most this often


class ClientError(Exception):
    """Anything the client could not do; str() is one line for the user."""


class ServiceUnreachable(ClientError):
    """No service answered at the URL (refused, timed out, not HTTP)."""


@dataclass(frozen=True)
class ApiProblem:
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class ApiError(ClientError):
    """An error answer of the API: HTTP status, error code, message and the problems it lists."""

    def __init__(self, status: int, code: str, message: str, problems: list[ApiProblem]):
        self.status, self.code, self.message, self.problems = status, code, message, problems
        super().__init__(f"{message} (HTTP {status}, {code})")


class InvalidRequest(ApiError):
    """422: the model or the request is not valid; `problems` says what and where."""


class NotFound(ApiError):
    """404: no such model, job, sensor (or not the caller's)."""


class Conflict(ApiError):
    """409: not possible in the job's state (results of a running job, cancel of a finished one)."""


class Unauthorized(ApiError):
    """401: the service needs an API key, or the key is unknown or revoked."""


_BY_STATUS = {422: InvalidRequest, 404: NotFound, 409: Conflict, 401: Unauthorized}


def _api_error(answer: httpx.Response) -> ApiError:
    try:
        error = answer.json().get("error") or {}
    except (ValueError, AttributeError):
        error = {}
    if not isinstance(error, dict):
        error = {}
    problems = [ApiProblem(str(p.get("path", "$")), str(p.get("message", ""))) for p in error.get("detail") or []
                if isinstance(p, dict)]
    message = error.get("message") or answer.text.strip()[:200] or answer.reason_phrase
    cls = _BY_STATUS.get(answer.status_code, ApiError)
    return cls(answer.status_code, error.get("code", "http_error"), message, problems)


def _sensor(doc: dict) -> SensorSeries:
    return SensorSeries(sensorType=doc["sensorType"], item=doc.get("item"),
                        outputVariableType=doc["outputVariableType"], columns=list(doc["columns"]),
                        data=np.array(doc["data"], dtype=float).reshape(-1, len(doc["columns"])))


def results_from_document(doc: dict) -> Results:
    """The results document (SPEC section 4) with each sensor's rows as a numpy array."""
    return Results(status=doc["status"], warnings=doc.get("warnings", []), solver=doc.get("solver", {}),
                   sensors={name: _sensor(s) for name, s in doc.get("sensors", {}).items()},
                   error=doc.get("error"))


def _read_json(path: Path):
    try:
        return json.loads(path.read_text())
    except OSError as exc:
        raise ClientError(f"{path}: {exc.strerror or exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ClientError(f"{path}: not a JSON document: {exc}") from None


class Client:
    """A connection to a service at `url` ("http://host:port"), with an optional API key."""

    def __init__(self, url: str, api_key: str | None = None, timeout: float = 60.0):
        if not url.startswith(("http://", "https://")):
            raise ClientError(f"the service URL must start with http:// or https:// (got {url!r})")
        self.url = url.rstrip("/")
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(base_url=self.url, headers=headers, timeout=timeout)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def request(self, method: str, path: str, **kwargs) -> httpx.Response:
        """One call of the API; an error answer raises ApiError, no answer ServiceUnreachable."""
        try:
            answer = self._http.request(method, path, **kwargs)
        except (httpx.TransportError, httpx.UnsupportedProtocol) as exc:
            raise ServiceUnreachable(f"no mbserve service answers at {self.url}: {exc or type(exc).__name__}") \
                from None
        if answer.status_code >= 400:
            raise _api_error(answer)
        return answer

    def submit(self, model: dict | str | Path, *, store_solution: bool | None = None, **overrides: Any) -> Job:
        """Submit a model (a document, or the path of a JSON file) as a job. Keyword arguments are
        simulationSettings overrides in Exudyn's nested names, e.g. timeIntegration={"endTime": 2};
        store_solution=True stores the solution (Job.solution())."""
        if isinstance(model, (str, Path)):
            model = _read_json(Path(model))
        body: dict[str, Any] = {"model": model}
        if overrides:
            body["simulationSettings"] = overrides
        if store_solution is not None:
            body["store"] = {"solution": store_solution}
        return Job(self, self.request("POST", "/v1/jobs", json=body).json())

    def job(self, job_id: str) -> Job:
        """An existing job by its id."""
        return Job(self, self.request("GET", f"/v1/jobs/{job_id}").json())

    def sweep(self, sweep: dict | str | Path, model: dict | str | Path | None = None) -> Sweep:
        """Submit a parameter sweep (SPEC section 3): a sweep document, or the path of a JSON file.
        Its model is `model` (a document or a path) when given, else the document's `model` or
        `modelId`; a `model` that is a string is a path, relative to the sweep file."""
        base = Path(".")
        if isinstance(sweep, (str, Path)):
            base = Path(sweep).parent
            sweep = _read_json(Path(sweep))
        body = dict(sweep)
        if model is not None:
            body.pop("modelId", None)
            body["model"] = model
        if isinstance(body.get("model"), (str, Path)):
            body["model"] = _read_json(base / body["model"])
        return Sweep(self, self.request("POST", "/v1/sweeps", json=body).json())


class Job:
    """A job of the service; `document` is its last status document (SPEC section 3)."""

    def __init__(self, client: Client, document: dict):
        self.client, self.document = client, document
        self.id: str = document["id"]

    def __repr__(self) -> str:
        return f"Job({self.id!r}, {self.document['status']!r}, progress={self.document['progress']:.2f})"

    def refresh(self, wait: float = 0.0) -> dict:
        """The current status document; with `wait`, the server may hold the answer until the job
        finishes or `wait` seconds pass (long poll)."""
        params = {"wait": f"{wait:g}"} if wait > 0 else None
        self.document = self.client.request("GET", f"/v1/jobs/{self.id}", params=params).json()
        return self.document

    @property
    def status(self) -> str:
        """The job's status now: queued, running, succeeded, failed or canceled."""
        return self.refresh()["status"]

    @property
    def progress(self) -> float:
        return self.document["progress"]

    @property
    def error(self) -> dict | None:
        return self.document.get("error")

    def wait(self, progress: bool = True, timeout: float | None = None) -> str:
        """Until the job has finished; its final status. A progress bar on stderr with progress=True."""
        end = None if timeout is None else time.monotonic() + timeout
        bar = _ProgressBar(self.id) if progress else None
        try:
            while self.document["status"] not in FINISHED:
                if bar:
                    bar.update(self.document)
                left = None if end is None else end - time.monotonic()
                if left is not None and left <= 0:
                    raise TimeoutError(f"job {self.id} is still {self.document['status']} after {timeout} s")
                wait = LONG_POLL_SECONDS if left is None else max(0.0, min(LONG_POLL_SECONDS, left))
                asked = time.monotonic()
                self.refresh(wait=wait)
                if self.document["status"] not in FINISHED:
                    time.sleep(max(0.0, MIN_POLL_SECONDS - (time.monotonic() - asked)))
            if bar:
                bar.update(self.document)
        finally:
            if bar:
                bar.close()
        return self.document["status"]

    def cancel(self) -> str:
        """Cancel the job if it is queued or running (Conflict when it has already finished)."""
        self.document = self.client.request("DELETE", f"/v1/jobs/{self.id}").json()
        return self.document["status"]

    def results(self, wait: bool = True) -> Results:
        """The results document, sensors as numpy arrays (columns kept). Waits for the job first
        unless wait=False (then a job that has not finished raises Conflict)."""
        if wait:
            self.wait(progress=False)
        return results_from_document(self.client.request("GET", f"/v1/jobs/{self.id}/results").json())

    def sensor(self, name: str) -> SensorSeries:
        """One sensor of a finished job."""
        return _sensor(self.client.request("GET", f"/v1/jobs/{self.id}/sensors/{name}").json())

    def solution(self, wait: bool = True) -> dict:
        """The stored solution (SPEC section 4): its metadata as the API gives it ("columns",
        "systemSizes", ...) and "data", the rows as a numpy array (time, then the coordinates).
        Waits for the job first unless wait=False; NotFound when the job stored none."""
        if wait:
            self.wait(progress=False)
        doc = self.client.request("GET", f"/v1/jobs/{self.id}/solution", params={"format": "json"}).json()
        doc["data"] = np.array(doc["data"], dtype=float).reshape(-1, len(doc["columns"]))
        return doc


class Sweep:
    """A sweep of the service; `document` is its last status document (total, done, failed, ...)."""

    def __init__(self, client: Client, document: dict):
        self.client, self.document = client, document
        self.id: str = document["id"]

    def __repr__(self) -> str:
        d = self.document
        return f"Sweep({self.id!r}, {d['status']!r}, {d['done']}/{d['total']} done, {d['failed']} failed)"

    def refresh(self) -> dict:
        self.document = self.client.request("GET", f"/v1/sweeps/{self.id}").json()
        return self.document

    @property
    def status(self) -> str:
        """queued, running, finished or canceled."""
        return self.refresh()["status"]

    def wait(self, progress: bool = True, timeout: float | None = None, poll: float = 0.5) -> dict:
        """Until every variation has finished (or the sweep was canceled); the status document.
        A progress bar on stderr with progress=True."""
        end = None if timeout is None else time.monotonic() + timeout
        bar = _ProgressBar(self.id, "sweep") if progress else None
        try:
            while self.document["status"] in ("queued", "running"):
                if bar:
                    bar.update(self.document)
                if end is not None and time.monotonic() > end:
                    raise TimeoutError(f"sweep {self.id} is still {self.document['status']} after {timeout} s")
                time.sleep(poll)
                self.refresh()
        finally:
            if bar:
                bar.close()
        return self.document

    def cancel(self) -> dict:
        """Cancel every variation that has not finished."""
        self.document = self.client.request("DELETE", f"/v1/sweeps/{self.id}").json()
        return self.document

    def csv(self) -> str:
        """The table as CSV: one row per variation in design order (partial while running)."""
        return self.client.request("GET", f"/v1/sweeps/{self.id}/table", params={"format": "csv"}).text

    def table(self):
        """The table: a pandas DataFrame indexed by variation when pandas is installed, else
        {"columns", "rows", "outputErrors"}. Outputs are None (NaN) for unfinished variations."""
        doc = self.client.request("GET", f"/v1/sweeps/{self.id}/table").json()
        try:
            import pandas
        except ImportError:
            return doc
        return pandas.DataFrame(doc["rows"], columns=doc["columns"]).set_index("index")


class _ProgressBar:
    """rich's progress bar on stderr: the job's status and simulated time / end time (a sweep's:
    finished variations / total)."""

    def __init__(self, job_id: str, what: str = "job"):
        self._bar = Progress(TextColumn(what + " {task.fields[job]} {task.fields[status]}"), BarColumn(),
                             TextColumn("{task.percentage:>5.1f}%"), TimeElapsedColumn(),
                             console=Console(stderr=True), transient=True)
        self._task = self._bar.add_task("job", total=1.0, job=job_id, status="")
        self._bar.start()

    def update(self, document: dict) -> None:
        status = document["status"]
        if "total" in document:  # a sweep
            status += f" {document['done']}/{document['total']} done, {document['failed']} failed"
        self._bar.update(self._task, completed=document["progress"], status=status)

    def close(self) -> None:
        self._bar.stop()
