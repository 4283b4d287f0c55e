def test_validate_reports_problems_with_paths_and_stores_nothing(client, mini):
    ok = client.post("/v1/validate", json=mini)
    assert ok.status_code == 200 and ok.json()["ok"] is True and ok.json()["problems"] == []
    assert ok.json()["summary"]["sensors"] == len(mini["sensors"])
    broken = {**mini, "objects": [{**mini["objects"][0], "massss": 1}] + mini["objects"][1:]}
    report = client.post("/v1/validate", json=broken).json()
    assert report["ok"] is False
    assert [p["path"] for p in report["problems"]] == ["objects[0].massss"]
    assert client.get("/v1/jobs").json()["items"] == []
