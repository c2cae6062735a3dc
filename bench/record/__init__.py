"""Recording a large run into the Django store (SQLite and PostgreSQL)."""
