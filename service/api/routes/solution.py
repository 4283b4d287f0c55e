"""GET /v1/jobs/{id}/solution: the stored solution (SPEC section 4), as JSON or as Exudyn's solution file."""
from typing import Literal

from fastapi import APIRouter

from store.db import get_autocommit
from store.formats import SOLUTION_KEY, solution_csv, solution_json
from store.results import open_source

from ...downloads import response as download
from ...errors import ApiError
from ...schemas import ERRORS
from ..deps import OwnerDep, SettingsDep
from .jobs import finished_result

router = APIRouter(prefix="/v1/jobs", tags=["jobs"], responses=ERRORS)


@router.get("/{job_id}/solution", responses={200: {"content": {"application/json": {}, "text/csv": {}},
                                                    "description": "the system coordinates at each written time"}})
def get_solution(job_id: str, settings: SettingsDep, owner: OwnerDep,
                 format: Literal["json", "csv"] = "json"):
    job, result, head, chunks = finished_result(settings, owner, job_id)
    meta = head.get("solution")
    if result is None or meta is None:
        raise ApiError(404, "not_found", f"job {job_id} has no stored solution; ask for one with "
                       '"store": {"solution": true} or simulationSettings.solution.file.write')
    array = head.get("solutionArray") or {"key": SOLUTION_KEY}  # stored as .npz before revision 0003
    source = open_source(settings, get_autocommit(settings.database), result, chunks)
    if format == "csv":
        return download(settings, source, [array], lambda text: solution_csv(source, meta, array, job.id, text),
                        "text/csv", {"Content-Disposition": f'attachment; filename="{job.id}-solution.txt"'})
    return download(settings, source, [array], lambda text: solution_json(source, meta, array, text),
                    "application/json")
