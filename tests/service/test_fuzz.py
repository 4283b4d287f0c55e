"""Hostile and malformed input never gives a 5xx: random JSON bodies, and the mini example with
random values put in random places (hypothesis)."""
import copy

from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

SCALARS = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
           | st.text(max_size=8))
JSON = st.recursive(SCALARS,
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=20)
FUZZ = hsettings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


def paths(doc, prefix=()):
    """Every place in a JSON document where a value can be replaced."""
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for key, value in items:
        yield prefix + (key,)
        yield from paths(value, prefix + (key,))


def mutate(doc, path, value):
    doc = copy.deepcopy(doc)
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return doc


def assert_no_5xx(answer):
    assert answer.status_code < 500, answer.text
    if answer.status_code >= 400:
        assert set(answer.json()["error"]) == {"code", "message", "detail"}


@FUZZ
@given(body=JSON)
def test_random_json_bodies(client, body):
    assert_no_5xx(client.post("/v1/models", json=body))
    assert_no_5xx(client.post("/v1/jobs", json=body))
    assert_no_5xx(client.post("/v1/jobs", json={"model": body}))


@FUZZ
@given(data=st.data(), value=JSON)
def test_mini_with_a_random_value_somewhere(client, mini, data, value):
    path = data.draw(st.sampled_from(list(paths(mini))))
    doc = mutate(mini, path, value)
    assert_no_5xx(client.post("/v1/models", json=doc))
    assert_no_5xx(client.post("/v1/jobs", json={"model": mini, "simulationSettings": {path[-1]: value}}))


def test_non_standard_json_numbers(client, mini):
    """Python's json reads NaN and Infinity; they must not reach the database or a 500."""
    import json
    text = json.dumps(mini).replace('"endTime": 1.0', '"endTime": NaN').replace('"mass": 1.0', '"mass": Infinity')
    for path in ("/v1/models", "/v1/jobs"):
        body = text if path == "/v1/models" else '{"model": ' + text + "}"
        assert_no_5xx(client.post(path, content=body, headers={"content-type": "application/json"}))
