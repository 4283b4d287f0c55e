"""GET /v1/jobs/{id}/solution: the stored solution (SPEC section 4), as JSON or as Exudyn's solution file."""
from typing import Literal

from fastapi import APIRouter
from fastapi.responses import StreamingResponse

from ...errors import ApiError
from store.results import solution_csv, solution_json
from ...schemas import ERRORS
from ..deps import OwnerDep, SessionDep, SettingsDep
from .jobs import finished_result

router = APIRouter(prefix="/v1/jobs", tags=["jobs"], responses=ERRORS)


@router.get("/{job_id}/solution", responses={200: {"content": {"application/json": {}, "text/csv": {}},
                                                    "description": "the system coordinates at each written time"}})
def get_solution(job_id: str, session: SessionDep, settings: SettingsDep, owner: OwnerDep,
                 format: Literal["json", "csv"] = "json"):
    job, result, head = finished_result(session, owner, job_id)
    meta = head.get("solution")
    if result is None or meta is None or result.path is None:
        raise ApiError(404, "not_found", f"job {job_id} has no stored solution; ask for one with "
                       '"store": {"solution": true} or simulationSettings.solution.file.write')
    if format == "csv":
        return StreamingResponse(solution_csv(settings.results, result.path, meta, job.id), media_type="text/csv",
                                 headers={"Content-Disposition": f'attachment; filename="{job.id}-solution.txt"'})
    return StreamingResponse(solution_json(settings.results, result.path, meta), media_type="application/json")
