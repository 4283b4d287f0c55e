"""kombu's filesystem transport with atomic writes: the stock one creates the message file and
then writes it, so a worker polling at that moment can take an empty file and lose the message."""
import os
import uuid

from kombu.transport import TRANSPORT_ALIASES, filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps
from time import monotonic


class Channel(filesystem.Channel):
    def _put(self, queue, payload, **kwargs):
        name = f"{int(round(monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        # the stock _get only takes files named '<x>.<queue>.msg'; the temporary name never matches
        tmp = os.path.join(self.data_folder_out, f"{name}.tmp")
        with open(tmp, "wb") as f:
            f.write(str_to_bytes(dumps(payload)))
        os.rename(tmp, os.path.join(self.data_folder_out, name))


class Transport(filesystem.Transport):
    Channel = Channel


TRANSPORT_ALIASES.setdefault("mbfs", "store.fsbroker:Transport")
