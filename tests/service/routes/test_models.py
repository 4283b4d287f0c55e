import copy


def test_post_model_stores_it_once_by_content(client, mini):
    first = client.post("/v1/models", json=mini)
    assert first.status_code == 201, first.text
    assert first.headers["location"] == f"/v1/models/{first.json()['id']}"
    assert set(first.json()) == {"id", "warnings", "summary"}
    reordered = dict(reversed(list(mini.items())))
    assert client.post("/v1/models", json=reordered).json()["id"] == first.json()["id"]


def test_get_model_returns_the_document_as_posted(client, mini):
    model_id = client.post("/v1/models", json=mini).json()["id"]
    assert client.get(f"/v1/models/{model_id}").json() == mini
    expanded = client.get(f"/v1/models/{model_id}", params={"expanded": "true"})
    assert expanded.status_code == 200 and expanded.json()["objects"]


def test_broken_model_gives_422_with_every_problem_and_its_path(client, mini):
    broken = copy.deepcopy(mini)
    del broken["objects"][1]["objectType"]
    broken["simulationSettings"]["timeIntegration"]["numberOfSteps"] = -3
    answer = client.post("/v1/models", json=broken)
    assert answer.status_code == 422
    error = answer.json()["error"]
    assert error["code"] == "model_invalid"
    paths = [d["path"] for d in error["detail"]]
    assert any(p.startswith("objects[1]") for p in paths), paths
    assert any(p.startswith("simulationSettings.timeIntegration") for p in paths), paths


def test_non_object_body_gives_422_in_the_error_format(client):
    for body in ("[1, 2]", "{not json", ""):
        answer = client.post("/v1/models", content=body, headers={"content-type": "application/json"})
        assert answer.status_code == 422, body
        assert answer.json()["error"]["code"] == "invalid_request"
        assert all({"path", "message"} <= set(d) for d in answer.json()["error"]["detail"])


def test_unknown_model_is_404(client):
    answer = client.get("/v1/models/nope")
    assert answer.status_code == 404
    assert answer.json()["error"]["code"] == "not_found"


def test_a_document_that_passed_is_not_validated_again(client, mini, monkeypatch):
    """Validate once (issue 17): the API keeps a passing verdict by content hash; a job on the
    same content skips the core's validation, and gives the same summary and warnings. A
    document that failed is validated again (its problems are not kept)."""
    import multibody
    calls = []
    real = multibody.validate_document
    monkeypatch.setattr(multibody, "validate_document", lambda *a, **k: calls.append(1) or real(*a, **k))
    doc = copy.deepcopy(mini)
    doc["name"] = "validated once"
    first = client.post("/v1/models", json=doc).json()
    assert client.post("/v1/jobs", json={"model": doc}).status_code == 202
    assert client.post("/v1/models", json=doc).json() == first
    assert len(calls) == 1
    broken = {**doc, "nodes": []}
    for _ in range(2):
        assert client.post("/v1/models", json=broken).status_code == 422
    assert len(calls) == 3
