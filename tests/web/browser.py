"""Headless Chromium (Debian's `chromium`, driven by Playwright with executable_path: no browser
download) and a `mbserve serve` for it, shared by the browser tests, the screenshots and the
page benchmark."""
from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path
from urllib.parse import urlparse

CHROMIUM_ARGS = ["--no-sandbox",  # runs as root here
                 "--enable-unsafe-swiftshader", "--use-angle=swiftshader"]  # WebGL without a GPU


def chromium_path() -> str | None:
    return os.environ.get("MBSERVE_CHROMIUM") or shutil.which("chromium")


def launch(playwright):
    return playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)


class PageWatch:
    """What a page did wrong: console errors, uncaught exceptions, requests to another host."""

    def __init__(self, page, base_url: str):
        self.errors: list[str] = []
        self.foreign: list[str] = []
        host = urlparse(base_url).netloc
        page.on("console", lambda m: self.errors.append(f"console: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))

        def request(r):
            u = urlparse(r.url)
            if u.scheme not in ("data", "blob") and u.netloc != host:
                self.foreign.append(r.url)
        page.on("request", request)


@contextlib.contextmanager
def serve(data: Path, env: dict | None = None):
    """`mbserve serve` on a free port with its own data directory; yields its URL."""
    from tests.support import free_port, start, stop, wait_http
    port = free_port()
    log = data / "serve.log"
    data.mkdir(parents=True, exist_ok=True)
    proc = start(["mbserve.cli", "serve", "--port", str(port), "--data-dir", str(data / "data")],
                 {"MBSERVE_RECONCILE_SECONDS": "1", **(env or {})}, log)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_http(f"{url}/readyz", proc, log, timeout=120)
        yield url
    finally:
        stop(proc)


def wait_ready(page, timeout: float = 60_000) -> None:
    """The interface sets window.mbserve.ready once a page has drawn (or shown its error)."""
    page.wait_for_function("window.mbserve && window.mbserve.ready === true", timeout=timeout)
