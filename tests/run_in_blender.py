"""Run ProcAnim's pytest suites inside a real Blender binary.

    blender -b --factory-startup --python-exit-code 1 --python tests/run_in_blender.py [-- PYTEST ARGS]

Runs the same tests that run on the bpy wheels: tests/engine (no bpy) and
tests/blender (bpy; they install the extension zip named by $PROCANIM_ZIP through
Blender's extension API; without it the harness builds one with this Blender's
own builder). Uses the pytest of Blender's Python (Debian's
python3-pytest in the chroot made by tools/real_blender.sh). Exits with pytest's
status: non-zero when a test fails, when collection fails, and when no test at
all was collected (pytest's status 5).
"""

import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_TARGETS = ["tests/engine", "tests/blender"]


def _pytest_args():
    """(pytest arguments, test paths): arguments after ``--`` are passed to pytest as they are;
    the default test directories are added when none of them names an existing path."""
    argv = sys.argv
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []
    while extra and extra[0] == "--":
        extra = extra[1:]
    targets = [a for a in extra if os.path.exists(os.path.join(REPO, a.split("::")[0]))]
    if not targets:
        targets = [t for t in DEFAULT_TARGETS if os.path.isdir(os.path.join(REPO, t))]
        extra = extra + targets
    return ["-p", "no:cacheprovider", "-ra", *extra], targets


def main():
    import bpy

    print(
        "run_in_blender: Blender %s, Python %s, %s" % (bpy.app.version_string, sys.version.split()[0], sys.executable),
        flush=True,
    )
    try:
        import numpy
        import pytest
    except ImportError as exc:  # pragma: no cover - environment problem
        print("run_in_blender: cannot import %s in Blender's Python" % exc.name, flush=True)
        return 3
    print("run_in_blender: numpy %s, pytest %s" % (numpy.__version__, pytest.__version__), flush=True)

    zip_path = os.environ.get("PROCANIM_ZIP", "")
    if zip_path and not os.path.isfile(zip_path):
        print("run_in_blender: PROCANIM_ZIP=%s does not exist" % zip_path, flush=True)
        return 4
    print(
        "run_in_blender: extension zip %s" % (zip_path or "(built by the harness with this Blender's builder)"),
        flush=True,
    )
    # bpy is importable here: a Blender test that cannot import it must error, not vanish.
    os.environ.setdefault("PROCANIM_REQUIRE_BPY", "1")

    sys.dont_write_bytecode = True  # no cpython-313 __pycache__ in the shared source tree
    os.chdir(REPO)
    if REPO not in sys.path:  # as `python -m pytest` from the repository root
        sys.path.insert(0, REPO)
    args, targets = _pytest_args()
    if not targets:
        print("run_in_blender: no test directories found", flush=True)
        return 5
    print("run_in_blender: pytest %s" % " ".join(args), flush=True)
    status = int(pytest.main(args))
    print("run_in_blender: pytest exit status %d" % status, flush=True)
    return status


if __name__ == "__main__":
    # Leave with pytest's status without Blender's own teardown: after a full session (every test
    # passed) Debian's Blender 4.3.2 segfaulted while freeing the session's data on exit, as the bpy
    # wheels do (tests/blender/conftest.py leaves them the same way).
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
