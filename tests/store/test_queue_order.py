"""A worker takes single jobs before sweep batches (store.queue.QUEUE_ORDER), on both brokers:
the order in which a worker's consumer receives messages, with no clock involved. Round robin
(kombu's default) would hand out a batch between two single jobs."""
import shutil

import pytest
from kombu import Consumer, Queue

from store import queue
from store.sweeps import RUN_BATCH
from tests.support import free_port, redis_server, wait_redis


@pytest.fixture(params=["filesystem", "redis"])
def broker_settings(request, settings):
    if request.param == "filesystem":
        yield settings
        return
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    port = free_port()
    server = redis_server(port)
    try:
        wait_redis(port)
        yield settings.model_copy(update={"broker_url": f"redis://127.0.0.1:{port}/0"})
    finally:
        server.kill()
        server.wait()


def received(settings, n: int) -> list[str]:
    """The task names of the next n messages, consumed as `mbserve worker` does (-Q WORKER_QUEUES,
    one message at a time, each acknowledged before the next)."""
    app = queue.get_celery(settings)
    names = []
    with app.connection_for_read() as conn:
        queues = [Queue(name, routing_key=name) for name in queue.WORKER_QUEUES.split(",")]

        def take(body, message):
            names.append(message.headers["task"])
            message.ack()
        with Consumer(conn.channel(), queues=queues, callbacks=[take], prefetch_count=1, accept=["json"]):
            while len(names) < n:
                conn.drain_events(timeout=10)
    return names


def test_a_free_worker_takes_single_jobs_before_the_batches_queued_earlier(broker_settings):
    app = queue.get_celery(broker_settings)
    for k in range(3):
        app.send_task(RUN_BATCH, args=[f"sweep{k}", ["a", "b"], False], queue=queue.SWEEP_QUEUE)
    assert received(broker_settings, 1) == [RUN_BATCH]  # nothing else queued: a batch
    for k in range(2):
        app.send_task(queue.RUN_JOB, args=[f"job{k}"])
    assert received(broker_settings, 4) == [queue.RUN_JOB, queue.RUN_JOB, RUN_BATCH, RUN_BATCH]
