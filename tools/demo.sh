#!/usr/bin/env bash
# The README's demo command: every generator's scene baked into out/demo.blend, and a Workbench
# contact sheet and a looping animated WebP each in docs/ (tools/demo.py, tools/demos/*.py):
#
#   bash tools/demo.sh [NAMES...]     (e.g. `duck handshake`: only those scenes)
#
# Installs/repairs the bpy 4.5.15 venv first, with Pillow for the animations (tools/setup_env.sh;
# first run: a ~370 MB download). Costs about 4.5 CPU minutes, most of it the animations' Workbench
# renders (6-12 minutes on the team's shared 2-core machine, depending on its load).
# Blender 4.5 LTS writes the .blend so that 4.2 LTS–4.4 open it too (checked on Debian's 4.3.2);
# a file saved by 5.0 opens only in 4.5 and newer.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
CACHE="${PROCANIM_CACHE:-$HOME/.cache/procanim}"
bash tools/setup_env.sh 4.5.15
if [ ! -f tools/demo.py ]; then
  echo "demo: tools/demo.py does not exist yet" >&2
  exit 1
fi
exec "$CACHE/venv-bpy-4.5.15/bin/python" tools/demo.py "$@"
