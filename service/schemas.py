"""Request and response bodies of the HTTP API (the model document itself is the core's)."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ModelDocument = dict[str, Any]  # validated by multibody.validate_document, problems reported with paths


class ErrorItem(BaseModel):
    path: str
    message: str


class ErrorInfo(BaseModel):
    code: str
    message: str
    detail: list[dict[str, Any]] = []


class ErrorResponse(BaseModel):
    error: ErrorInfo


class ModelCreated(BaseModel):
    id: str
    warnings: list[dict[str, Any]]
    summary: dict[str, Any]


class JobCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    modelId: str | None = Field(None, description="a stored model (POST /v1/models)")
    model: ModelDocument | None = Field(None, description="or the model document itself")
    simulationSettings: dict[str, Any] | None = Field(
        None, description="deep-merged over the model's simulationSettings")


class JobStatus(BaseModel):
    id: str
    status: Literal["queued", "running", "succeeded", "failed", "canceled"]
    progress: float = Field(description="simulated time / end time")
    modelId: str
    createdAt: str
    startedAt: str | None
    finishedAt: str | None
    error: ErrorInfo | None
    links: dict[str, str]


class JobList(BaseModel):
    items: list[JobStatus]
    nextCursor: str | None = Field(description="pass as ?cursor= for the next (older) page")


ERRORS = {code: {"model": ErrorResponse} for code in (401, 404, 409, 413, 422, 429, 503)}
