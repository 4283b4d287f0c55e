"""mbserve's HTTP service: FastAPI routes over SQLAlchemy storage; jobs run by worker/."""
