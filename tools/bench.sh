#!/usr/bin/env bash
# Benchmarks, one command. Each script measures ProcAnim and its comparison in the same run:
#   bench/bake_speed.py          the baker (foreach_set) vs keyframe_insert, duck walk, 1,000 / 10,000 frames
#   bench/handshake_blender.py   Table 3 for six solver pairs on the evaluated pose, vs Blender's IK constraint
#   bench/path_walk_blender.py   bake time and foot skate vs Follow Path + cycle / IK feet baked with nla.bake
#   bench/terrain_blender.py     Table 2: walk/jump/tumble × zigzag ankle/knee/waist, collisions, bone length, fps
#   bench/control_rig_bake.py    a walk baked onto a generated Rigify human's controls vs Bake Action (nla.bake)
#   bench/*_engine.py            the same methods measured on the engine alone (no Blender)
# `bash tools/bench.sh NAME…` runs only the scripts whose names contain NAME (e.g. `handshake`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup_env.sh 5.0.1 >/dev/null
PY="${PROCANIM_CACHE:-$HOME/.cache/procanim}/venv-bpy-5.0.1/bin/python"
for b in bench/bake_speed.py bench/control_rig_bake.py bench/*_blender.py bench/*_engine.py; do
  if [ "$#" -gt 0 ]; then
    keep=0
    for want in "$@"; do case "$b" in *"$want"*) keep=1 ;; esac; done
    [ "$keep" = 1 ] || continue
  fi
  echo "======== $b"
  "$PY" "$b"
done
