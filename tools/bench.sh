#!/usr/bin/env bash
# Benchmarks, one command: bake speed (ProcAnim's baker vs keyframe_insert, same run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup_env.sh 5.0.1 >/dev/null
PY="${PROCANIM_CACHE:-$HOME/.cache/procanim}/venv-bpy-5.0.1/bin/python"
"$PY" bench/bake_speed.py "$@"
for b in bench/*_engine.py; do [ -f "$b" ] && { echo "== $b"; "$PY" "$b"; }; done
