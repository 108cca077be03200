#!/usr/bin/env bash
# Create or repair ProcAnim's development venvs, one per supported bpy wheel, outside the clone:
#
#   ${PROCANIM_CACHE:-$HOME/.cache/procanim}/venv-bpy-5.0.1   bpy, pytest, ruff, mypy, stubs, matplotlib,
#                                                             dask distributed + tqdm (the batch runner),
#                                                             pygltflib (the export test)
#   ${PROCANIM_CACHE:-$HOME/.cache/procanim}/gltf-validator    the Khronos glTF validator (npm; skipped without npm)
#   ${PROCANIM_CACHE:-$HOME/.cache/procanim}/venv-bpy-4.5.15  bpy, pytest, pillow (the demo's animations)
#   ${PROCANIM_CACHE:-$HOME/.cache/procanim}/venv-bpy-4.2.23  bpy, pytest, numpy<2
#
# Usage: bash tools/setup_env.sh [VERSION ...]   (default: $PROCANIM_VERSIONS, else all three;
#        the 5.0.1 venv, which holds the lint/type/plot tools, is always set up).
#
# Idempotent: each venv keeps a stamp with its requirement set; a venv whose stamp matches and
# whose `import bpy` works is left alone (a warm run takes a few seconds). A stale stamp means
# "pip install the new set" (stub packages that are no longer wanted are removed first); a venv
# whose Python or bpy is broken is deleted and rebuilt. Needs only Python 3.11 with venv and pip.
set -euo pipefail

HOME="${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}"
export HOME
CACHE="${PROCANIM_CACHE:-$HOME/.cache/procanim}"
ALL_VERSIONS="5.0.1 4.5.15 4.2.23"
TOOLS_VERSION="5.0.1"
mkdir -p "$CACHE"

# Pinned so that the stamp means something and CI is reproducible.
PYTEST="pytest==9.2.0 hypothesis==6.170.15"  # hypothesis: the property-based tests (issue 11)
STUBS="fake-bpy-module-4.2==20260730" # the oldest supported API: what operators/panels may rely on
requirements_for() {
  case "$1" in
    # pygltflib: tests/blender/test_export.py's structural check of the exported glTF; cryptography: the batch's TLS tests
    5.0.1) echo "bpy==5.0.1 $PYTEST ruff==0.17.6 mypy==2.4.1 $STUBS matplotlib==3.11.2 dask==2026.8.0 distributed==2026.8.0 tqdm==4.70.1 cryptography==50.0.2 pygltflib==1.16.5" ;;
    4.5.15) echo "bpy==4.5.15 $PYTEST pillow==13.0.0" ;; # pillow: tools/demo.py encodes the animated WebPs
    4.2.23) echo "bpy==4.2.23 numpy<2 $PYTEST" ;;
    *) echo "setup_env: unsupported bpy version '$1' (supported: $ALL_VERSIONS)" >&2; return 1 ;;
  esac
}

log() { printf '[setup_env] %s\n' "$*"; }

find_python() {
  local candidate
  for candidate in "${PROCANIM_PYTHON:-}" python3.11 python3 python; do
    [ -n "$candidate" ] || continue
    command -v "$candidate" >/dev/null 2>&1 || continue
    if "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
      command -v "$candidate"
      return 0
    fi
  done
  echo "setup_env: Python 3.11 not found (the bpy wheels are cp311); set PROCANIM_PYTHON" >&2
  return 1
}

# Pip prints warnings about unreadable extra index locations on this machine; keep them out of
# the way but keep the full log of every install.
pip_install() {
  local venv="$1"; shift
  local logfile="$CACHE/pip-$(basename "$venv").log"
  if ! "$venv/bin/python" -m pip install --disable-pip-version-check "$@" >"$logfile" 2>&1; then
    grep -v "^WARNING: Location" "$logfile" | tail -n 30 >&2
    echo "setup_env: pip install into $venv failed (full log: $logfile)" >&2
    return 1
  fi
}

make_venv() {
  local venv="$1" python
  python="$(find_python)"
  rm -rf "$venv"
  if "$python" -m venv "$venv" 2>/dev/null; then return 0; fi
  rm -rf "$venv"
  # Debian splits venv/ensurepip into python3.X-venv.
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log "'$python -m venv' failed; installing python3.11-venv with apt-get"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null 2>&1 || true
    if DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3.11-venv >/dev/null 2>&1 &&
      "$python" -m venv "$venv" 2>/dev/null; then
      return 0
    fi
    rm -rf "$venv"
  fi
  log "'$python -m venv' failed; trying virtualenv"
  "$python" -m pip install --user --quiet virtualenv >/dev/null 2>&1 || true
  "$python" -m virtualenv -q "$venv"
}

health_check() { # venv version -> 0 if python runs, bpy imports at the right version, pytest imports
  "$1/bin/python" - "$2" >/dev/null 2>&1 <<'EOF'
import sys
import bpy, pytest, numpy
want = tuple(int(x) for x in sys.argv[1].split("."))
sys.exit(0 if tuple(bpy.app.version) == want else 1)
EOF
}

install_requirements() { # venv requirements...
  local venv="$1"; shift
  local wanted_stub installed stray
  # Two fake-bpy-module distributions write the same *-stubs directories: drop unwanted ones first.
  wanted_stub="$(printf '%s\n' "$@" | sed -n 's/^\(fake-bpy-module[^=<>]*\).*/\1/p' | tr '.' '-' | tr 'A-Z' 'a-z')"
  installed="$("$venv/bin/python" -m pip list --format=freeze 2>/dev/null | sed -n 's/^\(fake[-_]bpy[-_]module[^=]*\)==.*/\1/p' || true)"
  for stray in $installed; do
    if [ "$(echo "$stray" | tr '_.' '--' | tr 'A-Z' 'a-z')" != "$wanted_stub" ]; then
      log "$(basename "$venv"): removing $stray"
      "$venv/bin/python" -m pip uninstall -y -q "$stray" >/dev/null 2>&1
    fi
  done
  pip_install "$venv" "$@"
}

setup_one() {
  local version="$1" venv="$CACHE/venv-bpy-$1" reqs stamp_file
  reqs="$(requirements_for "$version")"
  stamp_file="$venv/.procanim-stamp"
  local stamp="requirements: $reqs"
  local started=$SECONDS

  if [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$stamp" ] && health_check "$venv" "$version"; then
    log "venv-bpy-$version: up to date"
    return 0
  fi
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import sys, pip' >/dev/null 2>&1; then
    log "venv-bpy-$version: creating"
    make_venv "$venv"
  else
    log "venv-bpy-$version: updating to: $reqs"
  fi
  rm -f "$stamp_file"
  # shellcheck disable=SC2086  # the requirement list is split on purpose
  if ! install_requirements "$venv" $reqs || ! health_check "$venv" "$version"; then
    log "venv-bpy-$version: broken after install, rebuilding from scratch"
    make_venv "$venv"
    # shellcheck disable=SC2086
    install_requirements "$venv" $reqs
    health_check "$venv" "$version" || {
      echo "setup_env: venv-bpy-$version still cannot import bpy $version after a rebuild" >&2
      return 1
    }
  fi
  echo "$stamp" >"$stamp_file"
  log "venv-bpy-$version: ready ($((SECONDS - started)) s)"
}

# The Khronos glTF validator (npm package, plain JavaScript) for tests/blender/test_export.py, in
# $CACHE/gltf-validator; skipped (the test then checks the file with pygltflib only) without npm.
GLTF_VALIDATOR="gltf-validator@2.0.0-dev.3.10"
setup_validator() {
  local dir="$CACHE/gltf-validator"
  command -v npm >/dev/null 2>&1 || { log "gltf-validator: npm not found, skipped"; return 0; }
  if [ "$(cat "$dir/.procanim-stamp" 2>/dev/null)" = "$GLTF_VALIDATOR" ]; then return 0; fi
  mkdir -p "$dir"
  if npm install --no-audit --no-fund --prefix "$dir" "$GLTF_VALIDATOR" >"$CACHE/npm-gltf-validator.log" 2>&1; then
    echo "$GLTF_VALIDATOR" >"$dir/.procanim-stamp"
    log "gltf-validator: ready"
  else
    log "gltf-validator: npm install failed (log: $CACHE/npm-gltf-validator.log); the export test checks without it"
  fi
}

main() {
  local requested versions=() v
  if [ "$#" -gt 0 ]; then requested="$*"; else requested="${PROCANIM_VERSIONS:-$ALL_VERSIONS}"; fi
  versions+=("$TOOLS_VERSION")
  for v in $requested; do
    requirements_for "$v" >/dev/null
    [ "$v" = "$TOOLS_VERSION" ] || versions+=("$v")
  done

  # One setup at a time per cache (two test runs started together must not both pip install).
  exec 9>"$CACHE/.setup.lock"
  if command -v flock >/dev/null 2>&1; then flock 9; fi

  # Warm path: venvs whose stamp matches only need the health check (each imports bpy, ~2 s);
  # run those in parallel. Everything else installs one venv at a time (~300 MB downloads each).
  local checks=() pids=() todo=() i
  for v in "${versions[@]}"; do
    if [ -f "$CACHE/venv-bpy-$v/.procanim-stamp" ] &&
      [ "$(cat "$CACHE/venv-bpy-$v/.procanim-stamp")" = "requirements: $(requirements_for "$v")" ]; then
      health_check "$CACHE/venv-bpy-$v" "$v" &
      checks+=("$v")
      pids+=("$!")
    else
      todo+=("$v")
    fi
  done
  for i in "${!pids[@]}"; do
    if wait "${pids[$i]}"; then
      log "venv-bpy-${checks[$i]}: up to date"
    else
      log "venv-bpy-${checks[$i]}: health check failed (import bpy), repairing"
      rm -f "$CACHE/venv-bpy-${checks[$i]}/.procanim-stamp"
      todo+=("${checks[$i]}")
    fi
  done
  for v in ${todo[@]+"${todo[@]}"}; do setup_one "$v"; done
  setup_validator
}

main "$@"
