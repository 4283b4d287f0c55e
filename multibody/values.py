"""The core's value types: problems of a model document, and the results of a solve.

A leaf module (numpy only), so that every layer can speak of them without importing the others.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a model document: where (JSON path), which item, what."""
    path: str
    message: str
    item: str | None = None
    limit: str | None = None  # the name of the limit (of a service: its setting) this problem exceeds

    def to_dict(self) -> dict:
        return {"path": self.path, "message": self.message, "item": self.item}

    def __str__(self) -> str:
        who = f" ({self.item})" if self.item else ""
        return f"{self.path}{who}: {self.message}"


class ModelInvalid(Exception):
    """The document is not a valid model; `problems` lists every problem found."""

    def __init__(self, problems: list[Problem]):
        self.problems = list(problems)
        super().__init__("; ".join(str(p) for p in self.problems[:5])
                         + (f" (and {len(self.problems) - 5} more)" if len(self.problems) > 5 else ""))


@dataclass(frozen=True)
class ExpressionLimits:
    """What a document's expressions (motion laws, user functions) may ask for. The counts are
    checked before any expression is parsed; the cost (tree nodes parsed, differentiated and
    compiled) and the CPU seconds of that work are one budget for the whole document, checked
    as each stage finishes, so the work stops soon after either is used up. `names` says how
    messages call each limit (the service passes its settings' names)."""
    max_motions: int = 1000
    max_expressions: int = 3000
    max_cost: int = 2_000_000
    max_seconds: float = 60.0
    names: dict = field(default_factory=dict)

    def name(self, limit: str) -> str:
        return self.names.get(limit, limit)


class SimulationCanceled(Exception):
    """The cancel callback asked the solver to stop."""


@dataclass
class Validation:
    ok: bool
    problems: list[Problem]
    warnings: list[dict]
    summary: dict
    expanded: dict | None = None  # the document after convenience items were expanded


@dataclass
class SensorSeries:
    sensorType: str
    item: str | None
    outputVariableType: str
    columns: list[str]
    data: np.ndarray  # rows x len(columns), first column time

    def to_dict(self) -> dict:
        return {"sensorType": self.sensorType, "item": self.item,
                "outputVariableType": self.outputVariableType,
                "columns": list(self.columns), "data": self.data.tolist()}

    def column(self, name: str) -> np.ndarray:
        """One column by its name ("time", "PositionX", "H03", ...)."""
        if name not in self.columns:
            raise KeyError(f"no column {name!r}; the columns are {', '.join(self.columns)}")
        return self.data[:, self.columns.index(name)]

    def to_pandas(self):
        """The rows as a pandas DataFrame with the sensor's column names (needs pandas)."""
        import pandas
        return pandas.DataFrame(self.data, columns=self.columns)


@dataclass
class Results:
    status: str  # "succeeded" | "failed"
    warnings: list[dict]
    solver: dict
    sensors: dict[str, SensorSeries] = field(default_factory=dict)
    error: dict | None = None  # {"code", "message", "detail"} when failed
    solution: Any = None  # multibody.solution.Solution when stored (not part of the results document)

    def to_document(self) -> dict:
        doc: dict[str, Any] = {"status": self.status, "warnings": list(self.warnings),
                               "solver": dict(self.solver)}
        if self.error is not None:
            doc["error"] = self.error
        doc["sensors"] = {name: s.to_dict() for name, s in self.sensors.items()}
        return doc


def did_you_mean(word: object, choices) -> str:
    """'; did you mean 'X'?' for the closest of `choices` to a misspelled `word`, else ''."""
    if not isinstance(word, str):
        return ""
    close = difflib.get_close_matches(word, [c for c in choices if isinstance(c, str)], n=1, cutoff=0.6)
    if not close:  # a different case ("position") is a typo too
        close = [c for c in choices if isinstance(c, str) and c.lower() == word.lower()]
    return f"; did you mean {close[0]!r}?" if close else ""
