"""store.fsbroker: the embedded broker's wake-ups."""
import secrets
import socket
import threading
import time

import pytest

from kombu import Connection, Exchange, Queue

import store.fsbroker  # noqa: F401  registers the 'mbfs' transport


def test_an_ack_wakes_a_consumer_whose_prefetch_slots_were_taken(tmp_path):
    """A message sent while the consumer's only prefetch slot is taken is delivered right after
    the ack, not at the next poll (here 30 s), though the consumer already waits on its socket
    when the ack comes: the ack sends it a wake-up."""
    folder = str(tmp_path)
    options = {"data_folder_in": folder, "data_folder_out": folder, "polling_interval": 30,
               "wake_address": f"\0mbserve-test-{secrets.token_hex(8)}"}
    queue = Queue("q", Exchange("q", type="direct"), routing_key="q")
    got = []
    with Connection("mbfs://", transport_options=options) as conn:
        with conn.Consumer(queue, callbacks=[lambda body, message: got.append(message)], prefetch_count=1):
            producer = conn.Producer()
            producer.publish("first", exchange=queue.exchange, routing_key="q", declare=[queue])
            conn.drain_events(timeout=5)
            producer.publish("second", exchange=queue.exchange, routing_key="q")
            with pytest.raises(socket.timeout):  # nothing: the slot is taken (and the wake-up is used up)
                conn.drain_events(timeout=0.2)
            assert [m.payload for m in got] == ["first"]
            # acked by another thread while this one waits in drain_events, as Celery's pool does
            threading.Timer(0.2, got[0].ack).start()
            t0 = time.monotonic()
            conn.drain_events(timeout=5)
            assert [m.payload for m in got] == ["first", "second"]
            assert time.monotonic() - t0 < 2
