"""Turn the GUI check's result into a verdict: ``python3 gui_report.py RESULT.json GUI.log SECONDS STATUS``.

Prints one line per check and a pytest-style summary line (``N passed, M failed in Ss``) that
tools/test.sh counts. Besides gui_check.py's own checks (a check it never reached is a failure)
it scans Blender's log: a Python traceback, or a layout error that Blender only prints while
drawing (``layout.prop`` with a wrong property name, ``layout.operator`` with an unknown
operator), fails ``no_ui_errors_in_log``; Blender's exit status must be 0. Exit status 0 only
when every check passed. The measured figures (``"figures"``: Esc-to-stop time, progress values)
are printed too.
"""

import json
import re
import sys

LAYOUT_ERRORS = re.compile(r"rna_uiItem|uiItemFullO|property not found|unknown operator|not found in RNA")


def main(result_path, log_path, seconds, status):
    try:
        with open(result_path) as f:
            r = json.load(f)
    except (OSError, ValueError) as exc:
        r = {"checks": {}, "expected_checks": [], "errors": ["no result from gui_check.py: %s" % exc]}
    with open(log_path, errors="replace") as f:
        log = f.read()
    checks = []
    for name in r.get("expected_checks") or ["gui_check_result"]:
        c = r.get("checks", {}).get(name)
        checks.append((name, bool(c and c["ok"]), c["detail"] if c else "not reached: %s" % r.get("errors")))
    tracebacks = log.count("Traceback (most recent call last)")
    layout = sorted({line.strip() for line in log.splitlines() if LAYOUT_ERRORS.search(line)})
    detail = []
    if tracebacks:
        detail.append("%d Python traceback(s) printed" % tracebacks)
    if layout:
        detail.append("layout errors: %s" % "; ".join(layout[:10]))
    checks.append(("no_ui_errors_in_log", not detail, "; ".join(detail) or "no traceback, no layout error"))
    checks.append(("blender_exit_status", status == 0, "Blender exited with %d" % status))
    for name, ok, text in checks:
        print("gui: %s %s: %s" % ("PASSED" if ok else "FAILED", name, text))
    for name, value in sorted((r.get("figures") or {}).items()):
        print("gui: figure %s = %s" % (name, value))
    if tracebacks:
        for block in log.split("Traceback (most recent call last)")[1:4]:
            print("gui: traceback:" + "\n    ".join(block.splitlines()[:20]))
    passed = sum(ok for _, ok, _ in checks)
    failed = len(checks) - passed
    summary = "%d passed" % passed + (", %d failed" % failed if failed else "")
    print(
        "==================== %s in %.1fs (GUI checks, Blender %s window) ===================="
        % (summary, seconds, r.get("blender", "?"))
    )
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])))
