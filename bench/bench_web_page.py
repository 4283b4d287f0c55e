"""Page speed of the job page: a chain_200 result with 200 sensors (each block's position, 1001
rows), opened in headless Chromium until the charts in view are drawn (the page's
`window.mbserve.ready`; the others load as they scroll into view), and until all 200 are drawn.
Floor, in the same run: the job page of the mini example (4 sensors). Goal: the 200-sensor page
in under 2 s (median of the runs) on this machine.

    python -m bench.bench_web_page [--runs 5]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import httpx
from playwright.sync_api import sync_playwright

from tests.conftest import example
from tests.support import wait_job
from tests.web.browser import PageWatch, launch, serve, wait_ready

GOAL_SECONDS = 2.0


def chain_200_with_200_sensors() -> dict:
    doc = example("chain_200")
    doc["sensors"] += [{"sensorType": "Node", "nodeNumber": i, "outputVariableType": "Position",
                        "name": f"block{i}_position"} for i in range(199)]
    return doc


def open_page(browser, url: str, job_id: str, sensors: int) -> tuple[float, float]:
    """(seconds until drawn in view, seconds until every chart is drawn) of one fresh page."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    watch = PageWatch(page, url)
    started = time.perf_counter()
    page.goto(f"{url}/jobs/{job_id}")
    wait_ready(page, timeout=120_000)
    shown = time.perf_counter() - started
    page.evaluate("window.mbserve.loadAllCharts()")
    everything = time.perf_counter() - started
    assert page.evaluate("Object.keys(window.mbserve.charts).length") == sensors
    assert not watch.errors and not watch.foreign, (watch.errors, watch.foreign)
    context.close()
    return shown, everything


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as tmp, serve(Path(tmp)) as url, sync_playwright() as p:
        with httpx.Client(base_url=url, timeout=600) as client:
            jobs = {}
            for key, doc in (("chain_200", chain_200_with_200_sensors()), ("mini", example("mini"))):
                jobs[key] = client.post("/v1/jobs", json={"model": doc}).raise_for_status().json()["id"]
                assert wait_job(client, jobs[key], timeout=600)["status"] == "succeeded"
            results_bytes = len(client.get(f"/v1/jobs/{jobs['chain_200']}/results",
                                           headers={"Accept-Encoding": "identity"}).content)
        browser = launch(p)
        big, floor = [], []
        for _ in range(runs):
            big.append(open_page(browser, url, jobs["chain_200"], 200))
            floor.append(open_page(browser, url, jobs["mini"], 4))
        browser.close()
    med = lambda xs, k: round(statistics.median(x[k] for x in xs), 3)  # noqa: E731
    print(json.dumps({"sensors": 200, "rowsPerSensor": 1001, "resultsJsonBytes": results_bytes,
                      "loadAverage": [round(x, 1) for x in os.getloadavg()], "runs": runs,
                      "medianSecondsDrawnInView": med(big, 0), "medianSecondsAllChartsDrawn": med(big, 1),
                      "floorMedianSecondsMini": med(floor, 0), "ratioToFloor": round(med(big, 0) / med(floor, 0), 2),
                      "goalSeconds": GOAL_SECONDS, "met": med(big, 0) < GOAL_SECONDS}, indent=1))


if __name__ == "__main__":
    main()
