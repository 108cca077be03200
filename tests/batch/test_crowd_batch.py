"""Crowds in job files (issue 27): a ``crowd_walk`` shot takes the crowd's arguments — the armatures
and their paths (comma-separated names), ``personal_radius``, ``obstacles`` (a collection),
``variation``, ``seed``, ``greet`` — checked like every generator's before anything runs, and bakes
every walker of the crowd."""

from __future__ import annotations

import json
import re

import bpy
import harness
import numpy as np
import pytest
from in_process import run_cli as run
from in_process import write_jobs as write

JOB = """
[defaults]
output_dir = "out"

[shots.plaza]
blend = "{plaza}"
generator = "crowd_walk"

[shots.plaza.settings]
armatures = "West,East,Passer"
paths = "WestLane,EastLane,PasserLane"
personal_radius = 0.3
obstacles = "Posts"
variation = 0.3
seed = 5
"""


def test_a_crowd_shot_validates(cli, inputs, tmp_path, capsys):
    status, text = run(cli, capsys, "validate", write(tmp_path, JOB, inputs))
    assert status == 0, text
    assert "1 shot(s), no problem found" in text


# each case: a change to the good shot's settings, and what the message must say
BAD = {
    "an armature of the list missing": (('"West,East,Passer"', '"West,Eest,Passer"'),
                                        r"settings\.armatures: no object 'Eest' in plaza\.blend"),
    "a path of the list missing": (('"WestLane,EastLane,PasserLane"', '"WestLane,Eastlane,PasserLane"'),
                                   r"settings\.paths: no object 'Eastlane' in plaza\.blend"),
    "obstacles not a collection": (('obstacles = "Posts"', 'obstacles = "Post"'),
                                   r"settings\.obstacles: no collection 'Post' in plaza\.blend \(collections: Posts"),
    "radius above its limit": (("personal_radius = 0.3", "personal_radius = 9.0"),
                               r"settings\.personal_radius: 9\.0 is above its range, 0 to 5"),
    "variation above its limit": (("variation = 0.3", "variation = 1.5"),
                                  r"settings\.variation: 1\.5 is above its range, 0 to 1"),
    "greet not a boolean": (("seed = 5", 'seed = 5\ngreet = "yes"'), r"settings\.greet: must be"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_crowd_arguments_are_checked_against_its_operator_and_limits(cli, inputs, tmp_path, capsys, case):
    (old, new), expected = BAD[case]
    status, output = run(cli, capsys, "validate", write(tmp_path, JOB.replace(old, new), inputs))
    assert status == 2, output
    assert re.search(r"shot 'plaza': " + expected, output), output


def test_a_crowd_shot_bakes_every_walker_apart(cli, inputs, tmp_path, capsys):
    """The head-on pair gives way (pelvises at least 2 × 0.3 m − 5 cm apart, as the crowd's figures
    say), the passer keeps clear of the post, and each walker's action is in the saved scene."""
    job = write(tmp_path, JOB, inputs)
    status, text = run(cli, capsys, "bake", "--shot", "plaza", job)
    assert status == 0, text
    out = tmp_path / "out"
    metrics = json.loads((out / "plaza.json").read_text())
    assert metrics["generator"] == "crowd_walk"
    baked = {a["armature"]: a["metrics"] for a in metrics["armatures"]}
    assert set(baked) == {"West", "East", "Passer"}
    m = baked["West"]
    assert m["crowd_walkers"] == 3 and m["crowd_closest_pelvis_m"] >= 2 * 0.3 - 0.05
    assert baked["West"]["crowd_moved_self"] and baked["East"]["crowd_moved_self"]
    harness.reset_scene()
    assert bpy.ops.wm.open_mainfile(filepath=str(out / "plaza.blend")) == {"FINISHED"}
    for name in baked:
        action = bpy.data.objects[name].animation_data.action
        assert action.procanim.generator == "crowd_walk" and json.loads(action.procanim.metrics_json) == baked[name]
    post = np.array(bpy.data.objects["Post"].location)[:2]
    passer = bpy.data.objects["Passer"]
    scene = bpy.context.scene
    start, end = (int(v) for v in passer.animation_data.action.frame_range)
    gaps = []
    for frame in range(start, end + 1, 4):
        scene.frame_set(frame)
        gaps.append(np.linalg.norm((passer.matrix_world @ passer.pose.bones["hips"].head)[:2] - post))
    assert min(gaps) >= 0.3 + 0.15 - 0.05  # its radius from the post's outline (0.15 m half-width)
