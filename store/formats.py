"""The results document and sensor files as bytes, a chunk of rows at a time, from any source
of rows (store.results' storages, or a Results in memory for `mbserve run`). No database or web
imports: `mbserve run` uses this alone.

The JSON is orjson's, straight from the numpy rows (shortest round-trip floats, no spaces).
"""
from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from contextlib import AbstractContextManager

import numpy as np
import orjson

CHUNK_BYTES = 1 << 20
SLICE_BYTES = 1 << 18
HEAD_KEYS = ("status", "warnings", "solver", "error")
META_KEYS = ("sensorType", "item", "outputVariableType", "columns")
SOLUTION_KEY = "solution"
_NUMPY = orjson.OPT_SERIALIZE_NUMPY


def chunk_rows(cols: int) -> int:
    return max(1, CHUNK_BYTES // (8 * max(cols, 1)))


def split(results) -> tuple[dict, list[dict], list[np.ndarray]]:
    """(head, sensor metadata, arrays) of a multibody.Results: each array's metadata says where it
    is (index, rows, cols, byte offset in a file of all arrays); the solution, when stored, is the
    last array, its metadata in head["solution"] and its layout in head["solutionArray"]."""
    head = {"status": results.status, "warnings": list(results.warnings), "solver": dict(results.solver)}
    if results.error is not None:
        head["error"] = results.error
    sensors, arrays = [], []

    def layout(data: np.ndarray, columns: int) -> dict:
        data = np.ascontiguousarray(data, dtype="<f8")
        if data.ndim != 2:
            data = data.reshape(-1, columns)
        offset = sum(a.nbytes for a in arrays)
        arrays.append(data)
        return {"index": len(arrays) - 1, "rows": int(data.shape[0]), "cols": int(data.shape[1]), "offset": offset}
    for i, (name, s) in enumerate(results.sensors.items()):
        sensors.append({"name": name, "key": f"s{i}", "sensorType": s.sensorType, "item": s.item,
                        "outputVariableType": s.outputVariableType, "columns": list(s.columns),
                        **layout(s.data, len(s.columns))})
    if results.solution is not None:  # not part of the results document
        head["solution"] = results.solution.meta()
        head["solutionArray"] = {"key": SOLUTION_KEY, **layout(results.solution.data, len(results.solution.columns))}
    return head, sensors, arrays


class Source(AbstractContextManager):
    """Yields one sensor's rows, a chunk at a time, never a whole array."""

    def rows(self, sensor: dict) -> Iterator[np.ndarray]:
        raise NotImplementedError

    def __exit__(self, *exc) -> None:
        return None


class Memory(Source):
    def __init__(self, arrays: list[np.ndarray]):
        self.arrays = arrays

    def rows(self, sensor):
        data = self.arrays[sensor["index"]]
        step = chunk_rows(data.shape[1])
        for start in range(0, data.shape[0], step):
            yield data[start:start + step]


def _slices(chunk: np.ndarray) -> Iterator[np.ndarray]:
    """A chunk in pieces of SLICE_BYTES: orjson holds the GIL while it formats, and between the
    pieces the API's event loop gets its turn (~1 ms instead of ~5 ms for a whole chunk)."""
    step = max(1, SLICE_BYTES // (8 * max(chunk.shape[1], 1)))
    for start in range(0, chunk.shape[0], step):
        yield chunk[start:start + step]


def _json_rows(chunk: np.ndarray) -> bytes:
    """'[r0],[r1],...': the rows of a chunk as JSON arrays, without the enclosing brackets."""
    return b",".join(orjson.dumps(piece, option=_NUMPY)[1:-1] for piece in _slices(chunk))


def _csv_rows(chunk: np.ndarray) -> bytes:
    """'t,v1,...\n' per row, NaN as Exudyn writes it."""
    return b"".join(orjson.dumps(piece, option=_NUMPY)[2:-2].replace(b"],[", b"\n").replace(b"null", b"nan")
                    + b"\n" for piece in _slices(chunk))


def row_text(kind: str, chunk: np.ndarray) -> bytes:
    """A chunk of rows as text, "json", "csv" (a sensor file) or "solution_csv": the work of a
    download (service.downloads runs it in a process pool for big ones)."""
    if kind == "solution_csv":
        from multibody.solution import csv_rows  # here: the download pool imports this module, not the core
        return csv_rows(chunk).encode()
    return {"json": _json_rows, "csv": _csv_rows}[kind](chunk)


# How a download turns chunks into text: row_text here, or a Future of it from a process pool.
RowText = Callable[[str, np.ndarray], "bytes | Future[bytes]"]


def _data_json(source: Source, sensor: dict, text: RowText) -> Iterator[bytes | Future]:
    yield b"["
    first = True
    for chunk in source.rows(sensor):
        if chunk.size:
            if not first:
                yield b","
            yield text("json", chunk)
            first = False
    yield b"]"


def sensor_json(source: Source, sensor: dict, text: RowText = row_text) -> Iterator[bytes | Future]:
    """One sensor as in the results document: {"sensorType", "item", "outputVariableType", "columns", "data"}."""
    yield orjson.dumps({k: sensor[k] for k in META_KEYS})[:-1] + b',"data":'
    yield from _data_json(source, sensor, text)
    yield b"}"


def document_json(source: Source, head: dict, sensors: list[dict], text: RowText = row_text) -> Iterator[bytes | Future]:
    yield orjson.dumps({k: head[k] for k in HEAD_KEYS if k in head})[:-1] + b',"sensors":{'
    for i, sensor in enumerate(sensors):
        yield (b"," if i else b"") + orjson.dumps(sensor["name"]) + b":"
        yield from sensor_json(source, sensor, text)
    yield b"}}"


def document_bytes(results) -> bytes:
    """The results document of an in-process run, the same text the service streams."""
    head, sensors, arrays = split(results)
    return b"".join(document_json(Memory(arrays), head, sensors))


def sensor_csv(source: Source, sensor: dict, job_id: str, text: RowText = row_text) -> Iterator[bytes | Future]:
    """Exudyn's sensor file layout, so exudyn.plot.PlotSensor reads it: '#' header lines, then
    'time,values...' rows (shortest round-trip floats, lossless)."""
    number = re.fullmatch(r"[a-z]+(\d+)", sensor["item"] or "")
    yield (f"#Exudyn sensor output file written by mbserve; job {job_id}, sensor {json.dumps(sensor['name'])}\n"
           f"#measure {sensor['sensorType']} number = {number.group(1) if number else -1}\n"
           f"#OutputVariableType = {sensor['outputVariableType']}\n"
           f"#columns contain: {', '.join(sensor['columns'])}\n"
           f"#number of sensor values = {len(sensor['columns']) - 1}\n#\n").encode()
    for chunk in source.rows(sensor):
        if chunk.size:
            yield text("csv", chunk)


# Downloads take turns producing their next chunk: formatting holds the GIL, and with every
# download formatting at once, the API's other requests wait for it far longer.
_PRODUCING = threading.BoundedSemaphore(2)


def streamed(source: Source, parts: Iterable[bytes]) -> Iterator[bytes]:
    """The parts joined into pieces of at least CHUNK_BYTES (the server fetches each piece in a
    thread hop of its own and writes it with a system call: a small document is one piece, not
    the ~6 parts per sensor it is made of). Closes the source when the response is done (or the
    client went away)."""
    with source:
        parts = iter(parts)
        while True:
            piece, size = [], 0
            with _PRODUCING:
                for part in parts:
                    piece.append(part)
                    size += len(part)
                    if size >= CHUNK_BYTES:
                        break
            if not piece:
                return
            yield b"".join(piece)


def solution_json(source: Source, meta: dict, array: dict, text: RowText = row_text) -> Iterator[bytes | Future]:
    """The stored solution: its metadata (multibody.solution.Solution.meta) and "data": rows."""
    yield orjson.dumps(meta)[:-1] + b',"data":'
    yield from _data_json(source, array, text)
    yield b"}"


def solution_csv(source: Source, meta: dict, array: dict, job_id: str,
                 text: RowText = row_text) -> Iterator[bytes | Future]:
    """Exudyn's solution file layout, which exudyn.utilities.LoadSolutionFile reads."""
    from multibody.solution import header
    yield header(meta, f"written by mbserve; job {job_id}").encode()
    for chunk in source.rows(array):
        if chunk.size:
            yield text("solution_csv", chunk)
