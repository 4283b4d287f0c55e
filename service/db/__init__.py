"""Storage: SQLAlchemy 2 tables (models.py), engines and sessions, Alembic migrations."""
