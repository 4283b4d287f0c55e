"""A sweep's page in headless Chromium: listed on the start page, its progress, its table (one
row per variation, linked to its job) and its plot (an output over a parameter, a line per value
of the other), and the plot's choices redraw it."""
import time

import httpx
import pytest

from tests.conftest import example

from .browser import wait_ready

STIFFNESS, DAMPING = [50.0, 200.0], [0.5, 1.5, 2.5]
BLUE = (37, 99, 235)  # the first series' color (#2563eb)


@pytest.fixture(scope="module")
def sweep(web):
    body = {"model": example("spring_slider"), "design": "grid",
            "parameters": [{"path": "objects[spring].stiffness", "values": STIFFNESS},
                           {"path": "objects[spring].damping", "values": DAMPING}],
            "outputs": [{"name": "xEnd", "sensor": "block_position", "column": "PositionX"},
                        {"name": "fMax", "sensor": "spring_force", "column": "ForceX", "reduce": "absMax"}]}
    with httpx.Client(base_url=web, timeout=30) as client:
        sweep = client.post("/v1/sweeps", json=body).raise_for_status().json()
        end = time.monotonic() + 180
        while (status := client.get(f"/v1/sweeps/{sweep['id']}").json())["status"] != "finished":
            assert time.monotonic() < end, status
            time.sleep(0.2)
        table = client.get(f"/v1/sweeps/{sweep['id']}/table").json()
    return sweep["id"], table


def colored(page, rgb) -> int:
    """Pixels of about this color on the sweep plot's canvas."""
    return page.evaluate(f"""(() => {{
        const c = document.querySelector('#sweep-plot canvas');
        const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0;
        for (let i = 0; i < px.length; i += 4)
          if (Math.abs(px[i] - {rgb[0]}) < 8 && Math.abs(px[i + 1] - {rgb[1]}) < 8 && Math.abs(px[i + 2] - {rgb[2]}) < 8) n++;
        return n;
    }})()""")


def test_the_start_page_links_the_sweep(page, sweep):
    sweep_id, _ = sweep
    page.goto("/")
    wait_ready(page)
    link = page.locator(f'#sweeps tr[data-id="{sweep_id}"] a')
    assert link.inner_text() == sweep_id
    link.click()
    page.wait_for_url(f"**/sweeps/{sweep_id}")
    wait_ready(page)
    assert page.locator("#sweep-status").get_attribute("data-status") == "finished"


def test_the_sweep_page_shows_its_table_and_plot(page, sweep):
    sweep_id, table = sweep
    page.goto(f"/sweeps/{sweep_id}")
    wait_ready(page)
    assert page.locator("#sweep-status").get_attribute("data-status") == "finished"
    assert "6: 6 done, 0 failed" in page.locator("#sweep-counts").inner_text()
    head = page.locator("#sweep-table thead th").all_inner_texts()
    assert head == table["columns"]
    rows = page.locator("#sweep-table tbody tr")
    assert rows.count() == 6 and set(page.locator("#sweep-table tbody tr").evaluate_all(
        "rs => rs.map(r => r.dataset.status)")) == {"succeeded"}
    first = rows.nth(0).locator("td").all_inner_texts()
    assert [float(first[1]), float(first[2])] == [STIFFNESS[0], DAMPING[0]]
    assert float(first[3]) == pytest.approx(table["rows"][0][3], rel=1e-7)
    assert rows.nth(0).locator("a").get_attribute("href") == f"/jobs/{table['rows'][0][-2]}"

    # xEnd over the stiffness, a line per damping: 3 series of 2 points, the table's values
    plotted = page.evaluate("""(() => { const u = window.mbserve.sweep.plot.u;
        return {labels: u.series.slice(1).map(s => s.label), x: Array.from(u.data[0]),
                ys: u.data.slice(1).map(y => Array.from(y))}; })()""")
    assert plotted["labels"] == [f"objects[spring].damping = {d}" for d in DAMPING]
    assert plotted["x"] == [STIFFNESS[0]] * 3 + [STIFFNESS[1]] * 3
    for k, ys in enumerate(plotted["ys"]):
        want = {r[1]: r[3] for r in table["rows"] if r[2] == DAMPING[k]}
        got = {x: y for x, y in zip(plotted["x"], ys) if y is not None}
        assert got == pytest.approx(want)
    assert colored(page, BLUE) > 20  # drawn

    # another output, as a scatter over the damping
    page.select_option("#plot-y", "fMax")
    page.select_option("#plot-x", "objects[spring].damping")
    page.select_option("#plot-by", "")
    plotted = page.evaluate("""(() => { const u = window.mbserve.sweep.plot.u;
        return {n: u.series.length, x: Array.from(u.data[0]), y: Array.from(u.data[1])}; })()""")
    assert plotted["n"] == 2 and sorted(plotted["x"]) == plotted["x"] and len(plotted["x"]) == 6
    flat = lambda pairs: [v for pair in sorted(pairs) for v in pair]  # noqa: E731
    assert flat(zip(plotted["x"], plotted["y"])) == pytest.approx(flat((r[2], r[4]) for r in table["rows"]))
    assert colored(page, BLUE) > 20
