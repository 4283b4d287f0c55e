"""A no-op Celery task on mbserve's broker configuration (the floor for job round trips).

    celery -A bench.noop_app worker ...            # the worker
    python -m bench.noop_app RUNS JOBS             # prints {"roundTrip": median s, "perSecond": tasks/s}
"""
import json
import os
import statistics
import sys
import time

from store.config import get_settings
from worker.celery_app import worker_app

app = worker_app(get_settings())
app.conf.update(task_ignore_result=False, result_backend=os.environ["BENCH_RESULT_BACKEND"])


@app.task(name="bench.noop")
def noop() -> None:
    return None


def measure(runs: int, jobs: int) -> dict:
    noop.delay().get(timeout=60, interval=0.005)  # the worker is up
    trips = []
    for _ in range(runs):
        t0 = time.perf_counter()
        noop.delay().get(timeout=60, interval=0.005)
        trips.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    for r in [noop.delay() for _ in range(jobs)]:
        r.get(timeout=120, interval=0.005)
    return {"roundTrip": statistics.median(trips), "perSecond": jobs / (time.perf_counter() - t0)}


if __name__ == "__main__":
    print(json.dumps(measure(int(sys.argv[1]), int(sys.argv[2]))))
