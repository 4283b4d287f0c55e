import os

import pytest

from .browser import PageWatch, chromium_path, launch, serve


@pytest.fixture(scope="session")
def browser():
    if chromium_path() is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("chromium is not installed and CI=true (.ci/run installs it)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


@pytest.fixture(scope="module")
def web(tmp_path_factory):
    with serve(tmp_path_factory.mktemp("web")) as url:
        yield url


@pytest.fixture
def page(browser, web):
    """A fresh page; after the test, no console error and no request to another host."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, base_url=web)
    pg = context.new_page()
    watch = PageWatch(pg, web)
    yield pg
    context.close()
    assert not watch.errors, watch.errors
    assert not watch.foreign, watch.foreign
