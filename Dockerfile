# One image for the web process and the workers; docker-compose.yml picks the command.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    OLOPROOF_DATA_DIR=/var/lib/oloproof \
    OLOPROOF_STATIC_ROOT=/var/lib/oloproof/static

WORKDIR /app
COPY pyproject.toml README.md manage.py skynet.py ./
COPY oloproof ./oloproof
COPY oloproof_core ./oloproof_core
COPY evalsite ./evalsite
COPY runs ./runs
COPY metrics ./metrics
COPY templates ./templates
COPY static ./static
# bubblewrap: the sandbox each system's process runs in (docs/isolation.md); the
# container needs namespaces allowed for it (see docs/deploy.md), `oloproof doctor` checks.
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap \
    && rm -rf /var/lib/apt/lists/*
RUN pip install ".[server]" \
    && useradd --system --home-dir /var/lib/oloproof --create-home oloproof \
    && mkdir -p /var/lib/oloproof/static && chown -R oloproof /var/lib/oloproof

USER oloproof
EXPOSE 8000
CMD ["oloproof", "serve", "--no-worker", "--host", "0.0.0.0", "--port", "8000"]
