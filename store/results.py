"""Results storage: sensor arrays as raw float64 (lossless, uncompressed), streamed back out as
the SPEC section 4 JSON document or as Exudyn sensor files, a chunk at a time.

Where the arrays go (`Result.storage`):
- "db": rows of `result_chunks` (~1 MiB each) in the job's finish transaction: every result up
  to `inline_result_bytes`, and all results when `Settings.results_in_db` (the distributed
  setup), so a worker needs only the database and the broker;
- "url": one file per job under `MBSERVE_RESULTS_URL`, an fsspec URL (s3://, gs://, file://...);
- "file": one file per job under the local results directory (the embedded setup);
- "npz": results stored before these, one compressed .npz per job: still read.

Compression does not pay: float64 solver output shrinks by ~10 % under zlib at a cost of ~15 %
of the solve. The formats (JSON, CSV) are store.formats'.
"""
from __future__ import annotations

import os
import zipfile
from itertools import accumulate
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import numpy as np
from sqlalchemy import ARRAY, Integer, LargeBinary, and_, bindparam, func, insert, select, true
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from .config import Settings
from .formats import CHUNK_BYTES, Memory, Source, chunk_rows, split
from .models import Result, ResultChunk, utcnow


ONE_STATEMENT_CHUNKS = 16  # chunks of a result stored in the finish's one statement (store.jobs.finish)


@dataclass
class Prepared:
    """A job's results, ready to be stored in the job's finish transaction (store.jobs.finish):
    by `add` in a transaction, or as statements after the job's UPDATE (insert_after, with
    `after_params`)."""
    result: Result
    arrays: list[np.ndarray]

    def _row(self) -> dict:
        r = self.result
        return dict(job_id=r.job_id, head=r.head, sensors=r.sensors, storage=r.storage, path=r.path,
                    created_at=utcnow())  # a column default is not applied in a CTE (insert_after)

    def _chunks(self):
        """The rows of result_chunks ("db" storage only): `sensor` is the array's index (solution included)."""
        if self.result.storage != "db":
            return
        for i, data in enumerate(self.arrays):
            step = chunk_rows(data.shape[1])
            for seq, start in enumerate(range(0, data.shape[0], step)):
                yield {"job_id": self.result.job_id, "sensor": i, "seq": seq, "data": data[start:start + step].tobytes()}

    @property
    def fits_one_statement(self) -> bool:
        if self.result.storage != "db":
            return True
        return sum(-(-a.shape[0] // chunk_rows(a.shape[1])) for a in self.arrays) <= ONE_STATEMENT_CHUNKS

    def add(self, session: Session | Connection) -> None:
        add_all(session, [self])

    def after_params(self) -> dict:
        """The values of insert_after's statements for these results: the chunks' data as one
        bytea, each chunk's start (1-based) and length in it."""
        chunks = list(self._chunks())
        lengths = [len(c["data"]) for c in chunks]
        return {**{f"r_{k}": v for k, v in self._row().items() if k != "job_id"},
                "c_sensor": [c["sensor"] for c in chunks], "c_seq": [c["seq"] for c in chunks],
                "c_start": list(accumulate(lengths[:-1], initial=1)) if chunks else [], "c_length": lengths,
                "c_data": b"".join(c["data"] for c in chunks)}

    def discard(self, settings: Settings) -> None:
        """Remove our file when the job was not ours to finish after all."""
        if self.result.storage == "file":
            (settings.results / self.result.path).unlink(missing_ok=True)
        elif self.result.storage == "url":
            fs, path = _fs(settings)
            fs.rm(f"{path}/{self.result.path}")


def add_all(session: Session | Connection, prepared: list[Prepared]) -> None:
    """Jobs' results in their finish transaction: the rows in one INSERT, then the chunks of
    those stored in the database, ONE_STATEMENT_CHUNKS to an INSERT (bounded memory for big results).
    Core INSERTs of the tables: the ORM's bulk insert took about half of a small job's finish."""
    session.execute(insert(Result.__table__), [p._row() for p in prepared])
    batch = []
    for p in prepared:
        for chunk in p._chunks():
            batch.append(chunk)
            if len(batch) == ONE_STATEMENT_CHUNKS:
                session.execute(insert(ResultChunk.__table__), batch)
                batch = []
    if batch:
        session.execute(insert(ResultChunk.__table__), batch)


def insert_after(done, chunks: bool) -> list:
    """PostgreSQL: the INSERTs of a job's results row and (`chunks`) its chunks as data-modifying
    statements that take the job id from the CTE `done` (the job's UPDATE ... RETURNING id):
    nothing is stored when the job was no longer ours. Their values are bound parameters
    (Prepared.after_params), so that the statement is built once (store.jobs.finish)."""
    cols = Result.__table__.c
    names = ("head", "sensors", "storage", "path", "created_at")
    parts = [insert(Result).from_select(["job_id", *names], select(
        done.c.id, *(bindparam(f"r_{k}", type_=cols[k].type) for k in names)).select_from(done))]
    if chunks:
        # the data as one bytea cut by substring: an array of bytea goes as text, each element
        # escaped (psycopg's array dumper), ~0.7 ms of a small job's finish for its 30 KB
        rows = func.unnest(*(bindparam(f"c_{k}", type_=ARRAY(Integer)) for k in ("sensor", "seq", "start", "length"))
                           ).table_valued("sensor", "seq", "start", "length").render_derived(name="chunk")
        data = func.substring(bindparam("c_data", type_=LargeBinary), rows.c.start, rows.c.length)
        parts.append(insert(ResultChunk).from_select(
            ["job_id", "sensor", "seq", "data"],
            select(done.c.id, rows.c.sensor, rows.c.seq, data).select_from(done).join(rows, true())))
    return parts


def _fs(settings: Settings):
    import fsspec
    fs, path = fsspec.core.url_to_fs(settings.results_url)
    return fs, path.rstrip("/")


def prepare(settings: Settings, job_id: str, token: str, results) -> Prepared:
    """Choose where the arrays go; a file is written now (named by the claim token, so a killed
    attempt leaves at most a stray file and never half of the one the database points to)."""
    head, sensors, arrays = split(results)
    size = sum(a.nbytes for a in arrays)
    if size <= settings.inline_result_bytes or (settings.results_in_db and not settings.results_url):
        return Prepared(Result(job_id=job_id, head=head, sensors=sensors, path=None, storage="db"), arrays)
    rel = f"{job_id}/{token}.f64"
    if settings.results_url:
        fs, root = _fs(settings)
        fs.makedirs(f"{root}/{job_id}", exist_ok=True)
        with fs.open(f"{root}/{rel}", "wb") as f:  # an object store shows the object when complete
            _write_arrays(f, arrays)
        return Prepared(Result(job_id=job_id, head=head, sensors=sensors, path=rel, storage="url"), arrays)
    path = settings.results / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as f:
        _write_arrays(f, arrays)
        f.flush()
        os.fsync(f.fileno())  # durable before the commit that points to it (big results only)
    os.replace(tmp, path)
    return Prepared(Result(job_id=job_id, head=head, sensors=sensors, path=rel, storage="file"), arrays)


def _write_arrays(f: IO[bytes], arrays: list[np.ndarray]) -> None:
    for a in arrays:
        if a.size:
            f.write(memoryview(a).cast("B"))


def remove_other_attempts(settings: Settings, job_id: str, keep: str | None) -> None:
    keep_name = Path(keep or "").name
    if settings.results_url:
        fs, root = _fs(settings)
        if fs.exists(f"{root}/{job_id}"):
            for f in fs.ls(f"{root}/{job_id}", detail=False):
                if Path(f).name != keep_name:
                    fs.rm(f)
    folder = settings.results / job_id
    if folder.is_dir():
        for f in folder.iterdir():
            if f.name != keep_name:
                f.unlink(missing_ok=True)


PAGE = 2  # chunks per database read: little memory per download
# a result in the database up to this size comes with its job's read (with_small_chunks)
SMALL_BYTES = CHUNK_BYTES


def with_small_chunks(query):
    """The query of a job and its Result (outer-joined), with ResultChunk.sensor and .data added:
    one row per chunk of a result stored in the database with at most SMALL_BYTES of data (in
    order), NULLs otherwise. A small job's download then reads its job, result and data in one
    query (a round trip and a session less); the data of a bigger one is read in pages."""
    sized = ResultChunk.__table__.alias("sized")
    size = select(func.sum(func.length(sized.c.data))).where(sized.c.job_id == Result.job_id) \
        .correlate_except(sized).scalar_subquery()
    return (query.add_columns(ResultChunk.sensor, ResultChunk.data)
            .outerjoin(ResultChunk, and_(ResultChunk.job_id == Result.job_id, size <= SMALL_BYTES))
            .order_by(ResultChunk.sensor, ResultChunk.seq))


def _chunks(session: Session, job_id: str, page: tuple[int, int] | None) -> list[tuple[int, bytes]]:
    """(array index, data) of the chunks of one page, (array index, first seq), or of all arrays.
    PostgreSQL sends bytea in binary: as text (hex) it would be twice the bytes plus a decode
    that holds the GIL, 3-4x the time of a download's read."""
    where = [ResultChunk.job_id == job_id]
    if page is not None:
        where += [ResultChunk.sensor == page[0], ResultChunk.seq >= page[1], ResultChunk.seq < page[1] + PAGE]
    query = select(ResultChunk.sensor, ResultChunk.data).where(*where).order_by(ResultChunk.sensor, ResultChunk.seq)
    if session.get_bind().dialect.name != "postgresql":
        return [tuple(row) for row in session.execute(query)]
    compiled = query.compile(dialect=session.get_bind().dialect)
    with session.connection().connection.driver_connection.cursor(binary=True) as cursor:
        cursor.execute(str(compiled), compiled.params)
        return cursor.fetchall()


class _Database(Source):
    """Pages of chunks, each page its own short session: no connection held while a slow
    client reads. A small result (at most a page) is read with one query for all its arrays."""

    def __init__(self, sessionmaker, job_id: str, small: bool, chunks: list[tuple[int, bytes]] | None = None):
        """`chunks`: all of them, read already (with_small_chunks)."""
        self.sessionmaker, self.job_id = sessionmaker, job_id
        self.all: dict[int, list[bytes]] | None = {} if small or chunks is not None else None
        self.read = chunks is not None
        for i, data in chunks or ():
            self.all.setdefault(i, []).append(data)

    def _read(self, page: tuple[int, int] | None) -> list[tuple[int, bytes]]:
        with self.sessionmaker() as session:
            return _chunks(session, self.job_id, page)

    def rows(self, sensor):
        index, cols, seq = sensor["index"], sensor["cols"], 0
        if self.all is not None:
            if not self.read:
                for i, data in self._read(None):
                    self.all.setdefault(i, []).append(data)
                self.read = True
            for data in self.all.get(index, ()):
                yield np.frombuffer(data, dtype="<f8").reshape(-1, cols)
            return
        while True:
            page = self._read((index, seq))
            for _, data in page:
                yield np.frombuffer(data, dtype="<f8").reshape(-1, cols)
            if len(page) < PAGE:
                return
            seq += PAGE


class _File(Source):
    """One open file (local or fsspec) for all sensors of a document."""

    def __init__(self, f: IO[bytes]):
        self.f = f

    def rows(self, sensor):
        cols, left = sensor["cols"], sensor["rows"]
        step = chunk_rows(cols)
        self.f.seek(sensor["offset"])
        while left > 0:
            n = min(left, step)
            yield np.frombuffer(self.f.read(n * cols * 8), dtype="<f8").reshape(n, cols)
            left -= n

    def __exit__(self, *exc):
        self.f.close()


class _Npz(Source):
    """Results stored before raw files: one compressed .npz per job, opened once per document."""

    def __init__(self, path: Path):
        self.zf = zipfile.ZipFile(path)

    def rows(self, sensor):
        with self.zf.open(f"{sensor['key']}.npy") as f:
            version = np.lib.format.read_magic(f)
            shape, fortran, dtype = {(1, 0): np.lib.format.read_array_header_1_0,
                                     (2, 0): np.lib.format.read_array_header_2_0}[version](f)
            if len(shape) != 2 or fortran:  # empty or oddly shaped: small, read as a whole
                f.seek(0)
                data = np.lib.format.read_array(f)
                yield data if data.ndim == 2 else data.reshape(-1, max(len(sensor.get("columns", ())), 1))
                return
            step, left = chunk_rows(shape[1]), shape[0]
            while left > 0:
                n = min(left, step)
                yield np.frombuffer(f.read(n * shape[1] * dtype.itemsize), dtype=dtype).reshape(n, shape[1])
                left -= n

    def __exit__(self, *exc):
        self.zf.close()


def open_source(settings: Settings, sessionmaker, result: Result | None,
                chunks: list[tuple[int, bytes]] | None = None) -> Source:
    """`chunks`: the (array index, data) rows a query with_small_chunks gave with the result."""
    if result is None:
        return Memory([])
    storage = result.storage or ("npz" if result.path else "db")
    if storage == "db":
        arrays = result.sensors + ([result.head["solutionArray"]] if "solutionArray" in result.head else [])
        size = sum(8 * a["rows"] * a["cols"] for a in arrays)
        return _Database(sessionmaker, result.job_id, size <= PAGE * CHUNK_BYTES,
                         chunks if chunks is not None and size <= SMALL_BYTES else None)
    if storage == "url":
        fs, root = _fs(settings)
        return _File(fs.open(f"{root}/{result.path}", "rb", block_size=CHUNK_BYTES))
    if storage == "file":
        return _File(open(settings.results / result.path, "rb", buffering=0))
    return _Npz(settings.results / result.path)


