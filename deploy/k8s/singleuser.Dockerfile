# The single-user image for every pod (students and instructor). Build from the
# repository's root:
#   docker build -f deploy/k8s/singleuser.Dockerfile -t REGISTRY/decompkit-singleuser:1 .
FROM python:3.12-slim
RUN useradd --create-home --uid 1000 --gid 100 --shell /bin/bash jovyan
COPY pyproject.toml README.md /tmp/decompkit/
COPY src /tmp/decompkit/src
# jupyterhub at the hub's version (Zero to JupyterHub 4.4.0 runs JupyterHub 5.5.0) gives
# jupyterhub-singleuser. ngshare-exchange goes in without its dependencies: it pins
# jupyter-core<4.11.2, which no current Jupyter server accepts, and needs only rapidfuzz
# beyond what nbgrader brings (the same pins as deploy/ngshare_service.py).
RUN pip install --no-cache-dir /tmp/decompkit "jupyterhub==5.5.0" \
 && pip install --no-cache-dir --no-deps "ngshare-exchange==0.5.3" "rapidfuzz>=3,<4" \
 && rm -rf /tmp/decompkit
# The course files the instructor copies into their home once (docs/deploy.md, step 7).
COPY nbgrader_config.py /opt/decompkit/course/nbgrader_config.py
COPY solutions /opt/decompkit/course/solutions
COPY notebooks /opt/decompkit/course/notebooks
# The two roles' Jupyter configurations; the hub's pre-spawn hook picks one per user.
COPY deploy /tmp/deploy
RUN python3 /tmp/deploy/ngshare_service.py role-configs /etc/decompkit \
        --course /home/jovyan/course --url http://ngshare:8080/services/ngshare \
 && rm -rf /tmp/deploy
USER 1000
WORKDIR /home/jovyan
CMD ["jupyterhub-singleuser"]
