# Image for the web and worker services of docker-compose.yml.
FROM python:3.11-slim
RUN apt-get update && apt-get install -y --no-install-recommends build-essential cmake && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml requirements.lock README.md ./
COPY indexer indexer
COPY generator generator
COPY verifier verifier
COPY webapp webapp
COPY templates templates
COPY static static
COPY manage.py ./
RUN pip install --no-cache-dir torch==2.13.0 \
    && pip install --no-cache-dir -c requirements.lock -e ".[production]"
RUN DJANGO_SECRET_KEY=build VERIMED_VAR_DIR=/tmp/build python manage.py collectstatic --noinput
