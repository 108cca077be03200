"""``blender -b -c procanim bake jobs.toml`` with a real Blender binary (the command registered with
``bpy.utils.register_cli_command``; its workers are ``blender -b -c procanim worker`` processes).

Runs inside a Blender binary only — skipped under the bpy wheel (which has no command line):

    bash tools/real_blender.sh headless -- tests/batch/test_blender_binary.py

The extension is installed into a temporary user configuration (``BLENDER_USER_RESOURCES``), as a
user's Install from Disk would, so that the ``blender`` processes started here have the command.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap

import bpy
import harness
import pytest

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


def test_the_blender_command_bakes_with_a_pool_of_blender_workers(extension_zip, inputs, tmp_path):
    env = {**os.environ, "BLENDER_USER_RESOURCES": str(tmp_path / "user")}
    install = (
        "import bpy; assert bpy.ops.extensions.package_install_files("
        f"filepath={str(extension_zip)!r}, repo='user_default', enable_on_install=True) == {{'FINISHED'}}; "
        "bpy.ops.wm.save_userpref()"
    )
    proc = blender("--python-exit-code", "1", "--python-expr", install, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
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
