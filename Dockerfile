# syntax=docker/dockerfile:1
# bridge-rules proxy image (docs/deploy.md).
#
#   docker build -t bridge-rules .                                 # the proxy
#   docker build --target claude-code -t bridge-rules:claude-code . # + the claude-code upstream
#
# Stage 1 builds the wheel; the runtime stages install only that wheel on a slim Python, so
# no compiler, source tree or build tool ships. The image runs as a non-root user and works
# with a read-only root filesystem: Python writes no bytecode (PYTHONDONTWRITEBYTECODE) and
# everything else it or the proxy writes goes to /tmp, which the runtime mounts as a tmpfs
# (`docker run --read-only --tmpfs /tmp`, or an emptyDir in deploy/kustomize/).

ARG PYTHON_IMAGE=python:3.12-slim

FROM ${PYTHON_IMAGE} AS build
WORKDIR /src
COPY . .
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

FROM ${PYTHON_IMAGE} AS proxy
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HOME=/tmp \
    TMPDIR=/tmp
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels \
    && useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin bridge
# 0.0.0.0 inside the container only: the container's own network namespace is the boundary,
# and the proxy is reachable only through the ports the runtime (or a Service) publishes.
# On a host, `serve` keeps its loopback default.
ENV BRIDGE_RULES_HOST=0.0.0.0 \
    BRIDGE_RULES_PORT=8787
USER 10001:10001
WORKDIR /tmp
EXPOSE 8787
# No curl in a slim image: the stdlib probes /healthz.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
    CMD ["python", "-c", "import os,sys,urllib.request as u; sys.exit(0 if u.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('BRIDGE_RULES_PORT', '8787'), timeout=2).status == 200 else 1)"]
ENTRYPOINT ["bridge-rules", "serve"]
# The upstream comes from BRIDGE_RULES_UPSTREAM (or --upstream after the image name).
CMD []

# `serve --upstream claude-code`: the claude-code extra (the SDK and its bundled CLI binary,
# which runs without node). Node is added for `--claude-path` pointing at an npm-installed
# CLI (`npm install -g @anthropic-ai/claude-code`), which needs it.
FROM proxy AS claude-code
USER root
COPY --from=build /wheels /wheels
RUN apt-get update \
    && apt-get install -y --no-install-recommends nodejs \
    && rm -rf /var/lib/apt/lists/* \
    && pip install --no-cache-dir "$(ls /wheels/*.whl)[claude-code]" && rm -rf /wheels
USER 10001:10001

# The default target is the proxy alone.
FROM proxy
