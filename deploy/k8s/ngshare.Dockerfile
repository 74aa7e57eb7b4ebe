# The ngshare exchange service's image, from PyPI. Build from the repository's root:
#   docker build -f deploy/k8s/ngshare.Dockerfile -t REGISTRY/decompkit-ngshare:0.6.0 .
# ngshare 0.6.0 (its last release, 2022) stores nothing under SQLAlchemy 2: keep the pin
# (the same as deploy/ngshare_service.py, which the end-to-end test installs).
FROM python:3.12-slim
RUN pip install --no-cache-dir "ngshare==0.6.0" "SQLAlchemy>=1.4,<2"
USER 65535:65535
ENTRYPOINT ["python3", "-m", "ngshare"]
