# syntax=docker/dockerfile:1
# pixgate's image: `docker build -t pixgate .` (compose.yaml builds it for you).
#
# Two stages: the first builds pixgate's wheel and every dependency's wheel, pinned by
# constraints.txt (the versions the tests run with); the second installs only those wheels, so
# the image holds no compiler, no source tree and no pip cache. It runs as an unprivileged user.

FROM python:3.11-slim AS wheels
WORKDIR /src
COPY pyproject.toml README.md constraints.txt ./
COPY pixgate ./pixgate
RUN pip wheel --no-cache-dir --wheel-dir /wheels --constraint constraints.txt .

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH=/opt/pixgate/bin:$PATH \
    PIXGATE_DATA_DIR=/var/lib/pixgate/data
# A fixed id, so volumes and a runAsNonRoot policy can name it.
RUN groupadd --system --gid 10001 pixgate \
    && useradd --system --uid 10001 --gid pixgate --home-dir /var/lib/pixgate --create-home \
       --shell /usr/sbin/nologin pixgate
# The wheels are mounted from the first stage, not copied: no layer keeps them.
RUN --mount=type=bind,from=wheels,source=/wheels,target=/wheels \
    python -m venv /opt/pixgate \
    && /opt/pixgate/bin/pip install --no-cache-dir --no-index --find-links /wheels pixgate
USER 10001:10001
# Only with PIXGATE_DATABASE_URL unset: the embedded PostgreSQL keeps its data in
# /var/lib/pixgate/data, so mount a volume there (`-v pixgate-data:/var/lib/pixgate`).
WORKDIR /var/lib/pixgate

# `pixgate serve` listens on 127.0.0.1:8080 by default: only a TLS front in the same network
# namespace (compose.yaml's nginx) reaches it, because pixgate trusts the client certificate
# header as it arrives (docs/deployment.md). The check needs no curl: the image's Python asks
# /healthz, and any answer but 200 (or none within the timeout) fails it.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/healthz', timeout=4)"]
# SIGTERM (Docker's stop signal) lets requests and jobs in flight finish within
# PIXGATE_SHUTDOWN_GRACE_S (20 s): give `docker stop` a longer timeout than that.
CMD ["pixgate", "serve"]
