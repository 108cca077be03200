#!/usr/bin/env bash
# GUI check, run INSIDE the Debian chroot by tools/real_blender.sh (repo at /repo):
#   bash /repo/tests/gui/run_gui.sh ZIP [DEMO_BLEND [latency]]
# Installs the extension into a throw-away Blender profile, starts Xvfb, opens
# Blender's window on the demo scene and runs tests/gui/gui_check.py in it (mode latency:
# tests/gui/preview_latency.py instead, a study whose table it prints; no verdict, no pictures).
# tests/gui/gui_report.py gives the verdict: exit status 0 only when every check of
# gui_check.py passed, Blender printed no Python traceback and no layout error, and
# exited with 0; then the screenshots are copied to /repo/docs/sidebar.png, docs/preview.png and the
# editable bake's docs/graph_dense.png, docs/graph_reduced.png, docs/action_editor_markers.png.
# Artifacts: /repo/out/real_blender/gui/{setup.log,gui.log,result.json,*.png,preview.jsonl}.
set -euo pipefail
ZIP="$1"
DEMO="${2:-/repo/out/demo.blend}"
MODE="${3:-check}"
W=1600 H=1000
WORK="$(mktemp -d /tmp/procanim-gui.XXXXXX)"
ART=/repo/out/real_blender/gui
mkdir -p "$ART" "$WORK/home"
rm -f "$ART"/*
export HOME="$WORK/home"
export PROCANIM_GUI_RESULT="$WORK/result.json" PROCANIM_GUI_SHOT="$WORK/sidebar.png"
# the live preview's test mode: it logs change -> ghost times (docs/preview.md); its screenshot
export PROCANIM_PREVIEW_LOG="$WORK/preview.jsonl" PROCANIM_GUI_PREVIEW_SHOT="$WORK/preview.png"
# editable bakes in the Graph Editor and the Action Editor (docs/keys.md, the README)
export PROCANIM_GUI_GRAPH_DENSE_SHOT="$WORK/graph_dense.png" PROCANIM_GUI_GRAPH_REDUCED_SHOT="$WORK/graph_reduced.png"
export PROCANIM_GUI_ACTION_EDITOR_MARKERS_SHOT="$WORK/action_editor_markers.png"

XVFB_PID=""
cleanup() {
    [ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2>/dev/null && wait "$XVFB_PID" 2>/dev/null
    cp -f "$WORK"/*.log "$WORK"/*.png "$WORK"/*.jsonl "$WORK"/result.json /tmp/*.crash.txt "$ART"/ 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

echo "gui: preparing profile and scene (Blender $(blender --version 2>/dev/null | head -n1 | cut -d' ' -f2))"
if ! blender -b --factory-startup --python-exit-code 1 --python /repo/tests/gui/gui_setup.py \
        -- "$ZIP" "$WORK/scene.blend" "$DEMO" > "$WORK/setup.log" 2>&1; then
    tail -n 40 "$WORK/setup.log"
    echo "==================== 1 failed in 0.0s (GUI checks: setup failed, see above) ===================="
    exit 1
fi
grep '^gui_setup:' "$WORK/setup.log" | sed 's/^/  /'

# Xvfb picks a free display itself (-displayfd): concurrent runs share the abstract
# X socket namespace even though each has its own /tmp.
Xvfb -displayfd 3 -screen 0 "${W}x${H}x24" -nolisten tcp 3> "$WORK/display" > "$WORK/xvfb.log" 2>&1 &
XVFB_PID=$!
for _ in $(seq 200); do [ -s "$WORK/display" ] && break; sleep 0.1; done
[ -s "$WORK/display" ] || { cat "$WORK/xvfb.log"; echo "gui: Xvfb did not start"; exit 1; }
export DISPLAY=":$(head -n1 "$WORK/display")"
echo "gui: Xvfb on $DISPLAY (${W}x${H})"

status=0
t0=$SECONDS
if [ "$MODE" = latency ]; then
    timeout 600 blender --window-geometry 0 0 "$W" "$H" --python-exit-code 1 \
        "$WORK/scene.blend" --python /repo/tests/gui/preview_latency.py > "$WORK/gui.log" 2>&1 || status=$?
    grep -E '^latency:' "$WORK/gui.log" | sed 's/^latency: //'
    [ "$status" = 0 ] && ! grep -q "Traceback" "$WORK/gui.log" && exit 0
    tail -n 40 "$WORK/gui.log"
    exit 1
fi
timeout 600 blender --window-geometry 0 0 "$W" "$H" --python-exit-code 1 \
    "$WORK/scene.blend" --python /repo/tests/gui/gui_check.py > "$WORK/gui.log" 2>&1 || status=$?
grep -E '^gui_check:' "$WORK/gui.log" | sed 's/^/  /' || true

if python3 /repo/tests/gui/gui_report.py "$PROCANIM_GUI_RESULT" "$WORK/gui.log" "$((SECONDS - t0))" "$status"; then
    cp -f "$WORK/sidebar.png" /repo/docs/sidebar.png
    cp -f "$WORK/preview.png" /repo/docs/preview.png
    for shot in graph_dense graph_reduced action_editor_markers; do
        cp -f "$WORK/$shot.png" "/repo/docs/$shot.png"
    done
    echo "gui: screenshots -> docs/sidebar.png, docs/preview.png, docs/graph_dense.png, docs/graph_reduced.png," \
        "docs/action_editor_markers.png"
    exit 0
fi
echo "gui: FAILED (logs and screenshot in out/real_blender/gui/; docs/sidebar.png left as it was)"
exit 1
