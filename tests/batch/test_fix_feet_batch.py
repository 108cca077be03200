"""Fix Feet in job files: its arguments and limits are checked like every generator's (from its
operator and sidebar settings), and a shot that imports a BVH and fixes its feet bakes."""

from __future__ import annotations

import json
import re

import bpy
import harness
import pytest
from in_process import run_cli as run
from in_process import write_jobs as write

JOB = """
[defaults]
output_dir = "out"

[shots.feet]
blend = "{hills}"
generator = "fix_feet"
import = {{ file = "{bvh}", name = "Mocap", rotate_mode = "NATIVE" }}
settings = {{ armature = "Mocap", ground = "Floor", height_m = 0.02, min_contact_s = 0.05 }}
"""


def test_a_fix_feet_shot_validates(cli, inputs, tmp_path, capsys):
    status, text = run(cli, capsys, "validate", write(tmp_path, JOB, inputs))
    assert status == 0, text
    assert "1 shot(s), no problem found" in text


# each case: a change to the good shot's settings, and what the message must say
BAD = {
    "above its limit": (("height_m = 0.02", "height_m = 5.0"),
                        r"settings\.height_m: 5\.0 is above its range, 0\.0001 to 1"),
    "below its limit": (("min_contact_s = 0.05", "max_reach = 0.5"),
                        r"settings\.max_reach: 0\.5 is below its range, 0\.8 to 0\.9999"),
    "not a number": (("height_m = 0.02", 'blend_s = "short"'), r"settings\.blend_s: must be a number, got 'short'"),
    "not its argument": (("height_m = 0.02", "stride = 0.5"),
                         r"settings\.stride: not an argument of procanim\.fix_feet"),
    "ground missing": (('ground = "Floor"', 'ground = "Hills"'),
                       r"settings\.ground: no object 'Hills' in hills\.blend"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_fix_feet_arguments_are_checked_against_its_operator_and_limits(cli, inputs, tmp_path, capsys, case):
    (old, new), expected = BAD[case]
    status, output = run(cli, capsys, "validate", write(tmp_path, JOB.replace(old, new), inputs))
    assert status == 2, output
    assert re.search(r"shot 'feet': " + expected, output), output


def test_a_shot_fixes_the_feet_of_an_imported_bvh(cli, inputs, tmp_path, capsys):
    """The BVH's hips drift forward 1 cm a frame and its feet go with them; fixed over a floor at
    12 cm, 7 cm above its toes (the hips 1 m up on legs of 0.95 m): the motion comes up onto the
    floor and the feet slide less."""
    job = write(tmp_path, JOB, inputs)
    status, text = run(cli, capsys, "bake", "--shot", "feet", job)
    assert status == 0, text
    out = tmp_path / "out"
    metrics = json.loads((out / "feet.json").read_text())
    assert metrics["generator"] == "fix_feet" and metrics["armatures"][0]["armature"] == "Mocap"
    m = metrics["armatures"][0]["metrics"]
    assert m["contacts"] >= 2 and m["skate_mean_cm_s"] < m["skate_before_mean_cm_s"]
    assert m["ground_offset_cm"] == pytest.approx(7.0, abs=0.1) and m["float_cm"] < 0.5
    harness.reset_scene()
    assert bpy.ops.wm.open_mainfile(filepath=str(out / "feet.blend")) == {"FINISHED"}
    action = bpy.data.objects["Mocap"].animation_data.action
    assert action.procanim.generator == "fix_feet" and json.loads(action.procanim.metrics_json) == m
