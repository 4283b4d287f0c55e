"""The web interface in a real headless Chromium against a real `mbserve serve`. Every test also
checks (the `page` fixture) that the page logged no console error and asked no other host."""
import copy

import httpx
import pytest

from tests.conftest import ROOT, example
from tests.support import wait_job

from .browser import wait_ready

SLIDER_CRANK = ROOT / "tests" / "multibody" / "cases" / "slider_crank" / "model.json"


def submit(url: str, body: dict) -> dict:
    answer = httpx.post(f"{url}/v1/jobs", json=body, timeout=30)
    assert answer.status_code == 202, answer.text
    return answer.json()


def test_start_page_lists_a_new_job_and_follows_it_to_100_percent(page, web):
    page.goto("/")
    wait_ready(page)
    page.evaluate("window.loadedOnce = true")  # gone if the page reloads
    # long enough (many steps) that the job is seen running before it ends
    job = submit(web, {"model": example("mini"),
                       "simulationSettings": {"timeIntegration": {"numberOfSteps": 200000, "endTime": 2.0}}})
    row = page.locator(f'tr[data-id="{job["id"]}"]')
    row.wait_for(timeout=30_000)
    assert page.locator("table.jobs tbody tr").first.get_attribute("data-id") == job["id"]  # newest first
    page.locator(f'tr[data-id="{job["id"]}"][data-status="succeeded"]').wait_for(timeout=120_000)
    assert row.locator(".pct").inner_text() == "100 %"
    assert page.evaluate("window.loadedOnce") is True


def test_mini_sensor_plot_holds_the_sensor_data_and_draws_it(page, web):
    job = submit(web, {"model": example("mini")})
    with httpx.Client(base_url=web, timeout=30) as client:
        wait_job(client, job["id"])
        sensors = client.get(f"/v1/jobs/{job['id']}/results").json()["sensors"]
    page.goto(f"/jobs/{job['id']}")
    wait_ready(page)
    page.evaluate("window.mbserve.loadAllCharts()")  # those out of view too
    for name, sensor in sensors.items():
        held = page.evaluate("(n) => window.mbserve.charts[n].full.map((c) => Array.from(c))", name)
        expected = [list(col) for col in zip(*sensor["data"])]
        assert held == expected, name  # the chart holds the sensor's columns exactly (no decimation: small)
        drawn = page.evaluate("(n) => window.mbserve.charts[n].u.data.map((c) => Array.from(c))", name)
        assert drawn == expected
        # the canvas holds the curves: colored pixels (grid and axes are gray) along the whole width
        colored = page.evaluate("""(n) => {
            const c = window.mbserve.charts[n].u.ctx.canvas;
            const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
            let k = 0;
            for (let i = 0; i < px.length; i += 4) {
              const hi = Math.max(px[i], px[i + 1], px[i + 2]), lo = Math.min(px[i], px[i + 1], px[i + 2]);
              if (px[i + 3] > 100 && hi - lo > 60) k++;
            }
            return [k, c.width]; }""", name)
        assert colored[0] > colored[1] / 2, f"{name}: {colored[0]} colored pixels"


def test_slider_crank_3d_view_changes_between_two_times(page, web):
    import json
    job = submit(web, {"model": json.loads(SLIDER_CRANK.read_text()), "store": {"solution": True}})
    with httpx.Client(base_url=web, timeout=30) as client:
        wait_job(client, job["id"])
    page.goto(f"/jobs/{job['id']}")
    wait_ready(page)
    canvas = page.locator("#scene-box canvas")
    slider = page.locator("#time-slider")
    slider.fill("0")
    first = canvas.screenshot()
    t0 = page.evaluate("window.mbserve.playback.time")
    slider.fill("25")
    second = canvas.screenshot()
    t1 = page.evaluate("window.mbserve.playback.time")
    assert (t0, t1) == (0.0, pytest.approx(0.25, abs=1e-12))
    assert first != second  # the crank turned: the picture changed
    # the slider body sits where the solution puts it (x of node 2 = its reference + q)
    x = page.evaluate("window.mbserve.playback.frames[2].group.position.x")
    solution = httpx.get(f"{web}/v1/jobs/{job['id']}/solution", timeout=30).json()
    node = solution["nodes"][2]
    model = json.loads(SLIDER_CRANK.read_text())
    assert x == pytest.approx(model["nodes"][2]["referenceCoordinates"][0] + solution["data"][25][node["offset"]])


def test_uploading_a_broken_model_shows_each_problem_at_its_path(page, web):
    broken = copy.deepcopy(example("mini"))
    broken["objects"][0]["massss"] = 1.0
    broken["objects"][1]["mass"] = "heavy"
    page.goto("/")
    wait_ready(page)
    page.fill("#model-text", __import__("json").dumps(broken))
    page.click("#model-submit")
    problems = page.locator("#model-problems li")
    problems.first.wait_for(timeout=30_000)
    paths = problems.locator("code").all_inner_texts()
    assert {"objects[0].massss", "objects[1].mass"} <= set(paths), paths  # paths in the uploaded document
    page.fill("#model-text", __import__("json").dumps(example("mini")))  # as typed: checked without a click
    page.locator("#model-ok").wait_for(timeout=30_000)
    page.fill("#model-text", "{not json")
    page.click("#model-submit")
    page.locator("#model-problems .error").wait_for()
    assert "Not JSON" in page.locator("#model-problems").inner_text()


def test_api_docs_load_from_local_assets(page, web):
    page.goto("/docs")
    page.locator(".opblock-summary-path", has_text="/v1/jobs/{job_id}/solution").first.wait_for(timeout=30_000)
