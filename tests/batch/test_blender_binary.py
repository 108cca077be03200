"""``blender -b -c procanim bake jobs.toml`` with a real Blender binary (the command registered with
``bpy.utils.register_cli_command``; its workers are ``blender -b -c procanim worker`` processes).

Runs inside a Blender binary only — skipped under the bpy wheel (which has no command line):

    bash tools/real_blender.sh headless -- tests/batch/test_blender_binary.py

The extension is installed into a temporary user configuration (``BLENDER_USER_RESOURCES``), as a
user's Install from Disk would, so that the ``blender`` processes started here have the command;
its preferences have Auto Run Python Scripts on, which no batch mode may follow.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap

import bpy
import harness
import pytest
from script_checks import check_scripts_not_run, check_scripts_run, clear_markers, markers, report_rows, write_job

pytestmark = pytest.mark.skipif(not bpy.app.binary_path, reason="needs a Blender binary (bpy wheel here)")

JOB = """
[defaults]
output_dir = "baked"

[shots.walk]
blend = "{street}"
generator = "path_walk"
settings = {{ armature = "Human", path = "Bend" }}

[shots.duck]
blend = "{duck}"
generator = "duck_walk"
settings = {{ armature = "Duck", frame_end = 48 }}
fbx = true

[shots.rock]
blend = "{street}"
generator = "path_walk"
settings = {{ armature = "Human", path = "Rock" }}
"""


def blender(*args, env, cwd=None, timeout=600):
    return subprocess.run(
        [bpy.app.binary_path, "-b", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=timeout,
        check=False,
    )


@pytest.fixture(scope="module")
def user_env(extension_zip, tmp_path_factory) -> dict:
    """A user configuration with the extension installed and, as many artists have it, Auto Run
    Python Scripts on in the preferences; the environment that points Blender at it."""
    env = {**os.environ, "BLENDER_USER_RESOURCES": str(tmp_path_factory.mktemp("user"))}
    install = (
        "import bpy; assert bpy.ops.extensions.package_install_files("
        f"filepath={str(extension_zip)!r}, repo='user_default', enable_on_install=True) == {{'FINISHED'}}; "
        "bpy.context.preferences.filepaths.use_scripts_auto_execute = True; "
        "bpy.ops.wm.save_userpref()"
    )
    proc = blender("--python-exit-code", "1", "--python-expr", install, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return env


def test_the_blender_command_bakes_with_a_pool_of_blender_workers(user_env, inputs, tmp_path):
    env = user_env
    job = tmp_path / "jobs.toml"
    job.write_text(textwrap.dedent(JOB).format(**{k: str(v) for k, v in inputs.items()}))

    proc = blender("-c", "procanim", "validate", job, env=env)
    assert proc.returncode == 0 and "3 shot(s), no problem found" in proc.stdout, proc.stdout + proc.stderr

    proc = blender("-c", "procanim", "bake", job, "--workers", "2", env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the rock is not a curve
    report = json.loads((tmp_path / "baked" / "report.json").read_text())
    rows = {row["shot"]: row for row in report["shots"]}
    assert report["mode"] == "pool" and report["blender"] == bpy.app.version_string
    assert rows["walk"]["status"] == rows["duck"]["status"] == "done"
    assert "'Rock' is a mesh" in rows["rock"]["message"]
    assert rows["walk"]["worker"]["pid"] != os.getpid()  # baked by a worker process
    assert (tmp_path / "baked" / "duck.fbx").read_bytes()[:18] == b"Kaydara FBX Binary"

    harness.reset_scene()
    assert bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "baked" / "walk.blend")) == {"FINISHED"}
    human = bpy.data.objects["Human"]
    assert human.animation_data.action.procanim.generator == "path_walk"
    assert len(harness.fcurves_of(human.animation_data.action, human)) > 10

    proc = blender("-c", "procanim", "bake", job, "--shot", "walk", "--shot", "duck", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 done, 2 skipped, 0 failed" in proc.stdout


def test_no_batch_mode_runs_the_scripts_of_the_shots(user_env, scripted_inputs, tmp_path):
    """Auto-run on in the preferences: in-process, pool and ``--shot`` bakes run no script of the
    shots' files and bake them; ``--trust-scripts`` runs them."""
    clear_markers(scripted_inputs)
    proc = blender(scripted_inputs["scripted"], "--python-expr", "pass", env=user_env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(markers(scripted_inputs)) == 1, "opened the ordinary way, the file's script runs"
    clear_markers(scripted_inputs)
    job = write_job(tmp_path, scripted_inputs)

    for mode, args in (("inline", ["--workers", "0"]), ("pool", ["--workers", "2"])):
        out = tmp_path / mode
        proc = blender("-c", "procanim", "bake", job, *args, "--output-dir", out, env=user_env)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        report, rows = report_rows(out)
        assert report["mode"] == mode and report["trust_scripts"] is False
        check_scripts_not_run(out, rows, scripted_inputs)

    proc = blender("-c", "procanim", "bake", "--shot", "scripted", "--force", job, env=user_env)
    assert proc.returncode == 0 and "1 done" in proc.stdout, proc.stdout + proc.stderr
    assert markers(scripted_inputs) == []

    out = tmp_path / "trusted"
    proc = blender(
        "-c", "procanim", "bake", job, "--workers", "2", "--output-dir", out, "--trust-scripts", env=user_env
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    check_scripts_run(out, report_rows(out)[1], scripted_inputs)
    clear_markers(scripted_inputs)
