"""Request and response bodies of the HTTP API (the model document itself is the core's)."""
from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import Query
from pydantic import BaseModel, ConfigDict, Field

from store.design import SweepSpec

# ids are lowercase hex (service.jobs); anything else is refused before a database sees it
ID_PATTERN = r"^[0-9a-f]{1,64}$"
Cursor = Annotated[str | None, Query(pattern=ID_PATTERN, description="nextCursor of the previous page")]
KEY_PATTERN = r"^[\x21-\x7e]{1,255}$"  # Idempotency-Key: visible ASCII

ModelDocument = dict[str, Any]  # validated by multibody.validate_document, problems reported with paths


class ErrorItem(BaseModel):
    model_config = ConfigDict(extra="allow")

    path: str = Field(description="where, as the core writes paths: 'objects[2].markerNumbers', '$' for all")
    message: str


class ErrorInfo(BaseModel):
    code: str
    message: str
    detail: list[ErrorItem] = []


class JobError(BaseModel):
    """Why a job failed: the core's error (detail: simulated time, items involved, ...) or the
    service's (time_limit, worker_lost, internal_error)."""
    code: str
    message: str
    detail: Any = None


class ErrorResponse(BaseModel):
    error: ErrorInfo


class ModelCreated(BaseModel):
    id: str
    warnings: list[dict[str, Any]]
    summary: dict[str, Any]


class JobStore(BaseModel):
    model_config = ConfigDict(extra="forbid")

    solution: bool | None = Field(None, description="store the solution (GET /v1/jobs/{id}/solution); the same as "
                                                    "simulationSettings.solution.file.write")


class JobCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    modelId: str | None = Field(None, description="a stored model (POST /v1/models)")
    model: ModelDocument | None = Field(None, description="or the model document itself")
    simulationSettings: dict[str, Any] | None = Field(
        None, description="deep-merged over the model's simulationSettings")
    store: JobStore | None = Field(None, description="what to store besides the sensors")


class JobStatus(BaseModel):
    id: str
    status: Literal["queued", "running", "succeeded", "failed", "canceled"]
    progress: float = Field(description="simulated time / end time")
    modelId: str
    createdAt: str
    startedAt: str | None
    finishedAt: str | None
    error: JobError | None
    links: dict[str, str]
    statusDetail: str | None = Field(None, description="why a queued job waits, when the service knows (e.g. the "
                                                       "worker compiling the numerical kernels at its first start)")


class JobList(BaseModel):
    items: list[JobStatus]
    nextCursor: str | None = Field(description="pass as ?cursor= for the next (older) page")


ERRORS = {code: {"model": ErrorResponse} for code in (401, 404, 409, 413, 422, 429, 503)}


class SweepCreate(SweepSpec):
    """A sweep (SPEC section 3): over a stored model or one given inline."""
    modelId: str | None = Field(None, description="a stored model (POST /v1/models)")
    model: ModelDocument | None = Field(None, description="or the model document itself")


class SweepStatus(BaseModel):
    id: str
    status: Literal["queued", "running", "finished", "canceled"]
    total: int = Field(description="variations")
    queued: int
    running: int
    done: int = Field(description="variations that succeeded")
    failed: int
    canceled: int
    progress: float = Field(description="finished variations (done, failed or canceled) / total")
    modelId: str
    design: str
    seed: int | None = Field(description="the seed of a random or latinHypercube design (chosen when not given)")
    parameters: list[str] = Field(description="the parameters' paths as given: the table's columns after index")
    outputs: list[str] = Field(description="the outputs' names: the table's columns after the parameters")
    createdAt: str
    links: dict[str, str]


class SweepList(BaseModel):
    items: list[SweepStatus] = Field(description="the caller's sweeps, newest first")
    nextCursor: str | None = Field(description="pass as ?cursor= for the next (older) page")


class SweepTable(BaseModel):
    columns: list[str] = Field(description="index, the parameters' paths, the outputs' names, jobId, status")
    rows: list[list[Any]] = Field(description="one per variation in design order; outputs null until it succeeded")
    outputErrors: list[dict[str, Any]] = Field(description="outputs that could not be computed: index, output, message")
