# The image for docker-compose.yml's api and worker services.
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY multibody multibody
COPY service service
COPY worker worker
COPY mbserve mbserve
RUN pip install --no-cache-dir . \
 && useradd --system --home /var/lib/mbserve mbserve \
 && mkdir -p /var/lib/mbserve && chown mbserve /var/lib/mbserve
USER mbserve
ENV MBSERVE_DATA_DIR=/var/lib/mbserve
