# Image for the web and worker services of docker-compose.yml.
# pdf.js's built browser files, from the npm package (the Makefile's PDFJS_VERSION; tests/test_docker_compose.py
# checks they agree), for the library's PDF viewer.
FROM node:20-slim AS pdfjs
ARG PDFJS_VERSION=6.5.438
WORKDIR /pdfjs
RUN npm pack --silent pdfjs-dist@${PDFJS_VERSION} && mkdir out \
    && tar -xzf pdfjs-dist-${PDFJS_VERSION}.tgz -C out --strip-components=1 package/LICENSE package/build/pdf.min.mjs \
       package/build/pdf.worker.min.mjs package/web/pdf_viewer.css

FROM python:3.11-slim
# Tesseract reads scanned PDFs uploaded to a library.
RUN apt-get update && apt-get install -y --no-install-recommends build-essential cmake tesseract-ocr tesseract-ocr-eng \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml requirements.lock README.md ./
COPY indexer indexer
COPY generator generator
COPY verifier verifier
COPY webapp webapp
COPY templates templates
COPY static static
COPY --from=pdfjs /pdfjs/out static/vendor/pdfjs
COPY manage.py ./
RUN pip install --no-cache-dir torch==2.13.0 \
    && pip install --no-cache-dir -c requirements.lock -e ".[production]"
RUN DJANGO_SECRET_KEY=build VERIMED_VAR_DIR=/tmp/build python manage.py collectstatic --noinput
