"""Big downloads without slowing the API's other requests: their rows are formatted in a pool of
processes at a lower CPU priority, and the event loop awaits the text without a thread.

Formatting a chunk of float rows (orjson, store.formats.row_text) holds the GIL for milliseconds;
in the API's threads that made every other request wait its turn for the GIL, for each of its
own GIL hand-overs (3x their idle median during 20 concurrent downloads). In the pool, the API
process only reads chunks (a thread hop per page, the GIL released while it waits for the
database or the disk) and writes text, and the operating system, not the GIL, shares the CPU,
giving the API first call.

Small downloads (up to BIG_BYTES of float64 values) are formatted in the request's thread as
before: a pool round trip would cost them more than it saves. The smallest (up to WHOLE_BYTES,
a small job's results) are answered whole, formatted in the route's own thread: a streamed body
costs two more thread hops (its piece, then its end) and chunked framing, ~1-2 ms of a small
job's round trip on a loaded machine.
"""
from __future__ import annotations

import asyncio
import os
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context

from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response, StreamingResponse

from store.config import Settings
from store.formats import RowText, Source, row_text, streamed

BIG_BYTES = 4_000_000  # float64 values; bigger downloads are formatted in the pool, uncompressed
WHOLE_BYTES = 1_000_000  # float64 values (~2.5 MB of JSON at most); smaller downloads are not streamed
AHEAD = 3  # chunks each download has in the pool at once: the pool's processes stay busy, memory bounded
NICE = 10  # the pool's CPU priority below the API's

_pool: ProcessPoolExecutor | None = None
_pool_lock = threading.Lock()


def pool(settings: Settings) -> ProcessPoolExecutor | None:
    """The process pool of this API process (started on the first big download; spawned: the API
    has threads), or None when settings.download_processes is 0."""
    global _pool
    if settings.download_processes <= 0:
        return None
    with _pool_lock:
        if _pool is None:
            _pool = ProcessPoolExecutor(settings.download_processes, mp_context=get_context("spawn"),
                                        initializer=os.nice, initargs=(NICE,))  # imports store.formats only
        return _pool


def _discard(executor: ProcessPoolExecutor) -> None:
    """A pool one of whose processes died (killed, out of memory) takes no more work: the next
    download starts a new one."""
    global _pool
    with _pool_lock:
        if _pool is executor:
            _pool = None
    executor.shutdown(wait=False, cancel_futures=True)


def raw_bytes(arrays: list[dict]) -> int:
    return sum(a.get("rows", 0) * (a.get("cols") or len(a.get("columns", ()))) * 8 for a in arrays)


def response(settings: Settings, source: Source, arrays: list[dict], parts: Callable[[RowText], Iterable],
             media_type: str, headers: dict | None = None) -> Response:
    """The download of `parts(text)` (store.formats' document, sensor or solution text) with the
    rows of `arrays` from `source`: whole when small, else streamed. A big one is not gzipped: gzip
    runs at ~10-20 MB/s of JSON per core, far below disk speed, and float rows only halve under it."""
    size = raw_bytes(arrays)
    big = size > BIG_BYTES
    # (a solution stored as .npz before revision 0003 has no size in the database: streamed)
    if not big and size <= WHOLE_BYTES and all("rows" in a for a in arrays):  # the routes are `def`s: their thread
        return Response(b"".join(streamed(source, parts(row_text))), media_type=media_type, headers=headers)
    headers = {**(headers or {}), **({"Content-Encoding": "identity"} if big else {})}  # keeps the gzip middleware off
    executor = pool(settings) if big else None
    if executor is None:
        return StreamingResponse(streamed(source, parts(row_text)), media_type=media_type, headers=headers)
    body = pooled(executor, source, parts(lambda kind, chunk: executor.submit(row_text, kind, chunk)))
    return StreamingResponse(body, media_type=media_type, headers=headers)


def _take(parts: Iterator, room: int) -> tuple[list, bool]:
    """The next parts, up to and including the `room`-th Future (the chunk's read and its
    submission to the pool happen here, in a thread); True when the parts are done."""
    items = []
    for part in parts:
        items.append(part)
        if isinstance(part, Future):
            room -= 1
            if room == 0:
                return items, False
    return items, True


async def pooled(executor: ProcessPoolExecutor, source: Source, parts: Iterable[bytes | Future]) -> AsyncIterator[bytes]:
    """The parts in order, each Future awaited in the event loop; AHEAD chunks in the pool at
    once. Pieces end after each formatted chunk (~2 MB), the small parts joined to them."""
    parts, pending, ahead, done = iter(parts), deque(), 0, False
    try:
        while True:
            if not done and ahead < AHEAD:
                items, done = await run_in_threadpool(_take, parts, AHEAD - ahead)
                pending.extend(items)
                ahead += sum(isinstance(item, Future) for item in items)
            if not pending:
                return
            piece = []
            while pending:
                item = pending.popleft()
                if isinstance(item, Future):
                    piece.append(await asyncio.wrap_future(item))
                    ahead -= 1
                    break
                piece.append(item)
            yield b"".join(piece)
    except BrokenProcessPool:  # this download ends unfinished (the client sees a cut response)
        _discard(executor)
        raise
    finally:  # done, or the client went away: chunks not yet formatted are dropped
        for item in pending:
            if isinstance(item, Future):
                item.cancel()
        source.__exit__(None, None, None)
