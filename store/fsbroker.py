"""kombu's filesystem transport, with three changes:

- atomic writes: the stock one creates the message file and then writes it, so a worker polling
  at that moment can take an empty file and lose the message;
- wake-ups instead of polling: a producer sends a datagram to the consumer's abstract unix
  socket (transport option `wake_address`) after each message, and the consumer waits on that
  socket between polls, so a message is taken within a fraction of a millisecond instead of up
  to `polling_interval` later (now only the fallback for a lost datagram); an ack sends one too,
  as a consumer whose prefetch slots were all taken waits on the socket, and messages sent
  meanwhile would otherwise wait for the poll (the last jobs of a burst: up to 1 s each);
- queues consumed in priority order on request (`queue_order_strategy`), as Redis' are.
"""
import os
import socket
import uuid
from time import monotonic

from kombu.transport import TRANSPORT_ALIASES, filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps

from .notify import send_datagram


class Channel(filesystem.Channel):
    def _poll(self, cycle, callback, timeout=None):
        """With the transport option queue_order_strategy "priority" (as kombu's Redis transport
        has it), the queues in the order they are consumed, not in turn."""
        if self.transport_options.get("queue_order_strategy") != "priority":
            return super()._poll(cycle, callback, timeout)
        for queue in self._active_queues:
            try:
                return self._get_and_deliver(queue, callback)
            except filesystem.Empty:
                continue
        raise filesystem.Empty()

    def _put(self, queue, payload, **kwargs):
        name = f"{int(round(monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        # the stock _get only takes files named '<x>.<queue>.msg'; the temporary name never matches
        tmp = os.path.join(self.data_folder_out, f"{name}.tmp")
        with open(tmp, "wb") as f:
            f.write(str_to_bytes(dumps(payload)))
        os.rename(tmp, os.path.join(self.data_folder_out, name))
        if self.transport_options.get("wake_address"):
            send_datagram(self.transport_options["wake_address"], b"m")


    def basic_ack(self, delivery_tag, multiple=False):
        super().basic_ack(delivery_tag, multiple)
        if self.transport_options.get("wake_address"):  # a prefetch slot is free: take the next message now
            send_datagram(self.transport_options["wake_address"], b"a")


class Transport(filesystem.Transport):
    Channel = Channel
    _wake: socket.socket | None = None

    def _wake_socket(self) -> socket.socket | None:
        """Bound by the first consumer; another process already bound to it polls instead."""
        address = self.client.transport_options.get("wake_address")
        if self._wake is None and address:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            try:
                s.bind(address)
            except OSError:
                s.close()
                return None
            self._wake = s
        return self._wake

    def drain_events(self, connection, timeout=None):
        wake = self._wake_socket()
        if wake is None:
            return super().drain_events(connection, timeout)
        start = monotonic()
        while True:
            try:
                return self.cycle.get(self._deliver, timeout=timeout)
            except filesystem.Empty:
                waited = monotonic() - start
                if timeout is not None and waited >= timeout:
                    raise socket.timeout()
                wake.settimeout(self.polling_interval if timeout is None else
                                min(self.polling_interval, timeout - waited))
                try:
                    wake.recv(64)
                    wake.setblocking(False)
                    while True:  # one poll serves every message sent meanwhile
                        wake.recv(64)
                except (BlockingIOError, TimeoutError):
                    pass


TRANSPORT_ALIASES.setdefault("mbfs", "store.fsbroker:Transport")
