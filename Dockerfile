# The red7es image: the `red7` command with its workers (see docker-compose.yml).
FROM python:3.11-slim
WORKDIR /src
COPY pyproject.toml README.md ./
COPY red7es ./red7es
COPY workers ./workers
COPY cli ./cli
RUN pip install --no-cache-dir . && useradd --create-home red7
USER red7
CMD ["red7", "worker"]
