"""service.events.JobWaiters across lifespans: schemathesis' ASGI transport runs the app's
lifespan once per call, inside the test's own."""
from fastapi.testclient import TestClient

from service.app import create_app


def test_nested_lifespans_share_one_listener_that_the_last_one_stops(settings, queued):
    app = create_app(settings)
    with TestClient(app):
        outer = app.state.waiters.listener
        with TestClient(app):
            assert app.state.waiters.listener is outer
        assert app.state.waiters.listener is outer and outer.is_alive()
    assert app.state.waiters.listener is None
    assert not outer.is_alive()  # stopped and joined: its connection is closed
