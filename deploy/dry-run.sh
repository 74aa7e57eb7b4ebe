#!/usr/bin/env bash
# Start the course's JupyterHub on localhost with an instructor and three students (run as root).
set -euo pipefail
exec python3 "$(dirname "$0")/hub.py" dry-run "$@"
