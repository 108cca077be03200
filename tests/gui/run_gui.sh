#!/usr/bin/env bash
# GUI check, run INSIDE the Debian chroot by tools/real_blender.sh (repo at /repo):
#   bash /repo/tests/gui/run_gui.sh ZIP [DEMO_BLEND]
# Installs the extension into a throw-away Blender profile, starts Xvfb, opens
# Blender's window on the demo scene and runs tests/gui/gui_check.py in it.
# Exit status 0 only when gui_check.py reported ok AND Blender printed no Python
# traceback. Artifacts: /repo/out/real_blender/gui/{setup.log,gui.log,result.json,sidebar.png}.
set -euo pipefail
ZIP="$1"
DEMO="${2:-/repo/out/demo.blend}"
W=1600 H=900
WORK="$(mktemp -d /tmp/procanim-gui.XXXXXX)"
ART=/repo/out/real_blender/gui
mkdir -p "$ART" "$WORK/home"
rm -f "$ART"/*
export HOME="$WORK/home"
export PROCANIM_GUI_RESULT="$WORK/result.json" PROCANIM_GUI_SHOT="$WORK/sidebar.png"

XVFB_PID=""
cleanup() {
    [ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2>/dev/null && wait "$XVFB_PID" 2>/dev/null
    cp -f "$WORK"/*.log "$WORK"/*.png "$WORK"/result.json /tmp/*.crash.txt "$ART"/ 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

echo "gui: preparing profile and scene (Blender $(blender --version 2>/dev/null | head -n1 | cut -d' ' -f2))"
if ! blender -b --factory-startup --python-exit-code 1 --python /repo/tests/gui/gui_setup.py \
        -- "$ZIP" "$WORK/scene.blend" "$DEMO" > "$WORK/setup.log" 2>&1; then
    tail -n 40 "$WORK/setup.log"; echo "gui: FAILED in setup"; exit 1
fi
grep '^gui_setup:' "$WORK/setup.log" | sed 's/^/  /'

export DISPLAY=:99
Xvfb "$DISPLAY" -screen 0 "${W}x${H}x24" -nolisten tcp > "$WORK/xvfb.log" 2>&1 &
XVFB_PID=$!
for _ in $(seq 50); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done 2>/dev/null || true

status=0
timeout 600 blender --window-geometry 0 0 "$W" "$H" --python-exit-code 1 \
    "$WORK/scene.blend" --python /repo/tests/gui/gui_check.py > "$WORK/gui.log" 2>&1 || status=$?
grep -E '^gui_check:' "$WORK/gui.log" | sed 's/^/  /' || true

ok=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("yes" if r.get("ok") else "no")' \
        "$PROCANIM_GUI_RESULT" 2>/dev/null || echo missing)
fail=0
if [ "$ok" != yes ]; then echo "gui: result: $ok"; fail=1; fi
if grep -q 'Traceback (most recent call last)' "$WORK/gui.log"; then
    echo "gui: Python traceback(s) printed in Blender's window session:"
    grep -A 25 'Traceback (most recent call last)' "$WORK/gui.log" | head -n 80
    fail=1
fi
if [ "$status" != 0 ]; then echo "gui: Blender exited with status $status"; fail=1; fi
if [ "$fail" = 0 ]; then
    python3 - "$PROCANIM_GUI_RESULT" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
drawn = sorted(k for k, v in r.get("draws", {}).items() if v and k.endswith(".draw"))
print("gui: PASSED - Blender %s window, tab ProcAnim active, %d panels drew without error (%s), "
      "Generate baked %s F-curves / %s keys"
      % (r["blender"], len(drawn), ", ".join(d[:-5] for d in drawn),
         r["bake"]["fcurves"], r["bake"]["keyframes"]))
PY
    cp -f "$WORK/sidebar.png" /repo/docs/sidebar.png
    echo "gui: screenshot -> docs/sidebar.png"
    exit 0
fi
echo "gui: FAILED (logs and screenshot in out/real_blender/gui/)"
tail -n 30 "$WORK/gui.log"
exit 1
