# The image for docker-compose.yml's api and worker services.
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY multibody multibody
COPY store store
COPY service service
COPY worker worker
COPY mbserve mbserve
# the core's numba kernels are compiled once here (about 9 minutes on 2 cores), into a cache every process can read
ENV NUMBA_CACHE_DIR=/var/cache/mbserve-numba
RUN pip install --no-cache-dir . \
 && mbserve compile \
 && useradd --system --home /var/lib/mbserve mbserve \
 && mkdir -p /var/lib/mbserve && chown mbserve /var/lib/mbserve
USER mbserve
ENV MBSERVE_DATA_DIR=/var/lib/mbserve
