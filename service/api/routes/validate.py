"""POST /v1/validate: a model document's problems (each with its JSON path) and warnings, stored
nowhere; the web interface checks a document with it as the user types."""
from typing import Annotated, Any

from fastapi import APIRouter, Body
from pydantic import BaseModel

from ...limits import check_json, check_model
from ...schemas import ERRORS, ErrorItem
from ..deps import ClientGone, OwnerDep, RateLimited, SettingsDep
from .models import problems_detail, validated

router = APIRouter(prefix="/v1/validate", tags=["models"], responses=ERRORS)


class ValidationReport(BaseModel):
    ok: bool
    problems: list[ErrorItem]
    warnings: list[dict[str, Any]]
    summary: dict[str, Any]


@router.post("", response_model=ValidationReport, dependencies=[RateLimited])
def validate_model(doc: Annotated[dict[str, Any], Body(description="a model document (SPEC section 1)")],
                   settings: SettingsDep, owner: OwnerDep, gone: ClientGone):
    """200 whether valid or not (`ok`); 413/422 `limit_exceeded` for a document over the service's limits
    (its expressions under the same budget as a stored model's)."""
    check_json(doc, settings, "")
    check_model(doc, settings)
    validation = validated(doc, settings, "", gone, invalid_ok=True)
    return {"ok": validation.ok, "problems": problems_detail(validation), "warnings": validation.warnings,
            "summary": validation.summary}
