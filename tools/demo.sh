#!/usr/bin/env bash
# The README's demo command: sets up the bpy 5.0.1 venv (first run: a ~370 MB download), then builds,
# installs and runs ProcAnim headless: out/demo.blend and out/demo_contact_sheet.png.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup_env.sh 5.0.1
PY="${PROCANIM_CACHE:-$HOME/.cache/procanim}/venv-bpy-5.0.1/bin/python"
"$PY" tools/demo.py
echo "Open it: blender out/demo.blend   (or look at out/demo_contact_sheet.png)"
