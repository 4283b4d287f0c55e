"""`mbserve serve` on its embedded defaults (SQLite, filesystem broker, an embedded worker), end to end."""
import httpx
import pytest

from tests.conftest import EXAMPLES
from tests.support import check_like_in_process

CASES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "model.json").exists())


@pytest.mark.parametrize("case", CASES)
def test_embedded_results_equal_the_in_process_run(embedded, case):
    with httpx.Client(base_url=embedded, timeout=30) as client:
        check_like_in_process(client, case)
