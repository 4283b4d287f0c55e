"""The `mbserve` command. Imports are lazy: `mbserve run` loads only the numeric core."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

_quick_exit = False  # set by commands that may skip the interpreter's teardown once their output is out


class _App(typer.Typer):
    """The console script (`mbserve = mbserve.cli:app`): after `run`, `validate` and `compile`, leave with
    os._exit once stdout and stderr are flushed: the teardown (numba, LLVM, sympy's caches) costs
    more than the small solves these commands are for."""

    def __call__(self, *args, **kwargs):
        try:
            return super().__call__(*args, **kwargs)
        except SystemExit as exc:
            if _quick_exit:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(exc.code if isinstance(exc.code, int) else 1)
            raise


app = _App(help="Multibody-dynamics simulation service and its command line.", no_args_is_help=True,
           pretty_exceptions_enable=False)
keys = typer.Typer(help="API keys (stored hashed).", no_args_is_help=True)
app.add_typer(keys, name="keys")

ModelFile = Annotated[Path, typer.Argument(help="a model document (JSON)", exists=True, dir_okay=False)]
Output = Annotated[Optional[Path], typer.Option("-o", "--output", help="write the results here instead of stdout")]
DataDir = Annotated[Optional[Path], typer.Option("--data-dir", help="database, broker and results (MBSERVE_DATA_DIR)")]


def _load(path: Path):
    try:
        return json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        typer.echo(f"{path}: not a JSON document: {exc}", err=True)
        raise typer.Exit(2)


def _write(doc: bytes, output: Path | None) -> None:
    if output is None:
        sys.stdout.buffer.write(doc + b"\n")
    else:
        output.write_bytes(doc)


def _migrate(settings) -> None:
    """The database at the newest schema; a database that cannot be reached is one line, exit 1."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import DBAPIError

    from store.db import migrate
    try:
        migrate(settings.database)
    except DBAPIError as exc:
        reason = str(exc.orig or exc).strip().splitlines()[0]
        hint = " (create it first: createdb -h HOST -U USER NAME)" if "does not exist" in reason else ""
        typer.echo(f"error: the database {make_url(settings.database).render_as_string(hide_password=True)} is not reachable: {reason}{hint}", err=True)
        raise typer.Exit(1)


def _settings(data_dir: Path | None = None, host: str | None = None):
    # through the environment, so the embedded worker process sees the same settings
    if data_dir is not None:
        os.environ["MBSERVE_DATA_DIR"] = str(data_dir.resolve())
    if host is not None:
        os.environ["MBSERVE_HOST"] = host
    from store.config import Settings
    settings = Settings()
    settings.ensure_dirs()
    return settings


def _quick() -> None:
    global _quick_exit
    _quick_exit = True


@app.command()
def run(model: ModelFile, output: Output = None):
    """Validate and run a model in-process; write the results document."""
    import multibody
    from store.formats import document_bytes
    from multibody.kernel_cache import print_progress
    _quick()
    doc = _load(model)
    multibody.ensure_compiled(print_progress)
    try:
        results = multibody.simulate(doc)
    except multibody.ModelInvalid as exc:
        for problem in exc.problems:
            typer.echo(str(problem), err=True)
        raise typer.Exit(2)
    _write(document_bytes(results), output)
    if results.status != "succeeded":
        typer.echo(f"simulation failed: {(results.error or {}).get('message', '')}", err=True)
        raise typer.Exit(1)


@app.command("compile")
def compile_cmd(force: Annotated[bool, typer.Option("--force", help="compile even if the cache is fresh")] = False):
    """Compile the numerical kernels now (done once per installation; serve, worker and run do it
    when they must)."""
    import multibody
    from multibody.kernel_cache import print_progress
    _quick()
    seconds = multibody.ensure_compiled(print_progress, force=force)
    if seconds is None:
        typer.echo("numerical kernels are compiled (the cache is fresh)", err=True)
    else:
        typer.echo(f"numerical kernels compiled in {seconds:.0f} s", err=True)


@app.command()
def validate(model: ModelFile,
             expanded: Annotated[bool, typer.Option("--expanded", help="print the expanded document")] = False):
    """List a model's problems and warnings; exit 2 when it is invalid."""
    import multibody
    _quick()
    doc = _load(model)
    v = multibody.validate_document(doc)
    for problem in v.problems:
        typer.echo(f"error: {problem}", err=True)
    for warning in v.warnings:
        typer.echo(f"warning: {warning.get('item') or ''} {warning.get('message', warning)}".replace("  ", " "),
                   err=True)
    if not v.ok:
        raise typer.Exit(2)
    if expanded:
        typer.echo(json.dumps(v.expanded if v.expanded is not None else doc, indent=1))
    else:
        typer.echo(f"valid: {json.dumps(v.summary)}")


@app.command()
def serve(host: Annotated[str, typer.Option(help="interface to listen on")] = "127.0.0.1",
          port: Annotated[int, typer.Option(help="TCP port")] = 8000,
          data_dir: DataDir = None,
          worker: Annotated[bool, typer.Option(help="also start a worker (the embedded setup)")] = True):
    """The HTTP API, and an embedded worker running the same task code as `mbserve worker`."""
    import uvicorn

    from service.app import create_app
    settings = _settings(data_dir, host)
    _migrate(settings)
    access = "API keys required" if settings.api_key_required else \
        "open: no API key needed on loopback (set MBSERVE_REQUIRE_API_KEY=true to require one)"
    typer.echo(f"mbserve on http://{host}:{port}, data in {settings.data_dir.resolve()}; {access}", err=True)
    # a thread waiting for the GIL takes it after 0.5 ms instead of 5: the event loop answers small
    # requests while downloads format their rows (store.formats formats in pieces of ~1 ms to match)
    sys.setswitchinterval(0.0005)
    uvicorn.run(create_app(settings, embedded_worker=worker), host=host, port=port, log_level="warning")


@app.command()
def worker(concurrency: Annotated[Optional[int], typer.Option(help="processes (MBSERVE_WORKER_CONCURRENCY)")] = None,
           loglevel: str = "INFO"):
    """A Celery worker for the distributed setup (MBSERVE_BROKER_URL, MBSERVE_DATABASE_URL)."""
    from store.queue import WORKER_QUEUES
    from worker.celery_app import app as celery
    settings = _settings()
    args = ["worker", f"--loglevel={loglevel}", "-Q", WORKER_QUEUES,
            f"--concurrency={concurrency or settings.worker_concurrency}"]
    celery.worker_main(args)


@app.command("migrate")
def migrate_cmd(data_dir: DataDir = None):
    """Create or upgrade the database schema (Alembic)."""
    settings = _settings(data_dir)
    _migrate(settings)
    typer.echo("database is at the newest schema", err=True)


@app.command()
def submit(model: ModelFile,
           url: Annotated[str, typer.Option(envvar="MBSERVE_URL", help="the service, e.g. http://127.0.0.1:8000")],
           wait: Annotated[bool, typer.Option("--wait", help="wait for the job and fetch its results")] = False,
           output: Output = None,
           api_key: Annotated[Optional[str], typer.Option(envvar="MBSERVE_API_KEY",
                                                          help="API key (`mbserve keys create`)")] = None):
    """Submit a model to a running service; with --wait, show progress and exit with the job's outcome.

    Exit codes: 0 done (or submitted), 1 the job failed or was canceled, or the service refused,
    2 invalid model, 3 no service at the URL."""
    from .client import ApiError, Client, ClientError, InvalidRequest
    try:
        with Client(url, api_key=api_key) as client:
            job = client.submit(_load(model))
            if not wait:
                typer.echo(json.dumps(job.document))
                return
            view = job.document.get("links", {}).get("view")
            if view:  # the job's page in the web interface, to watch it there
                typer.echo(f"job {job.id}: {url.rstrip('/')}{view}", err=True)
            status = job.wait(progress=True)
            if status == "canceled":
                _fail(f"job {job.id} was canceled", 1)
            _write(client.request("GET", f"/v1/jobs/{job.id}/results").content, output)
            if status != "succeeded":
                _fail(f"job {job.id} failed: {(job.error or {}).get('message', '')}", 1)
    except InvalidRequest as exc:
        _fail(f"rejected: {exc}", 2, exc.problems)
    except ApiError as exc:
        _fail(f"error: {exc}", 1, exc.problems)
    except ClientError as exc:  # no service at the URL, or not a URL
        _fail(f"error: {exc}", 3)


@app.command()
def sweep(sweep_file: Annotated[Path, typer.Argument(help="a sweep document (JSON, SPEC section 3); its "
                                                    "`model` may be a path relative to it", exists=True,
                                                    dir_okay=False)],
          url: Annotated[str, typer.Option(envvar="MBSERVE_URL", help="the service, e.g. http://127.0.0.1:8000")],
          wait: Annotated[bool, typer.Option("--wait", help="wait for every variation and fetch the table")] = False,
          output: Annotated[Optional[Path], typer.Option("-o", "--output", help="write the table (CSV) here "
                                                         "instead of stdout")] = None,
          api_key: Annotated[Optional[str], typer.Option(envvar="MBSERVE_API_KEY",
                                                         help="API key (`mbserve keys create`)")] = None):
    """Submit a parameter sweep; with --wait, show progress and write the table as CSV.

    Exit codes: 0 every variation succeeded (or submitted), 1 some failed or were canceled, or the
    service refused, 2 invalid sweep or model, 3 no service at the URL."""
    from .client import ApiError, Client, ClientError, InvalidRequest
    try:
        with Client(url, api_key=api_key) as client:
            submitted = client.sweep(sweep_file)
            if not wait:
                typer.echo(json.dumps(submitted.document))
                return
            final = submitted.wait(progress=True)
            _write(submitted.csv().rstrip("\n").encode(), output)
            if final["done"] != final["total"]:
                _fail(f"sweep {submitted.id}: {final['done']} of {final['total']} variations succeeded, "
                      f"{final['failed']} failed, {final['canceled']} canceled", 1)
    except InvalidRequest as exc:
        _fail(f"rejected: {exc}", 2, exc.problems)
    except ApiError as exc:
        _fail(f"error: {exc}", 1, exc.problems)
    except ClientError as exc:
        _fail(f"error: {exc}", 3)


def _fail(message: str, code: int, problems=()) -> None:
    typer.echo(message, err=True)
    for problem in problems:
        typer.echo(f"  {problem}", err=True)
    raise typer.Exit(code)


@app.command()
def openapi(output: Annotated[Path, typer.Option("-o", "--output")] = Path("openapi/openapi.json")):
    """Write the OpenAPI document generated from the application."""
    from service.openapi import openapi_text
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(openapi_text())
    typer.echo(f"wrote {output}", err=True)


@app.command()
def reference(output: Annotated[Path, typer.Option("-o", "--output")] = Path("docs/model-reference.md")):
    """Write the model reference (every item type, its parameters and output variables) from the schema."""
    import multibody
    from multibody.kernel_cache import print_progress
    from multibody.reference import model_reference
    multibody.ensure_compiled(print_progress)  # its output columns come from a solve: not beside another compile
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(model_reference())
    typer.echo(f"wrote {output}", err=True)


@keys.command("create")
def keys_create(owner: Annotated[str, typer.Argument(help="who the key's models and jobs belong to")],
                data_dir: DataDir = None):
    """Create a key; it is shown once."""
    from service.auth import create_key
    from store.db import get_sessionmaker
    settings = _settings(data_dir)
    _migrate(settings)
    with get_sessionmaker(settings.database)() as session:
        typer.echo(create_key(session, owner))


@keys.command("list")
def keys_list(data_dir: DataDir = None):
    """Key ids, owners, creation and revocation times (never the secrets)."""
    from service.auth import list_keys
    from store.db import get_sessionmaker
    settings = _settings(data_dir)
    _migrate(settings)
    with get_sessionmaker(settings.database)() as session:
        for key in list_keys(session):
            revoked = f"revoked {key.revoked_at:%Y-%m-%d %H:%M}" if key.revoked_at else "active"
            typer.echo(f"{key.id}\t{key.owner}\t{key.created_at:%Y-%m-%d %H:%M}\t{revoked}")


@keys.command("revoke")
def keys_revoke(key_id: Annotated[str, typer.Argument(help="the id from `mbserve keys list`")],
                data_dir: DataDir = None):
    """Revoke a key at once."""
    from service.auth import revoke_key
    from store.db import get_sessionmaker
    settings = _settings(data_dir)
    with get_sessionmaker(settings.database)() as session:
        if not revoke_key(session, key_id):
            typer.echo(f"no active key {key_id}", err=True)
            raise typer.Exit(1)
    typer.echo(f"revoked {key_id}", err=True)


if __name__ == "__main__":
    app()
