import csv
import io
import json
from typing import Annotated, Literal

from fastapi import APIRouter, Query, Response
from sqlalchemy import select

from store import design, jobs, sweeps
from store.models import Sweep
from ...errors import ApiError, not_found
from ...limits import check_json, check_model
from ...schemas import ERRORS, Cursor, SweepCreate, SweepList, SweepStatus, SweepTable
from ...variations import checked
from ..deps import OwnerDep, RateLimited, SessionDep, SettingsDep
from .models import owned_model, validated

router = APIRouter(prefix="/v1/sweeps", tags=["sweeps"], responses=ERRORS)


def owned_sweep(session, owner: str, sweep_id: str) -> Sweep:
    sweep = session.scalar(select(Sweep).where(Sweep.id == sweep_id, Sweep.owner == owner))
    if sweep is None:
        raise not_found("sweep", sweep_id)
    return sweep


def _limit(path: str, message: str) -> ApiError:
    return ApiError(422, "limit_exceeded", "the sweep exceeds a limit of this service", [{"path": path, "message": message}])


@router.post("", status_code=202, response_model=SweepStatus, dependencies=[RateLimited])
def create_sweep(body: SweepCreate, response: Response, session: SessionDep, settings: SettingsDep, owner: OwnerDep):
    check_json(body.model, settings, "model")
    if (body.model is None) == (body.modelId is None):
        raise ApiError(422, "invalid_request", "give exactly one of modelId and model",
                       [{"path": "$", "message": "exactly one of modelId, model is required"}])
    spec = design.SweepSpec.model_validate(body.model_dump(exclude={"model", "modelId"}))
    if body.model is not None:
        check_model(body.model, settings, prefix="model")
        base_validation = validated(body.model, settings, "model")
        doc = body.model
    else:
        doc = json.loads(owned_model(session, owner, body.modelId).document)
        base_validation = validated(doc, settings, "model", invalid_ok=True)  # stored by another version?
    try:
        paths = design.check(spec, doc)
    except design.SweepInvalid as exc:
        raise ApiError(422, "sweep_invalid", exc.message, exc.problems) from None
    n = design.count(spec)
    if n > settings.max_sweep_variations:
        raise _limit("samples" if spec.samples else "parameters", f"{n} variations; the limit is "
                     f"{settings.max_sweep_variations} per sweep (MBSERVE_MAX_SWEEP_VARIATIONS)")
    pending = sweeps.unfinished_variations(session, owner)
    if pending + n > settings.max_owner_sweep_variations:
        raise _limit("$", f"{pending} variations of this caller are queued or running, {n} more would exceed "
                     f"the limit of {settings.max_owner_sweep_variations} (MBSERVE_MAX_OWNER_SWEEP_VARIATIONS)")
    if spec.design in ("random", "latinHypercube") and spec.seed is None:
        spec = spec.model_copy(update={"seed": design.new_seed()})
    rows = design.rows(spec, spec.seed)
    variations = checked(doc, spec, paths, rows, settings, base_validation)
    base = jobs.store_model(session, owner, doc, base_validation) if body.model is not None else \
        owned_model(session, owner, body.modelId)
    sweep = sweeps.create_sweep(session, owner, base, spec, [p.path for p in spec.parameters], rows, variations)
    sweeps.start(settings, sweep)
    response.headers["Location"] = f"/v1/sweeps/{sweep.id}"
    return sweeps.status_document(session, sweep)


@router.get("", response_model=SweepList)
def list_sweeps(session: SessionDep, settings: SettingsDep, owner: OwnerDep,
                limit: Annotated[int, Query(ge=1, le=1000)] = 20, cursor: Cursor = None):
    query = select(Sweep).where(Sweep.owner == owner)
    if cursor:
        query = query.where(Sweep.id < cursor)
    limit = min(limit, settings.max_list_limit)
    rows = session.scalars(query.order_by(Sweep.id.desc()).limit(limit + 1)).all()
    return {"items": [sweeps.status_document(session, s) for s in rows[:limit]],
            "nextCursor": rows[limit - 1].id if len(rows) > limit else None}


@router.get("/{sweep_id}", response_model=SweepStatus)
def get_sweep(sweep_id: str, session: SessionDep, owner: OwnerDep):
    return sweeps.status_document(session, owned_sweep(session, owner, sweep_id))


@router.get("/{sweep_id}/table", responses={200: {"model": SweepTable, "content": {"text/csv": {}},
                                                  "description": "one row per variation, in design order "
                                                                 "(partial while the sweep runs)"}})
def get_table(sweep_id: str, session: SessionDep, owner: OwnerDep, format: Literal["json", "csv"] = "json"):
    columns, rows, errors = sweeps.table(session, owned_sweep(session, owner, sweep_id))
    if format == "json":
        return Response(json.dumps({"columns": columns, "rows": rows, "outputErrors": errors}),
                        media_type="application/json")
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:  # numbers as repr (lossless), missing outputs empty, other values as JSON
        writer.writerow("" if v is None else repr(v) if isinstance(v, float) else
                        v if isinstance(v, str) or type(v) is int else json.dumps(v) for v in row)
    return Response(text.getvalue(), media_type="text/csv",
                    headers={"Content-Disposition": f'attachment; filename="sweep-{sweep_id}.csv"'})


@router.delete("/{sweep_id}", response_model=SweepStatus)
def cancel_sweep(sweep_id: str, session: SessionDep, owner: OwnerDep):
    sweep = owned_sweep(session, owner, sweep_id)
    sweeps.cancel(session, sweep)
    return sweeps.status_document(session, sweep)

