"""Stored results come back exactly: float64 bit for bit, the same JSON text as json.dumps, in chunks."""
import json

import numpy as np

from multibody import Results, SensorSeries
from store.results import CHUNK_ROWS, document_json, iter_rows, sensor_csv, write_results


def results_with(rows: int) -> Results:
    rng = np.random.default_rng(5)
    values = rng.standard_normal((rows, 16)) * 10.0 ** rng.integers(-300, 300, (rows, 16))  # all magnitudes
    data = np.column_stack([np.arange(rows) * 1e-3, values])
    return Results("succeeded", [{"code": "DeprecationWarning", "item": "object2", "message": "m"}],
                   {"type": "Dynamic", "solveSeconds": 0.1},
                   {"ht": SensorSeries("Object", "object2", "HomogeneousTransformation",
                                       ["time"] + [f"H{i}{j}" for i in range(4) for j in range(4)], data),
                    "empty": SensorSeries("Node", "node0", "Position", ["time", "PositionX"], np.zeros((0, 2)))})


def test_document_streams_in_chunks_and_equals_json_dumps(tmp_path):
    results = results_with(2 * CHUNK_ROWS + 7)
    rel, head, sensors = write_results(tmp_path, "job", "token", results)
    assert [len(c) for c in iter_rows(tmp_path, rel, "s0")] == [CHUNK_ROWS, CHUNK_ROWS, 7]
    assert "".join(document_json(tmp_path, head, rel, sensors)) == json.dumps(results.to_document())


def test_csv_rows_read_back_bit_for_bit(tmp_path):
    results = results_with(100)
    rel, _, sensors = write_results(tmp_path, "job", "token", results)
    text = "".join(sensor_csv(tmp_path, rel, sensors[0], "job"))
    assert np.array_equal(np.loadtxt(text.splitlines(), comments="#", delimiter=","), results.sensors["ht"].data)
    assert "#number of sensor values = 16" in text.splitlines()
