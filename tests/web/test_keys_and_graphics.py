"""The interface with API keys required (a key entered once per browser session), and bodies
drawn from Exudyn's graphics dictionaries (VgraphicsData)."""
import json
import subprocess
import sys

import httpx
import numpy as np
import pytest

from tests.conftest import ROOT, example
from tests.support import wait_job

from .browser import PageWatch, serve, wait_ready


def test_a_key_entered_once_serves_the_whole_browser_session(browser, tmp_path):
    with serve(tmp_path / "keys", {"MBSERVE_REQUIRE_API_KEY": "true"}) as url:
        key = subprocess.run([sys.executable, "-m", "mbserve.cli", "keys", "create", "alice", "--data-dir",
                              str(tmp_path / "keys" / "data")], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.strip()
        headers = {"Authorization": f"Bearer {key}"}
        job = httpx.post(f"{url}/v1/jobs", json={"model": example("mini")}, headers=headers, timeout=30).json()
        with httpx.Client(base_url=url, headers=headers, timeout=30) as client:
            wait_job(client, job["id"])
        context = browser.new_context(base_url=url)
        page = context.new_page()
        watch = PageWatch(page, url)
        page.goto("/")
        page.locator("#key-dialog[open]").wait_for(timeout=30_000)  # asked once ...
        page.fill("#key-input", key)
        page.click("#key-form button")
        page.locator(f'tr[data-id="{job["id"]}"]').wait_for(timeout=30_000)  # ... the owner's jobs
        page.click(f'tr[data-id="{job["id"]}"] a')
        wait_ready(page)
        assert page.locator("#key-dialog[open]").count() == 0  # not asked again on the job page
        assert page.evaluate("Object.keys(window.mbserve.charts).length") > 0
        context.close()
        # the 401 that asks for the key is the only failed request
        assert [e for e in watch.errors if "401" not in e] == [] and not watch.foreign


def test_bodies_are_drawn_from_exudyn_graphics(page, web):
    graphics = pytest.importorskip("exudyn.graphics")

    def jsonable(g):
        return {k: (np.asarray(v).tolist() if not isinstance(v, (str, int, float)) else v) for k, v in g.items()}
    brick = jsonable(graphics.Brick(size=[0.1, 0.2, 0.3], color=[1, 0, 0, 1]))  # 12 triangles
    cylinder = jsonable(graphics.Cylinder(vAxis=[0, 0, 0.2], radius=0.05))  # 6-node triangles
    line = jsonable(graphics.Lines([[0, 0, 0], [0.2, 0, 0]]))
    model = example("mini")
    body = next(o for o in model["objects"] if o["objectType"] == "RigidBody")
    body["VgraphicsData"] = [brick, cylinder, line]
    job = httpx.post(f"{web}/v1/jobs", json={"model": model, "store": {"solution": True}}, timeout=30).json()
    with httpx.Client(base_url=web, timeout=30) as client:
        wait_job(client, job["id"])
    page.goto(f"/jobs/{job['id']}")
    wait_ready(page)
    drawn = page.evaluate("""() => window.mbserve.playback.frames[0].group.children.map((o) =>
        [o.type, !o.geometry ? o.name : o.geometry.index ? o.geometry.index.count : o.geometry.getAttribute('position').count])""")
    assert drawn[0] == ["Mesh", 36]  # the brick: 12 triangles, no default box besides
    assert drawn[1] == ["Mesh", 3 * 4 * len(cylinder["triangles6"])]  # each 6-node triangle as 4
    assert drawn[2] == ["Line", 2]
    assert len(drawn) == 3  # nothing else on the body: the joint sits at its marker 0, on the ground


def test_a_body_without_graphics_is_its_inertia_box_on_the_principal_axes(page, web):
    """A homogeneous 0.1 x 0.2 x 0.4 box of 2 kg, turned by R and with its center of mass at b:
    the document gives Exudyn's inertia about the reference point (full tensor, off-diagonal
    entries); the drawn box has the same sides along the same axes, centered at b."""
    from scipy.spatial.transform import Rotation
    mass, sides, b = 2.0, np.array([0.1, 0.2, 0.4]), np.array([0.05, -0.02, 0.03])
    R = Rotation.from_euler("xyz", [0.4, -0.7, 1.1]).as_matrix()
    j_box = mass / 12 * np.diag([sides[1] ** 2 + sides[2] ** 2, sides[0] ** 2 + sides[2] ** 2,
                                 sides[0] ** 2 + sides[1] ** 2])
    J = R @ j_box @ R.T + mass * (b @ b * np.eye(3) - np.outer(b, b))  # about the reference point
    model = example("mini")
    body = next(o for o in model["objects"] if o["objectType"] == "RigidBody")
    body.update(mass=mass, centerOfMass=b.tolist(),
                inertia=[J[0, 0], J[1, 1], J[2, 2], J[1, 2], J[0, 2], J[0, 1]])
    job = httpx.post(f"{web}/v1/jobs", json={"model": model, "store": {"solution": True}}, timeout=30).json()
    with httpx.Client(base_url=web, timeout=30) as client:
        wait_job(client, job["id"])
    page.goto(f"/jobs/{job['id']}")
    wait_ready(page)
    drawn = page.evaluate("""() => { const o = window.mbserve.playback.frames[0].group.children[0];
        const p = o.geometry.parameters;
        return {sides: [p.width, p.height, p.depth], q: o.quaternion.toArray(), at: o.position.toArray()}; }""")
    x, y, z, w = drawn["q"]
    axes = Rotation.from_quat([x, y, z, w]).as_matrix()
    assert np.linalg.det(axes) == pytest.approx(1.0)
    # the same box whatever the order and signs of the principal axes: R diag(s²) Rᵀ
    shape = lambda rot, s: rot @ np.diag(np.square(s)) @ rot.T  # noqa: E731
    np.testing.assert_allclose(shape(axes, drawn["sides"]), shape(R, sides), atol=1e-6)
    np.testing.assert_allclose(drawn["at"], b, atol=1e-12)
