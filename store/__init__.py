"""Storage: settings, the database (tables, sessions, migrations), the job life cycle, results
files and the queue interface. Imported by `service/` and `worker/`; imports neither."""
