"""The Celery worker: thin tasks around the numeric core (runner.py holds the logic)."""
