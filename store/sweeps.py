"""Sweeps in the database: every variation is an ordinary job of the caller (its own stored model),
listed in design order in sweep_variations, each run with the usual claim, lease and single
stored result (worker.runner.execute).

The variations go to the workers a batch at a time, chosen when a worker process is free: a turn
message (RUN_TURN, on SWEEP_QUEUE) names no sweep; the worker that takes it takes the next batch
in design order of the sweep whose owner has the fewest jobs running (of those, the oldest
sweep), sends the next turn and runs the batch. So a second owner's sweep gets the next free
worker process instead of waiting behind the batches of a sweep posted before it, and any number
of workers run batches of one sweep at once. A sweep brings `sweep_batches_queued` turns; a turn
that finds no batch left ends: the broker holds that many turns per unfinished sweep at most.
A batch that stops early sends its rest as a RUN_BATCH message naming its jobs (so does the
reconciler for jobs the broker lost); when one comes up while another owner has fewer jobs
running, that owner's next batch runs instead and the rest goes to the queue's end again. Single
jobs have their own queue, which the workers read first (store.queue).
"""
from __future__ import annotations

import logging
import secrets
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import and_, bindparam, case, exists, func, insert, literal, or_, select, update
from sqlalchemy.orm import Session

from . import jobs, notify, queue
from .config import Settings
from .design import SweepSpec
from .jobs import model_row, new_job_id
from .models import Job, Model, Sweep, SweepVariation, utcnow
from .results import Prepared, add_all

log = logging.getLogger(__name__)

RUN_BATCH = "mbserve.run_sweep_batch"
RUN_TURN = "mbserve.run_sweep_turn"
STATUSES = ("queued", "running", "succeeded", "failed", "canceled")


def unfinished_variations(session: Session, owner: str) -> int:
    """The owner's sweep variations still queued or running (the per-owner limit)."""
    return session.scalar(select(func.count()).select_from(SweepVariation).join(Job, Job.id == SweepVariation.job_id)
                          .where(Job.owner == owner, Job.status.in_(("queued", "running")))) or 0


def create_sweep(session: Session, owner: str, base: Model, spec: SweepSpec, columns: list[str],
                 rows: list[tuple], variations: list[tuple[dict, object]]) -> Sweep:
    """The sweep, one model per distinct variation document, one queued (unsent) job and one
    sweep_variations row per variation, in one transaction. `variations`: (document, validation).
    Rows are inserted in bulk (executemany): ORM objects cost more than the rest of the request."""
    sweep = Sweep(id=new_job_id(), owner=owner, model_id=base.id, spec=spec.model_dump(mode="json"),
                  columns=columns, total=len(rows), sent=0)
    session.add(sweep)
    session.flush()
    models, model_ids = {}, []
    for doc, validation in variations:
        model = model_row(owner, doc, validation)
        models.setdefault(model["id"], model)
        model_ids.append(model["id"])
    ids = list(models)
    stored = set()
    for k in range(0, len(ids), 1000):
        stored.update(session.scalars(select(Model.id).where(Model.id.in_(ids[k:k + 1000]))).all())
    now = utcnow()
    new_models = [{**m, "created_at": now} for i, m in models.items() if i not in stored]
    if new_models:
        session.execute(insert(Model), new_models)
    job_ids = [new_job_id() for _ in rows]
    session.execute(insert(Job), [
        dict(id=job_id, owner=owner, model_id=model_id, settings_overrides=None, status="queued", progress=0.0,
             attempts=0, dispatched_at=None, created_at=now) for job_id, model_id in zip(job_ids, model_ids)])
    session.execute(insert(SweepVariation), [
        dict(sweep_id=sweep.id, index=index, job_id=job_id, values=list(values))
        for index, (job_id, values) in enumerate(zip(job_ids, rows))])
    session.commit()
    return sweep


def send_batch(settings: Settings, sweep_id: str, job_ids: list[str]) -> None:
    """A message naming a batch's jobs (the rest of a batch that stopped early, or jobs the broker
    lost). A failure is logged: the jobs are recorded as sent, so the reconciler sends them again
    after `requeue_after_seconds`."""
    try:
        queue.get_celery(settings).send_task(RUN_BATCH, args=[sweep_id, job_ids], queue=queue.SWEEP_QUEUE)
    except Exception as exc:
        log.warning("could not queue a batch of sweep %s (the reconciler will retry): %s", sweep_id, exc)


def send_turns(settings: Settings, n: int) -> None:
    """n turn messages. A failure is logged: the reconciler sends turns when none is left
    (restart_stalled)."""
    app = queue.get_celery(settings)
    for _ in range(n):
        try:
            app.send_task(RUN_TURN, queue=queue.SWEEP_QUEUE)
        except Exception as exc:
            log.warning("could not queue a sweep turn (the reconciler will send one): %s", exc)
            return


def take_batch(settings: Settings, session: Session, before: str | None = None) -> tuple[str, list[str]] | None:
    """(sweep id, job ids) of the next batch in design order of the sweep whose owner has the
    fewest jobs running (of those, the oldest sweep), recorded as sent; None when no sweep has
    variations left to send, or (`before`: the owner of a batch about to run) when that owner has
    no more jobs running than this one. Concurrent callers take disjoint batches (compare-and-set
    on `sent`)."""
    for _ in range(10):
        candidates = session.execute(select(Sweep.id, Sweep.owner, Sweep.sent, Sweep.total).where(
            Sweep.canceled_at.is_(None), Sweep.sent < Sweep.total).order_by(Sweep.id)).all()
        if not candidates:
            session.rollback()
            return None
        owners = {c.owner for c in candidates} | ({before} if before else set())
        running = dict(session.execute(select(Job.owner, func.count()).where(
            Job.status == "running", Job.owner.in_(owners)).group_by(Job.owner)).all())
        chosen = min(candidates, key=lambda c: running.get(c.owner, 0))  # the first, the oldest, of equals
        if before is not None and running.get(chosen.owner, 0) >= running.get(before, 0):
            session.rollback()
            return None
        start, stop = chosen.sent, min(chosen.sent + settings.sweep_batch_size, chosen.total)
        taken = session.execute(update(Sweep).where(Sweep.id == chosen.id, Sweep.sent == start).values(sent=stop))
        if taken.rowcount == 1:
            break
        session.rollback()
    else:
        return None
    ids = list(session.scalars(select(SweepVariation.job_id).where(
        SweepVariation.sweep_id == chosen.id, SweepVariation.index >= start, SweepVariation.index < stop)
        .order_by(SweepVariation.index)).all())
    session.execute(update(Job).where(Job.id.in_(ids), Job.status == "queued").values(dispatched_at=utcnow()))
    session.commit()
    return chosen.id, ids


def send_rest(settings: Settings, session: Session, sweep_id: str, job_ids: list[str]) -> None:
    """The rest of a batch back to the end of the queue (its turn again after the other work)."""
    _requeue(session, job_ids)
    session.commit()
    send_batch(settings, sweep_id, job_ids)


def _requeue(session: Session, job_ids: list[str], token: str | None = None) -> None:
    """Record jobs as sent again; with `token`, those claimed under it (claim_batch) and not run
    are queued again first, their attempt not counted."""
    if not job_ids:
        return
    if token is not None:
        session.execute(update(Job).where(Job.id.in_(job_ids), Job.lease_token == token, Job.status == "running")
                        .values(status="queued", lease_token=None, lease_expires_at=None, started_at=None,
                                attempts=Job.attempts - 1, progress=0.0))
    session.execute(update(Job).where(Job.id.in_(job_ids), Job.status == "queued").values(dispatched_at=utcnow()))


def claim_batch(session: Session, settings: Settings, sweep_id: str, job_ids: list[str]
                ) -> tuple[Sweep, str, list[tuple[Job, str]]] | None:
    """Take a batch's jobs for this worker in one transaction: (the sweep, the batch's token, the
    jobs taken with their model documents, in the batch's order), None when the sweep is gone.
    A job is taken as store.jobs.claim takes one (queued, or running under an expired lease; an
    attempt counted), all under one token, in one UPDATE ... RETURNING: a batch pays the round
    trips of one claim. The commit is not waited for, as a claim's (store.jobs._recoverable)."""
    sweep = session.get(Sweep, sweep_id)
    if sweep is None:
        session.rollback()
        return None
    documents = dict(session.execute(select(Job.id, Model.document).join(Model, Model.id == Job.model_id)
                                     .where(Job.id.in_(job_ids))).all())
    token, now = secrets.token_hex(16), utcnow()
    jobs._recoverable(session, settings)
    taken = {job.id: job for job in session.scalars(jobs._announced(
        settings,
        update(Job)
        .where(Job.id.in_(job_ids),
               or_(Job.status == "queued", and_(Job.status == "running", Job.lease_expires_at < now)))
        .values(status="running", lease_token=token, lease_expires_at=now + timedelta(seconds=settings.lease_seconds),
                attempts=Job.attempts + 1, started_at=now, progress=0.0)
        .returning(Job)), execution_options={"synchronize_session": False}).all()}
    session.commit()
    for job_id in taken:
        notify.after_commit(settings, job_id)
    return sweep, token, [(taken[j], documents[j]) for j in job_ids if j in taken]


def heartbeat_batch(session: Session, settings: Settings, token: str, job_ids: set[str], current: str | None,
                    progress: float) -> set[str]:
    """Extend the leases of a batch's jobs (`job_ids`, by primary key) still held under its token
    and record the progress of the one running (`current`); the ids still held (a job finished,
    canceled or taken over is not)."""
    jobs._recoverable(session, settings)
    held = set(session.scalars(update(Job).where(
        Job.id.in_(job_ids), Job.lease_token == token, Job.status == "running").values(
        lease_expires_at=utcnow() + timedelta(seconds=settings.lease_seconds),
        progress=case((Job.id == current, progress), else_=Job.progress)).returning(Job.id),
        execution_options={"synchronize_session": False}).all())
    if current in held and notify.postgres(settings):
        session.execute(select(notify.pg_notify(literal(current))))
    session.commit()
    if current in held:
        notify.after_commit(settings, current)
    return held


@dataclass
class Finished:
    """A variation run by a batch, to be stored by finish_batch."""
    job_id: str
    status: str
    error: dict | None
    results: Prepared | None
    outputs: dict | None
    started_at: datetime
    finished_at: datetime
    progress: float


_JOBS = Job.__table__
_VARIATIONS = SweepVariation.__table__


def finish_batch(settings: Settings, session: Session, sweep_id: str, token: str, done: list[Finished],
                 durable: bool, rest: list[str] = ()) -> list[str]:
    """Store finished variations of a batch in one transaction (a statement per kind of row, not
    per variation), and send `rest`, the batch's jobs not run, back to the queue's end; the ids
    stored. With `durable` False the commit is not waited for: the database's own crash may then
    lose it, which leaves those jobs as they were (running under the batch's lease, or queued
    when the claim was lost too), so they run again after the lease expires
    (store.jobs.reconcile) and each still ends with one result. A durable commit writes the log
    up to it, the earlier ones of the batch included. When a job is no longer ours (canceled,
    taken over) each is stored on its own (store.jobs.finish), which skips that one."""
    if not durable:
        jobs._recoverable(session, settings)
    ids = [f.job_id for f in done]
    changed = session.execute(
        update(_JOBS).where(_JOBS.c.id == bindparam("b_id"), _JOBS.c.lease_token == token,
                            _JOBS.c.status == "running")
        .values(status=bindparam("b_status"), error=bindparam("b_error"), started_at=bindparam("b_started"),
                finished_at=bindparam("b_finished"), progress=bindparam("b_progress"), lease_expires_at=None),
        [dict(b_id=f.job_id, b_status=f.status, b_error=f.error, b_started=f.started_at, b_finished=f.finished_at,
              b_progress=1.0 if f.status == "succeeded" else f.progress) for f in done]).rowcount if done else 0
    one_by_one = changed != len(done)
    if one_by_one:
        session.rollback()
        ids = [f.job_id for f in done if jobs.finish(settings, f.job_id, token, f.status, error=f.error,
                                                      results=f.results, sweep_outputs=f.outputs)]
    elif done:
        add_all(session, [f.results for f in done if f.results is not None])
        with_outputs = [dict(b_id=f.job_id, b_outputs=f.outputs) for f in done if f.outputs is not None]
        if with_outputs:
            session.execute(update(_VARIATIONS).where(_VARIATIONS.c.job_id == bindparam("b_id"))
                            .values(outputs=bindparam("b_outputs")), with_outputs)
        if notify.postgres(settings):
            session.execute(select(notify.pg_notify(Job.id)).where(Job.id.in_(ids)))
    _requeue(session, list(rest), token)
    session.commit()
    if not one_by_one:  # store.jobs.finish notified of those it stored
        for job_id in ids:
            notify.after_commit(settings, job_id)
    if rest:
        send_batch(settings, sweep_id, list(rest))
    return ids


def waiting_single(session: Session) -> str | None:
    """The oldest queued job that is no sweep's variation: a single job, which a process running a
    batch runs between two variations (worker.runner.execute_batch)."""
    return session.scalar(select(Job.id).where(Job.status == "queued", ~exists().where(SweepVariation.job_id == Job.id))
                          .order_by(Job.id).limit(1))


def start(settings: Settings, sweep: Sweep) -> None:
    """The sweep's turns: `sweep_batches_queued`, or one per batch when it has fewer."""
    send_turns(settings, min(settings.sweep_batches_queued, -(-(sweep.total - sweep.sent) // settings.sweep_batch_size)))


def restart_stalled(settings: Settings, session: Session) -> list[str]:
    """Sweeps with variations left to send when no turn is left to send them: no message waits
    in the sweeps' queue and no variation of any sweep is sent or running (the API stopped between
    storing a sweep and sending its turns, or the broker lost them): send their turns again (the
    reconciler). A turn in flight would take their batches itself."""
    old = utcnow() - timedelta(seconds=min(5.0, settings.requeue_after_seconds))
    left = list(session.scalars(select(Sweep).where(Sweep.canceled_at.is_(None), Sweep.sent < Sweep.total,
                                                    Sweep.created_at < old).order_by(Sweep.id)).all())
    if not left:
        return []
    in_flight = session.scalar(select(exists().where(
        SweepVariation.job_id == Job.id,
        or_(Job.status == "running", and_(Job.status == "queued", Job.dispatched_at.is_not(None))))))
    if in_flight or queue.waiting(settings, queue.SWEEP_QUEUE):
        return []
    for sweep in left:
        start(settings, sweep)
    return [s.id for s in left]


def dispatch(settings: Settings, session: Session, job_ids: list[str]) -> None:
    """Send jobs again (the reconciler): a sweep's variations as batches of their sweep, other
    jobs with store.queue.dispatch. Variations claimed before (their worker died while its batch
    held them) go one per message: one that kills its worker then fails alone after
    `max_attempts`, and the others of its batch run."""
    in_sweeps: dict[tuple[str, bool], list[str]] = defaultdict(list)
    for k in range(0, len(job_ids), 1000):
        for job_id, sweep_id, attempts in session.execute(
                select(SweepVariation.job_id, SweepVariation.sweep_id, Job.attempts)
                .join(Job, Job.id == SweepVariation.job_id).where(SweepVariation.job_id.in_(job_ids[k:k + 1000]))):
            in_sweeps[sweep_id, attempts > 0].append(job_id)
    taken = {j for ids in in_sweeps.values() for j in ids}
    singles = [j for j in job_ids if j not in taken]
    if singles:
        queue.dispatch(settings, session, singles)
    for (sweep_id, claimed_before), ids in in_sweeps.items():
        size = 1 if claimed_before else settings.sweep_batch_size
        for k in range(0, len(ids), size):
            send_batch(settings, sweep_id, ids[k:k + size])


def counts(session: Session, sweep_id: str) -> dict[str, int]:
    found = dict(session.execute(select(Job.status, func.count()).join(SweepVariation, SweepVariation.job_id == Job.id)
                                 .where(SweepVariation.sweep_id == sweep_id).group_by(Job.status)).all())
    return {s: found.get(s, 0) for s in STATUSES}


def status_document(session: Session, sweep: Sweep) -> dict:
    n = counts(session, sweep.id)
    ended = n["succeeded"] + n["failed"] + n["canceled"]
    if sweep.canceled_at is not None:
        status = "canceled"
    elif ended == sweep.total:
        status = "finished"
    else:
        status = "running" if ended or n["running"] else "queued"
    base = f"/v1/sweeps/{sweep.id}"
    return {"id": sweep.id, "status": status, "total": sweep.total, "queued": n["queued"], "running": n["running"],
            "done": n["succeeded"], "failed": n["failed"], "canceled": n["canceled"],
            "progress": ended / sweep.total if sweep.total else 1.0, "modelId": sweep.model_id,
            "design": sweep.spec["design"], "seed": sweep.spec.get("seed"), "parameters": sweep.columns,
            "outputs": [o["name"] for o in sweep.spec.get("outputs", [])],
            "createdAt": sweep.created_at.isoformat().replace("+00:00", "Z"),
            "links": {"self": base, "table": f"{base}/table", "model": f"/v1/models/{sweep.model_id}",
                      "view": f"/sweeps/{sweep.id}"}}


def table(session: Session, sweep: Sweep) -> tuple[list[str], list[list], list[dict]]:
    """(columns, rows in design order, output errors). A row: index, the parameter values, the
    outputs (None until the variation has succeeded), job id, job status."""
    names = [o["name"] for o in sweep.spec.get("outputs", [])]
    columns = ["index", *sweep.columns, *names, "jobId", "status"]
    rows, errors = [], []
    for index, values, outputs, job_id, status in session.execute(
            select(SweepVariation.index, SweepVariation.values, SweepVariation.outputs, SweepVariation.job_id,
                   Job.status).join(Job, Job.id == SweepVariation.job_id)
            .where(SweepVariation.sweep_id == sweep.id).order_by(SweepVariation.index)):
        got = (outputs or {}).get("values", {}) if status == "succeeded" else {}
        rows.append([index, *values, *(got.get(name) for name in names), job_id, status])
        errors.extend({"index": index, "output": name, "message": message}
                      for name, message in ((outputs or {}).get("errors") or {}).items())
    return columns, rows, errors


def cancel(session: Session, sweep: Sweep) -> None:
    """No further batches, and every variation not yet finished canceled (a running one stops at
    its worker's next heartbeat)."""
    now = utcnow()
    session.execute(update(Sweep).where(Sweep.id == sweep.id, Sweep.canceled_at.is_(None)).values(canceled_at=now))
    mine = select(SweepVariation.job_id).where(SweepVariation.sweep_id == sweep.id)
    session.execute(update(Job).where(Job.id.in_(mine), Job.status.in_(("queued", "running")))
                    .values(status="canceled", finished_at=now, lease_expires_at=None))
    session.commit()
    session.refresh(sweep)
