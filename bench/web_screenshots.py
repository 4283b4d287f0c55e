"""Screenshots of the web interface for the README: the job page of slider_crank (3D playback at
t = 0.3 s, its sensor plots) and one plot, from a fresh `mbserve serve` in headless Chromium.

    python -m bench.web_screenshots [--out docs/screenshots]
"""
from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import httpx
from playwright.sync_api import sync_playwright

from tests.support import wait_job
from tests.web.browser import launch, serve, wait_ready

ROOT = Path(__file__).resolve().parent.parent
SLIDER_CRANK = ROOT / "tests" / "multibody" / "cases" / "slider_crank" / "model.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    out = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, serve(Path(tmp)) as url, sync_playwright() as p:
        with httpx.Client(base_url=url, timeout=60) as client:
            job = client.post("/v1/jobs", json={"model": json.loads(SLIDER_CRANK.read_text()),
                                                 "store": {"solution": True}}).raise_for_status().json()
            wait_job(client, job["id"])
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1280, "height": 1400})
        page.goto(f"{url}/jobs/{job['id']}")
        wait_ready(page)
        page.locator("#time-slider").fill("30")
        page.screenshot(path=out / "job_slider_crank.png")
        chart = page.locator('.chart[data-sensor="sliderNode_Position"]')
        chart.scroll_into_view_if_needed()
        box = chart.bounding_box()
        page.mouse.move(box["x"] + box["width"] * 0.55, box["y"] + box["height"] * 0.45)  # values under the cursor
        chart.screenshot(path=out / "plot_slider_position.png")
        browser.close()
    print(f"wrote {out / 'job_slider_crank.png'} and {out / 'plot_slider_position.png'}")


if __name__ == "__main__":
    main()
