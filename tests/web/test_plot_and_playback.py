"""Plot interaction and 3D playback in headless Chromium: drag zooms, shift-drag pans, the wheel
zooms around the cursor, a double click shows the whole range; the legend shows the values under
the cursor; play advances the 3D view and the slider, pause stops both, and the plots' time line
follows the playback time. The `page` fixture also checks for console errors and foreign hosts."""
import json

import httpx
import pytest

from tests.support import wait_job

from .browser import wait_ready
from .test_interface import SLIDER_CRANK, submit

SENSOR = "crankJoint_Rotation"
LINE = (245, 158, 11)  # the time line's color (#f59e0b)


@pytest.fixture(scope="module")
def slider_crank_job(web):
    job = submit(web, {"model": json.loads(SLIDER_CRANK.read_text()), "store": {"solution": True}})
    with httpx.Client(base_url=web, timeout=30) as client:
        wait_job(client, job["id"])
        sensor = client.get(f"/v1/jobs/{job['id']}/sensors/{SENSOR}").json()
    return job["id"], sensor


def open_chart(page, job_id):
    page.goto(f"/jobs/{job_id}")
    wait_ready(page)
    page.evaluate("window.mbserve.loadAllCharts()")
    page.locator(f'.chart[data-sensor="{SENSOR}"] .u-over').scroll_into_view_if_needed()
    box = page.locator(f'.chart[data-sensor="{SENSOR}"] .u-over').bounding_box()
    return box


def scale(page):
    return page.evaluate("(n) => { const u = window.mbserve.charts[n].u; return [u.scales.x.min, u.scales.x.max]; }",
                         SENSOR)


def value_at(page, px):
    return page.evaluate(f"(x) => window.mbserve.charts['{SENSOR}'].u.posToVal(x, 'x')", px)


def test_zoom_pan_wheel_and_reset(page, slider_crank_job):
    job_id, sensor = slider_crank_job
    box = open_chart(page, job_id)
    t = [row[0] for row in sensor["data"]]
    assert scale(page) == pytest.approx([t[0], t[-1]])
    y = box["y"] + box["height"] / 2
    x1, x2 = box["x"] + 0.25 * box["width"], box["x"] + 0.5 * box["width"]
    want = [value_at(page, x1 - box["x"]), value_at(page, x2 - box["x"])]
    page.mouse.move(x1, y)
    page.mouse.down()
    page.mouse.move(x2, y, steps=8)
    page.mouse.up()
    zoomed = scale(page)
    assert zoomed == pytest.approx(want, abs=2 * (t[-1] - t[0]) / box["width"])  # within 2 px
    assert zoomed[1] - zoomed[0] < 0.3 * (t[-1] - t[0])
    # what the chart draws is the zoomed range (one row either side), taken from the full data
    drawn = page.evaluate(f"Array.from(window.mbserve.charts['{SENSOR}'].u.data[0])")
    assert drawn[0] <= zoomed[0] and drawn[-1] >= zoomed[1] and len(drawn) < len(t) / 2
    assert drawn == [x for x in t if x in set(drawn)] and drawn[1] > zoomed[0] and drawn[-2] < zoomed[1]
    assert page.evaluate(f"window.mbserve.charts['{SENSOR}'].range") == pytest.approx(zoomed)
    # shift-drag pans: the width stays, the range moves against the mouse
    per_px = (zoomed[1] - zoomed[0]) / box["width"]
    page.keyboard.down("Shift")
    page.mouse.move(x2, y)
    page.mouse.down()
    page.mouse.move(x2 - 100, y, steps=5)
    page.mouse.up()
    page.keyboard.up("Shift")
    panned = scale(page)
    assert panned[1] - panned[0] == pytest.approx(zoomed[1] - zoomed[0], rel=1e-9)
    assert panned[0] - zoomed[0] == pytest.approx(100 * per_px, rel=0.05)
    # the wheel zooms in around the cursor: the time under it stays put, the range shrinks by 0.8
    xm = box["x"] + 0.4 * box["width"]
    page.mouse.move(xm, y)
    at = value_at(page, xm - box["x"])
    page.mouse.wheel(0, -100)
    page.wait_for_function(f"window.mbserve.charts['{SENSOR}'].u.scales.x.max - "
                           f"window.mbserve.charts['{SENSOR}'].u.scales.x.min < {0.9 * (panned[1] - panned[0])}")
    wheeled = scale(page)
    assert wheeled[1] - wheeled[0] == pytest.approx(0.8 * (panned[1] - panned[0]), rel=1e-9)
    assert value_at(page, xm - box["x"]) == pytest.approx(at, abs=per_px)
    page.mouse.dblclick(xm, y)
    assert scale(page) == pytest.approx([t[0], t[-1]])
    assert page.evaluate(f"window.mbserve.charts['{SENSOR}'].range") is None


def test_legend_shows_the_values_under_the_cursor(page, slider_crank_job):
    job_id, sensor = slider_crank_job
    box = open_chart(page, job_id)
    for frac in (0.3, 0.7):
        page.mouse.move(box["x"] + frac * box["width"], box["y"] + box["height"] / 2)
        page.wait_for_function(f"window.mbserve.charts['{SENSOR}'].u.cursor.idx != null")
        idx, shown = page.evaluate(f"""(() => {{
            const u = window.mbserve.charts['{SENSOR}'].u;
            return [u.cursor.idx, Array.from(u.root.querySelectorAll('.u-legend .u-value'), (e) => e.textContent)];
        }})()""")
        row = sensor["data"][idx]  # not decimated (1000 rows): the drawn index is the row
        spacing = sensor["data"][1][0] - sensor["data"][0][0]
        assert row[0] == pytest.approx(value_at(page, frac * box["width"]), abs=spacing)  # the nearest row
        assert len(shown) == len(row)
        for text, value in zip(shown, row):
            assert float(text.replace(",", "")) == pytest.approx(value, rel=1e-3, abs=1e-3), (text, value)


def line_columns(page):
    """The canvas columns (in canvas pixels) holding the time line's color, and where the chart puts t."""
    return page.evaluate(f"""(() => {{
        const ch = window.mbserve.charts['{SENSOR}'], u = ch.u, c = u.ctx.canvas;
        const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        const cols = new Set();
        for (let i = 0; i < px.length; i += 4)
          if (Math.abs(px[i] - {LINE[0]}) < 8 && Math.abs(px[i + 1] - {LINE[1]}) < 8 && Math.abs(px[i + 2] - {LINE[2]}) < 8)
            cols.add((i / 4) % c.width);
        return [Array.from(cols), Math.round(u.valToPos(window.mbserve.playback.time, 'x', true))];
    }})()""")


def test_play_pause_and_slider_move_the_view_and_the_plot_cursor(page, slider_crank_job):
    job_id, _ = slider_crank_job
    open_chart(page, job_id)
    canvas = page.locator("#scene-box canvas")
    slider, play = page.locator("#time-slider"), page.locator("#play")
    assert page.evaluate("window.mbserve.playback.time") == 0.0
    cols, at = line_columns(page)
    assert cols and max(abs(c - at) for c in cols) <= 2, (cols, at)
    page.select_option("#speed", "0.1")
    before = canvas.screenshot()
    play.click()
    assert play.inner_text() == "Pause"
    page.wait_for_function("window.mbserve.playback.time > 0.05", timeout=30_000)
    play.click()
    assert play.inner_text() == "Play"
    paused = page.evaluate("[window.mbserve.playback.time, window.mbserve.playback.index]")
    assert 0.05 < paused[0] < 1.0  # at 0.1x the 1 s run takes 10 s: paused well before its end
    page.wait_for_timeout(400)
    assert page.evaluate("[window.mbserve.playback.time, window.mbserve.playback.index]") == paused
    assert int(slider.input_value()) == paused[1]
    assert page.locator("#view3d .time").inner_text() == f"t = {paused[0]:.4f} s"
    assert canvas.screenshot() != before
    cols, at = line_columns(page)
    assert cols and max(abs(c - at) for c in cols) <= 2, (cols, at)
    # the slider: the 3D view and the time line jump to its row
    slider.fill("80")  # the solution's rows every 0.01 s
    assert page.evaluate("window.mbserve.playback.time") == pytest.approx(0.8, abs=1e-12)
    cols2, at2 = line_columns(page)
    assert at2 > at and cols2 and max(abs(c - at2) for c in cols2) <= 2, (cols2, at2)
    # play from there runs to the end and stops on the last row
    page.select_option("#speed", "4")
    play.click()
    page.wait_for_function("document.querySelector('#play').textContent === 'Play'", timeout=30_000)
    assert page.evaluate("window.mbserve.playback.time") == pytest.approx(1.0, abs=1e-12)
    assert int(slider.input_value()) == int(slider.get_attribute("max"))
