#!/usr/bin/env bash
# Render ProcAnim's demo pictures (contact sheets, plots) with the dev venv:
#
#   bash tools/demo.sh [ARGS...]      (ARGS are passed to tools/demo.py)
#
# Installs/repairs the venvs first (tools/setup_env.sh; the 5.0.1 venv has bpy and matplotlib).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
CACHE="${PROCANIM_CACHE:-$HOME/.cache/procanim}"
bash tools/setup_env.sh 5.0.1
if [ ! -f tools/demo.py ]; then
  echo "demo: tools/demo.py does not exist yet" >&2
  exit 1
fi
exec "$CACHE/venv-bpy-5.0.1/bin/python" tools/demo.py "$@"
