import json
import logging
import threading
from collections import OrderedDict
from typing import Annotated, Any, Callable

import multibody
from fastapi import APIRouter, Body, Request, Response
from sqlalchemy import select

from store.models import Model
from ...errors import ApiError, checked_id, join_path, not_found
from store.jobs import content_hash, store_model
from ...limits import check_json, check_model, expression_limits
from ...schemas import ERRORS, ModelCreated
from ..deps import ClientGone, OwnerDep, RateLimited, SessionDep, SettingsDep, rate_limited

log = logging.getLogger(__name__)
router = APIRouter(prefix="/v1/models", tags=["models"], responses=ERRORS)


def problems_detail(validation, prefix: str = "") -> list[dict]:
    return [{"path": join_path(prefix, p.path), "message": p.message, "item": p.item}
            for p in validation.problems]


_EXPANDED_LOCK = threading.Lock()  # also guards _VERDICTS
_VERDICTS: OrderedDict[tuple, multibody.Validation] = OrderedDict()  # passing verdicts of this process's core
VERDICTS_CACHED = 256


def validated(doc: Any, settings, prefix: str = "", gone: Callable[[], bool] | None = None, invalid_ok: bool = False,
              digest: str | None = None):
    """The core's validation, or a 422 listing every problem with its path: `limit_exceeded` when
    one of them is over a limit of the service (motions, expressions, their cost), else (unless
    `invalid_ok`) `model_invalid`. It stops when the client has gone (`gone()`). A document
    that passed is not validated again by this process (its core does not change): the verdict
    (summary and warnings) is kept by content hash (`digest`, when the caller has it) and the
    expression limits."""
    key = (digest or content_hash(doc), settings.max_motions, settings.max_expressions, settings.max_expression_cost,
           settings.max_expression_seconds)
    with _EXPANDED_LOCK:
        if key in _VERDICTS:
            _VERDICTS.move_to_end(key)
            return _VERDICTS[key]
    try:
        validation = multibody.validate_document(doc, expression_limits(settings), cancel=gone)
    except multibody.SimulationCanceled:
        raise ApiError(422, "client_gone", "the client disconnected; the validation was stopped") from None
    except Exception as exc:  # the core promises not to raise for bad input; if it does, the input is still bad
        log.exception("validate_document raised for a user document")
        raise ApiError(422, "model_invalid", f"the model could not be read: {type(exc).__name__}: {exc}",
                       [{"path": prefix or "$", "message": str(exc)}]) from exc
    limits = sorted({p.limit for p in validation.problems if p.limit})
    if limits:
        raise ApiError(422, "limit_exceeded", f"the model exceeds a limit of this service ({', '.join(limits)})",
                       problems_detail(validation, prefix))
    if not validation.ok and not invalid_ok:
        raise ApiError(422, "model_invalid", f"the model has {len(validation.problems)} problem(s)",
                       problems_detail(validation, prefix))
    if validation.ok:
        with _EXPANDED_LOCK:
            _VERDICTS[key] = multibody.Validation(True, [], validation.warnings, validation.summary)
            while len(_VERDICTS) > VERDICTS_CACHED:
                _VERDICTS.popitem(last=False)
    return validation


@router.post("", status_code=201, response_model=ModelCreated, dependencies=[RateLimited])
def create_model(doc: Annotated[dict[str, Any], Body(description="a model document (SPEC section 1)")],
                 response: Response, session: SessionDep, settings: SettingsDep, owner: OwnerDep, gone: ClientGone):
    check_json(doc, settings, "")
    check_model(doc, settings)
    validation = validated(doc, settings, "", gone)
    model = store_model(session, owner, doc, validation)
    response.headers["Location"] = f"/v1/models/{model.id}"
    return ModelCreated(id=model.id, warnings=validation.warnings, summary=validation.summary)


def owned_model(session, owner: str, model_id: str) -> Model:
    model = session.scalar(select(Model).where(Model.id == checked_id("model", model_id), Model.owner == owner))
    if model is None:
        raise not_found("model", model_id)
    return model


_EXPANDED: OrderedDict[str, str] = OrderedDict()  # model id -> expanded text; a stored model never changes
EXPANDED_CACHED_CHARS = 50_000_000  # bounds the cache's memory


def expanded_text(model: Model, settings) -> str:
    """The document after convenience items; validated once per model and process, not per GET."""
    with _EXPANDED_LOCK:
        if model.id in _EXPANDED:
            _EXPANDED.move_to_end(model.id)
            return _EXPANDED[model.id]
    expanded = multibody.validate_document(json.loads(model.document), expression_limits(settings)).expanded
    text = model.document if expanded is None else json.dumps(expanded)  # None: nothing to expand
    with _EXPANDED_LOCK:
        _EXPANDED[model.id] = text
        while sum(map(len, _EXPANDED.values())) > EXPANDED_CACHED_CHARS:
            _EXPANDED.popitem(last=False)
    return text


@router.get("/{model_id}", responses={200: {"content": {"application/json": {}}}})
def get_model(model_id: str, request: Request, session: SessionDep, settings: SettingsDep, owner: OwnerDep,
              expanded: bool = False) -> Response:
    model = owned_model(session, owner, model_id)
    if expanded:
        if model.id not in _EXPANDED:  # the expansion costs a validation: rate-limited like a POST
            rate_limited(request, owner)
        return Response(expanded_text(model, settings), media_type="application/json")
    return Response(model.document, media_type="application/json")
