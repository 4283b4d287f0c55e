"""Results storage: sensor arrays losslessly in one compressed .npz per job attempt, streamed
back out as the SPEC section 4 JSON document or as Exudyn sensor files, chunk by chunk.

The JSON text is what `json.dumps(results.to_document())` gives (Python float repr), so the
service's document equals `mbserve run`'s byte for byte.
"""
from __future__ import annotations

import json
import os
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from multibody.solution import csv_rows, header

CHUNK_ROWS = 4096
SOLUTION_KEY = "solution"
HEAD_KEYS = ("status", "warnings", "solver", "error")
META_KEYS = ("sensorType", "item", "outputVariableType", "columns")


def write_results(root: Path, job_id: str, token: str, results) -> tuple[str | None, dict, list[dict]]:
    """Write `results` (a multibody.Results) under root; returns (relative path, head, sensor metadata).

    The file is named by the claim token and renamed into place, so a killed attempt leaves at
    most a stray file and never half of the file the database points to.
    """
    head = {"status": results.status, "warnings": list(results.warnings), "solver": dict(results.solver)}
    if results.error is not None:
        head["error"] = results.error
    sensors, arrays = [], {}
    if results.solution is not None:  # its metadata in the head (not part of the results document)
        head["solution"] = results.solution.meta()
        arrays[SOLUTION_KEY] = np.ascontiguousarray(results.solution.data)
    for i, (name, s) in enumerate(results.sensors.items()):
        key = f"s{i}"
        data = np.ascontiguousarray(s.data)
        arrays[key] = data
        sensors.append({"name": name, "key": key, "sensorType": s.sensorType, "item": s.item,
                        "outputVariableType": s.outputVariableType, "columns": list(s.columns),
                        "rows": int(data.shape[0]) if data.ndim else 0})
    if not arrays:
        return None, head, sensors
    rel = f"{job_id}/{token}.npz"
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as f:
        np.savez_compressed(f, **arrays)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    return rel, head, sensors


def remove_other_attempts(root: Path, job_id: str, keep: str | None) -> None:
    folder = root / job_id
    if folder.is_dir():
        for f in folder.iterdir():
            if f.name != Path(keep or "").name:
                f.unlink(missing_ok=True)


def iter_rows(root: Path, rel: str, key: str) -> Iterator[np.ndarray]:
    """The rows of one stored array, CHUNK_ROWS at a time, never the whole array in memory."""
    with zipfile.ZipFile(root / rel) as zf, zf.open(f"{key}.npy") as f:
        version = np.lib.format.read_magic(f)
        read_header = {(1, 0): np.lib.format.read_array_header_1_0,
                       (2, 0): np.lib.format.read_array_header_2_0}[version]
        shape, fortran, dtype = read_header(f)
        if len(shape) != 2 or fortran:  # empty or oddly shaped: small, read as a whole
            f.seek(0)
            yield np.lib.format.read_array(f)
            return
        row_bytes = shape[1] * dtype.itemsize
        left = shape[0]
        while left > 0:
            n = min(left, CHUNK_ROWS)
            buf = f.read(n * row_bytes)
            yield np.frombuffer(buf, dtype=dtype).reshape(n, shape[1])
            left -= n


def _data_json(root: Path, rel: str | None, sensor: dict) -> Iterator[str]:
    yield "["
    first = True
    if rel is not None:
        for chunk in iter_rows(root, rel, sensor["key"]):
            if chunk.size == 0:
                continue
            if not first:
                yield ", "
            yield json.dumps(chunk.tolist())[1:-1]
            first = False
    yield "]"


def sensor_json(root: Path, rel: str | None, sensor: dict) -> Iterator[str]:
    """One sensor as in the results document: {"sensorType", "item", "outputVariableType", "columns", "data"}."""
    yield json.dumps({k: sensor[k] for k in META_KEYS})[:-1] + ', "data": '
    yield from _data_json(root, rel, sensor)
    yield "}"


def document_json(root: Path, head: dict, rel: str | None, sensors: list[dict]) -> Iterator[str]:
    yield json.dumps({k: head[k] for k in HEAD_KEYS if k in head})[:-1] + ', "sensors": {'
    for i, sensor in enumerate(sensors):
        yield (", " if i else "") + json.dumps(sensor["name"]) + ": "
        yield from sensor_json(root, rel, sensor)
    yield "}}"


def sensor_csv(root: Path, rel: str | None, sensor: dict, job_id: str) -> Iterator[str]:
    """Exudyn's sensor file layout, so exudyn.plot.PlotSensor reads it: '#' header lines, then
    'time,values...' rows (here with Python's float repr, lossless)."""
    number = re.fullmatch(r"[a-z]+(\d+)", sensor["item"] or "")
    yield (f"#Exudyn sensor output file written by mbserve; job {job_id}, sensor {json.dumps(sensor['name'])}\n"
           f"#measure {sensor['sensorType']} number = {number.group(1) if number else -1}\n"
           f"#OutputVariableType = {sensor['outputVariableType']}\n"
           f"#columns contain: {', '.join(sensor['columns'])}\n"
           f"#number of sensor values = {len(sensor['columns']) - 1}\n#\n")
    if rel is not None:
        for chunk in iter_rows(root, rel, sensor["key"]):
            if chunk.ndim == 2:
                yield "".join(",".join(map(repr, row)) + "\n" for row in chunk.tolist())


def solution_json(root: Path, rel: str, meta: dict) -> Iterator[str]:
    """The stored solution: its metadata (multibody.solution.Solution.meta) and "data": rows."""
    yield json.dumps(meta)[:-1] + ', "data": '
    yield from _data_json(root, rel, {"key": SOLUTION_KEY})
    yield "}"


def solution_csv(root: Path, rel: str, meta: dict, job_id: str) -> Iterator[str]:
    """Exudyn's solution file layout, which exudyn.utilities.LoadSolutionFile reads."""
    yield header(meta, f"written by mbserve; job {job_id}")
    for chunk in iter_rows(root, rel, SOLUTION_KEY):
        if chunk.ndim == 2:
            yield csv_rows(chunk)
