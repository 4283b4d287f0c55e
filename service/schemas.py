"""Request and response bodies of the HTTP API (the model document itself is the core's)."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

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


class JobList(BaseModel):
    items: list[JobStatus]
    nextCursor: str | None = Field(description="pass as ?cursor= for the next (older) page")


ERRORS = {code: {"model": ErrorResponse} for code in (401, 404, 409, 413, 422, 429, 503)}
