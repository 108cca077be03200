#!/usr/bin/env bash
# Benchmarks, one command. Each bench measures ProcAnim and what it is compared with in the same run
# and prints its figures twice: as tables, and as `BENCH {json}` lines (bench/benchlog.py).
#
#   bash tools/bench.sh              every bench below, one after the other (~30-60 min on 2 cores)
#   bash tools/bench.sh NAME...      only those whose name or command contains a NAME (e.g. `handshake`)
#   python3 tools/bench_readme.py    then: the README's Benchmarks tables and docs/performance.md's
#                                    "Latest run" regenerated from the saved output (--check: diff only)
#
#   bake_speed        the baker (foreach_set) vs keyframe_insert, duck walk, 1,000 / 10,000 frames
#   path_walk         Rigify's metarig, 985 frames, operator end to end vs Bake Action with IK (speed);
#                     skate and path error vs Follow Path + a baked cycle, with and without IK feet (follow)
#   crowd             100 ProcAnim humans x 1,000 frames, one process (s per 1,000 character-frames)
#   handshake         Table 3 on the evaluated pose, solver ms per frame vs Blender's IK, operator frames/s
#   terrain_table2    Table 2: walk/jump/tumble x zigzag ankle/knee/waist, collisions, bone length
#   terrain_speed     walks over blocks, operator end to end vs Bake Action of the same frames
#   control_rig       a 1,000-frame walk baked onto a generated Rigify human's controls vs Bake Action
#   *_engine          the same methods on the engine alone (no Blender); fix_feet_engine: Fix Feet's frames/s
#                     on a 31-bone clip (CMU's BVH skeleton) and its quality table on ProcAnim's skated walk
#   path_walk_length  the path walk engine's time and peak memory at ~1k, 8k, 20k frames, growth exponent
#   path_walk_numerics  the engine's hand-written numerics against plain numpy, one BLAS thread
#   batch             48 shots: sequential vs a local pool vs Dask; waits first (up to 5 min) for a
#                     1-minute load average below 0.7: a pool's speed-up only shows on idle cores
#
# Each bench script names the generators it measures (`GENERATORS = (...)`); every generator of the
# registry is measured by one (tests/blender/test_panels.py).
#
# Output: out/bench/NAME.log (the bench's output, a `run` record before and after it: date, commit,
# cores, Blender version, exit status, seconds) and out/bench/NAME.load (the load average every 5 s
# while it runs). A run of some benches replaces only their files.
# Environment: PROCANIM_BENCH_QUIET=L   before each bench, wait (up to 10 min) for a 1-min load below L.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup_env.sh 5.0.1 >/dev/null
PY="${PROCANIM_CACHE:-$HOME/.cache/procanim}/venv-bpy-5.0.1/bin/python"
OUT=out/bench
mkdir -p "$OUT"

BENCHES=(
  "bake_speed|bench/bake_speed.py"
  "path_walk|bench/path_walk_blender.py --sections speed,follow"
  "crowd|bench/path_walk_crowd_blender.py --characters 100 --frames 1000"
  "handshake|bench/handshake_blender.py"
  "terrain_table2|bench/terrain_blender.py"
  "terrain_speed|bench/terrain_blender.py --speed"
  "control_rig|bench/control_rig_bake.py --frames 1000 --pairs 5"
  "handshake_engine|bench/handshake_engine.py"
  "terrain_engine|bench/terrain_engine.py --quick"
  "path_walk_engine|bench/path_walk_engine.py"
  "fix_feet_engine|bench/fix_feet_engine.py"
  "path_walk_length|bench/path_walk_length.py"
  "path_walk_numerics|bench/path_walk_numerics.py"
  "batch|bench/batch_blender.py --shots 48 --workers 2"
)

load1() { cut -d' ' -f1 /proc/loadavg; }

# wait_quiet LIMIT SECONDS: until the 1-minute load average is below LIMIT, at most SECONDS
wait_quiet() {
  local limit="$1" left="$2"
  while awk -v l="$(load1)" -v m="$limit" 'BEGIN { exit !(l >= m) }' && [ "$left" -gt 0 ]; do
    echo "  (load average $(load1) >= $limit: waiting, ${left} s left)"
    sleep 15
    left=$((left - 15))
  done
}

COMMIT="$(git rev-parse --short HEAD)"
DIRTY=false
git diff --quiet HEAD -- . ':!out' 2>/dev/null || DIRTY=true
CORES="$(nproc)"
CPU="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1 | tr -d '"\\')"
BLENDER="$("$PY" -c 'import bpy; print("VERSION", bpy.app.version_string)' 2>/dev/null | sed -n 's/^VERSION //p')"

SAMPLER=""
trap '[ -z "$SAMPLER" ] || kill "$SAMPLER" 2>/dev/null || true' EXIT
FAILED=()
for entry in "${BENCHES[@]}"; do
  name="${entry%%|*}"
  cmd="${entry#*|}"
  if [ "$#" -gt 0 ]; then
    keep=0
    for want in "$@"; do case "$name $cmd" in *"$want"*) keep=1 ;; esac; done
    [ "$keep" = 1 ] || continue
  fi
  echo "======== $name: $cmd"
  [ -z "${PROCANIM_BENCH_QUIET:-}" ] || wait_quiet "$PROCANIM_BENCH_QUIET" 600
  [ "$name" != batch ] || wait_quiet 0.7 300
  log="$OUT/$name.log"
  printf 'BENCH {"table": "run", "row": "start", "bench": "%s", "command": "%s", "date": "%s", "commit": "%s", "dirty": %s, "cores": %s, "cpu": "%s", "blender": "%s", "load": "%s"}\n' \
    "$name" "$cmd" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$COMMIT" "$DIRTY" "$CORES" "$CPU" "$BLENDER" \
    "$(cut -d' ' -f1-3 /proc/loadavg)" >"$log"
  (while :; do echo "$(date +%s) $(cut -d' ' -f1-4 /proc/loadavg)"; sleep 5; done) >"$OUT/$name.load" &
  SAMPLER=$!
  t0=$(date +%s)
  set +e
  # shellcheck disable=SC2086  # the command's arguments are split on purpose
  "$PY" $cmd 2>&1 | tee -a "$log"
  rc=${PIPESTATUS[0]}
  set -e
  kill "$SAMPLER" 2>/dev/null || true
  wait "$SAMPLER" 2>/dev/null || true
  SAMPLER=""
  printf 'BENCH {"table": "run", "row": "end", "bench": "%s", "status": %s, "seconds": %s}\n' \
    "$name" "$rc" "$(($(date +%s) - t0))" >>"$log"
  [ "$rc" = 0 ] || FAILED+=("$name (exit $rc)")
done

echo "======== saved in $OUT/; \`python3 tools/bench_readme.py\` regenerates the README's Benchmarks tables"
"$PY" tools/bench_readme.py --print speed || true
if [ "${#FAILED[@]}" -gt 0 ]; then
  echo "failed: ${FAILED[*]}"
  exit 1
fi
