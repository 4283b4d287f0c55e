"""The web interface (SPEC section 3, `GET /`) and the interactive API docs, from files in the
package (service/static; the JavaScript libraries pinned under static/vendor, see web/package.json):
nothing is fetched from another host."""
from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

STATIC = Path(__file__).resolve().parent / "static"
SWAGGER = "/static/vendor/swagger-ui-dist"


def install(app: FastAPI) -> None:
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    def page() -> FileResponse:  # one page; the script shows the jobs list, a job or a sweep by the path
        return FileResponse(STATIC / "index.html", media_type="text/html", headers={"Cache-Control": "no-cache"})

    app.add_api_route("/", page, methods=["GET"], include_in_schema=False)
    app.add_api_route("/jobs/{job_id}", page, methods=["GET"], include_in_schema=False)
    app.add_api_route("/sweeps/{sweep_id}", page, methods=["GET"], include_in_schema=False)

    def docs():
        return get_swagger_ui_html(openapi_url=app.openapi_url, title=f"{app.title} API",
                                   swagger_js_url=f"{SWAGGER}/swagger-ui-bundle.js",
                                   swagger_css_url=f"{SWAGGER}/swagger-ui.css",
                                   swagger_favicon_url=f"{SWAGGER}/favicon-32x32.png")
    app.add_api_route("/docs", docs, methods=["GET"], include_in_schema=False)
