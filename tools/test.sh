#!/usr/bin/env bash
# ProcAnim's whole test run (what the README and .ci/run call):
#
#   bash tools/test.sh
#
# Stages: setup (tools/setup_env.sh) -> ruff -> mypy (tools/typecheck.py) -> build (tools/build.py)
# -> engine tests (tests/engine + tests/test_codebase.py, once) -> Blender tests (tests/blender) on
# each bpy wheel -> batch tests (tests/batch: a local Dask cluster, bpy 5.0.1) -> a real Blender
# binary (tools/real_blender.sh test, when that script exists).
#
# Environment:
#   PROCANIM_VERSIONS="5.0.1 4.5.15 4.2.23"  bpy wheels to run the Blender tests on (default: all)
#   PROCANIM_REAL_BLENDER=0                  skip the real-Blender stage (default 1: run it)
#   PROCANIM_LANES=2                         test stages run at once (default 2 with 2+ cores, else 1)
#   PROCANIM_CACHE                           where venvs and caches live (default ~/.cache/procanim)
#   PROCANIM_ZIP                             test this zip instead of building one per Blender
#   PYTEST_ADDOPTS                           passed to every pytest (e.g. "-x -k duck")
#   PROCANIM_STAGE_TIMEOUT=1800              seconds before a test stage counts as hung and is
#                                            killed (setup and real-blender, which download, get 2x)
#
# Every stage runs even when an earlier one failed (except that nothing runs without the venvs);
# logs go to out/test-logs/. The last line is the total over all stages, `N passed, M failed`
# (pytest stages count tests, xfails with the skipped; ruff, mypy, build and setup count as one check each). The exit
# status is non-zero if any stage failed, including a pytest stage that collected no test.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
HOME="${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}"
export HOME
export PROCANIM_CACHE="${PROCANIM_CACHE:-$HOME/.cache/procanim}"
VERSIONS="${PROCANIM_VERSIONS:-5.0.1 4.5.15 4.2.23}"
TOOLS_VENV="$PROCANIM_CACHE/venv-bpy-5.0.1"
LOGS="$REPO/out/test-logs"
mkdir -p "$LOGS"
export PYTHONDONTWRITEBYTECODE=1

STAGES=()      # name
RESULTS=()     # ok | FAILED | skipped
PASSED=()      # per stage
FAILED=()
SKIPPED=()
TIMES=()
TOTAL_PASSED=0
TOTAL_FAILED=0
TOTAL_SKIPPED=0
ANY_FAILED=0

banner() { printf '\n======== %s ========\n' "$*"; }

# pytest_counts LOG -> "passed failed skipped" summed over every pytest summary line in LOG
# (real_blender.sh may run pytest more than once). Prints nothing if there is no summary line.
pytest_counts() {
  python3 - "$1" <<'EOF'
import re, sys
text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
text = re.sub(r"\x1b\[[0-9;]*m", "", text)
summary = re.compile(r"^[= ]*((?:\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?|rerun)(?:, )?)+) in [\d.]+s", re.M)
passed = failed = skipped = 0
found = False
for m in summary.finditer(text):
    found = True
    for n, word in re.findall(r"(\d+) (\w+)", m.group(1)):
        n = int(n)
        if word in ("passed", "xpassed"):
            passed += n
        elif word in ("failed", "error", "errors"):
            failed += n
        elif word in ("skipped", "xfailed"):
            skipped += n
if not found and re.search(r"^[= ]*no tests ran in [\d.]+s", text, re.M):
    found = True
if found:
    print(passed, failed, skipped)
EOF
}

STAGE_TIMEOUT="${PROCANIM_STAGE_TIMEOUT:-1800}"

# run_stage NAME KIND COMMAND... ; KIND is "pytest" (counts tests; exit 5 = failure) or "check".
# A stage that runs longer than its limit is killed and fails (exit 124), so one hung Blender
# cannot eat the whole CI budget. The stage's output goes to its log (and to the terminal unless
# QUIET=1, as in a lane); its outcome to "$LOGS/NAME.result", read back by collect.
run_stage() {
  local name="$1" kind="$2"; shift 2
  local limit="$STAGE_TIMEOUT"
  case "$name" in setup | real-blender) limit=$((2 * STAGE_TIMEOUT)) ;; esac
  local log="$LOGS/$name.log" started rc counts p=0 f=0 s=0 result
  rm -f "$LOGS/$name.result"
  [ "${QUIET:-0}" = 1 ] || banner "$name: $*"
  started=$(date +%s.%N)
  set +e
  if [ "${QUIET:-0}" = 1 ]; then
    { banner "$name: $*"; timeout --kill-after=30 "$limit" "$@"; } > "$log" 2>&1
    rc=$?
  else
    timeout --kill-after=30 "$limit" "$@" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
  fi
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then echo "-------- $name: killed after ${limit}s" | tee -a "$log"; fi
  set -e
  local elapsed
  elapsed=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$started" "$(date +%s.%N)")
  counts=""
  if [ "$kind" = pytest ]; then counts="$(pytest_counts "$log")"; fi
  if [ -n "$counts" ]; then
    read -r p f s <<<"$counts"
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi # crashed, or collected nothing (exit 5)
  elif [ "$rc" -eq 0 ]; then
    p=1
  else
    f=1
  fi
  if [ "$rc" -eq 0 ]; then result=ok; else result="FAILED(exit $rc)"; fi
  if [ "$kind" = pytest ] && [ "$rc" -eq 5 ]; then result="FAILED(no tests)"; fi
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then result="FAILED(timeout ${limit}s)"; fi
  printf '%s|%s|%s|%s|%s\n' "$result" "$p" "$f" "$s" "$elapsed" > "$LOGS/$name.result"
  printf -- '-------- %s: %s (%s passed, %s failed, %s skipped) in %ss\n' "$name" "$result" "$p" "$f" "$s" "$elapsed" \
    | tee -a "$log"
  return 0
}

# collect NAME: add the stage's outcome (its .result file; none: it did not finish) to the summary
collect() {
  local name="$1" result p f s elapsed
  if [ -f "$LOGS/$name.result" ]; then
    IFS='|' read -r result p f s elapsed < "$LOGS/$name.result"
  else
    result="FAILED(no result)"; p=0; f=1; s=0; elapsed=0.0
  fi
  case "$result" in ok) ;; *) ANY_FAILED=1 ;; esac
  STAGES+=("$name"); RESULTS+=("$result"); PASSED+=("$p"); FAILED+=("$f"); SKIPPED+=("$s"); TIMES+=("$elapsed")
  TOTAL_PASSED=$((TOTAL_PASSED + p)); TOTAL_FAILED=$((TOTAL_FAILED + f)); TOTAL_SKIPPED=$((TOTAL_SKIPPED + s))
}

skip_stage() {
  STAGES+=("$1"); RESULTS+=("skipped: $2"); PASSED+=(0); FAILED+=(0); SKIPPED+=(0); TIMES+=("0.0")
}

summary() {
  banner "ProcAnim test summary"
  printf '%-16s %-34s %7s %7s %8s %8s\n' stage result passed failed skip+xf seconds
  local i
  for i in "${!STAGES[@]}"; do
    printf '%-16s %-34s %7s %7s %8s %8s\n' "${STAGES[$i]}" "${RESULTS[$i]}" "${PASSED[$i]}" "${FAILED[$i]}" \
      "${SKIPPED[$i]}" "${TIMES[$i]}"
  done
  printf 'logs: %s\n' "$LOGS"
  if [ "$TOTAL_SKIPPED" -gt 0 ]; then
    printf '%d passed, %d failed, %d skipped\n' "$TOTAL_PASSED" "$TOTAL_FAILED" "$TOTAL_SKIPPED"
  else
    printf '%d passed, %d failed\n' "$TOTAL_PASSED" "$TOTAL_FAILED"
  fi
}

PYTEST_OPTS=(-p no:cacheprovider)

run_stage setup check bash tools/setup_env.sh $VERSIONS
collect setup
if [ "${RESULTS[0]}" != ok ]; then
  summary
  exit 1
fi

run_stage ruff check "$TOOLS_VENV/bin/ruff" check --no-cache . && collect ruff
run_stage mypy check "$TOOLS_VENV/bin/python" tools/typecheck.py && collect mypy
run_stage build check "$TOOLS_VENV/bin/python" tools/build.py && collect build

# stage NAME: one test stage by name
stage() {
  case "$1" in
    engine) run_stage engine pytest "$TOOLS_VENV/bin/python" -m pytest "${PYTEST_OPTS[@]}" tests/engine tests/test_codebase.py ;;
    blender-*) run_stage "$1" pytest env PROCANIM_REQUIRE_BPY=1 \
                 "$PROCANIM_CACHE/venv-bpy-${1#blender-}/bin/python" -m pytest "${PYTEST_OPTS[@]}" tests/blender ;;
    batch) run_stage batch pytest env PROCANIM_REQUIRE_BPY=1 "$TOOLS_VENV/bin/python" -m pytest "${PYTEST_OPTS[@]}" \
             tests/batch ;;
    real-blender) run_stage real-blender pytest bash tools/real_blender.sh test ;;
  esac
}

TESTS=(engine)
for version in $VERSIONS; do TESTS+=("blender-$version"); done
TESTS+=(batch)
REAL_SKIP=""
if [ ! -f tools/real_blender.sh ]; then
  REAL_SKIP="no tools/real_blender.sh"
elif [ "${PROCANIM_REAL_BLENDER:-1}" = 0 ]; then
  REAL_SKIP="PROCANIM_REAL_BLENDER=0"
else
  TESTS+=(real-blender)
fi

# The test stages run in PROCANIM_LANES lanes at once (default: 2 on a machine with 2 cores or
# more, else 1): each stage is one process on about one core. A lane takes the next stage, longest
# first (the stages' usual order of length), so the lanes end close together. Each stage's log is
# printed whole when all are done; a line says when each one ends.
LANES="${PROCANIM_LANES:-$(( $(nproc) >= 2 ? 2 : 1 ))}"
if [ "$LANES" -le 1 ] || [ "${#TESTS[@]}" -le 1 ]; then
  for name in "${TESTS[@]}"; do stage "$name"; done
else
  ORDER=()
  for name in real-blender blender-5.0.1 blender-4.5.15 blender-4.2.23 "${TESTS[@]}"; do
    case " ${TESTS[*]} " in *" $name "*) ;; *) continue ;; esac
    case " ${ORDER[*]:-} " in *" $name "*) continue ;; esac
    ORDER+=("$name")
  done
  QUEUE="$LOGS/.queue"
  printf '%s\n' "${ORDER[@]}" > "$QUEUE"
  banner "test stages in $LANES lanes: ${ORDER[*]}"
  take() {  # take: the next stage of the queue (a lock makes each stage taken once)
    flock "$QUEUE" python3 -c "
import sys; p = sys.argv[1]; lines = open(p).read().split()
print(lines[0] if lines else ''); open(p, 'w').write('\n'.join(lines[1:]))" "$QUEUE"
  }
  for lane in $(seq "$LANES"); do
    (
      while next="$(take)" && [ -n "$next" ]; do
        QUIET=1 stage "$next"
      done
    ) &
  done
  wait
  for name in "${TESTS[@]}"; do cat "$LOGS/$name.log" 2>/dev/null || true; done
fi
for name in "${TESTS[@]}"; do collect "$name"; done
if [ -n "$REAL_SKIP" ]; then skip_stage real-blender "$REAL_SKIP"; fi

summary
exit "$ANY_FAILED"
