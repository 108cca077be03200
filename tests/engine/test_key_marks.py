"""What the keys of each generator's bake say (procanim_addon/key_marks.py, terrain/changes.py): the
contacts and their markers where the feet land and leave, on the generator's own ground; the
handshake's phase boundaries from its report; the frames a terrain adaptation changed most.

Measured on the stored engine calls of tests/golden, with checks of our own (where the feet are, how
fast they move), not with the functions under test."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest

from procanim_addon.bake_settings import BakeSettings
from procanim_addon.clip import Clip
from procanim_addon.ground import FlatGround
from procanim_addon.handshake.spec import bake_call as handshake_call
from procanim_addon.key_marks import (
    KeyMarks,
    change_marks,
    contact_marks,
    handshake_key_marks,
    on_skeleton,
    rest_sole_ground,
    walk_ground,
)
from procanim_addon.rig_roles import RigMap
from procanim_addon.terrain.changes import MARKERS, changed_most, pose_change
from procanim_addon.walk.path import PathHeightGround

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from golden_io import GOLDEN_DIR, load_case  # noqa: E402


def case(name: str):
    return load_case(GOLDEN_DIR / f"{name}.npz")


def ankle_speed(skeleton, clip, side: str) -> np.ndarray:
    """Horizontal speed (m/s) of the ankle (the foot bone's head) between frames ``(F-1,)``."""
    pose = skeleton.fk(clip.locations, clip.rotations)
    foot = next(i for i, n in enumerate(skeleton.names) if n.lower().startswith("foot") and n.endswith(side))
    step = np.linalg.norm(np.diff(pose[:, foot, :2, 3], axis=0), axis=-1)
    return step * clip.fps


@pytest.mark.parametrize("name", ["demo_path_walk_1", "demo_duck_walk_1", "demo_source_walk_1"])
def test_contact_markers_are_where_the_feet_land_and_leave(name):
    generator, args, _, clip = case(name)
    skeleton, rigmap = args[0], args[1]
    ground = args[3] if generator == "path_walk" else None  # the others walk on their rest soles
    marks = contact_marks(skeleton, rigmap, clip, ground)
    names = {n for _, n in marks.markers()}
    assert {"L contact", "R contact", "L lift", "R lift"} <= names, names
    assert marks.contacts and marks.feet and {f.side for f in marks.feet} == {"L", "R"}
    for frame, marker in marks.markers():
        speed = ankle_speed(skeleton, clip, marker[0])
        k = int(np.searchsorted(clip.frames, frame))
        before, after = speed[max(k - 3, 0) : k].mean(), speed[k : k + 3].mean()
        landing = marker.endswith("contact")
        assert (after < before) if landing else (before < after), (name, frame, marker, before, after)
    types = {m.key_type for m in marks.marks}
    assert types == {"EXTREME", "BREAKDOWN"}  # contacts and lift-offs, passing positions


def test_a_rig_without_leg_roles_has_no_contacts():
    _, args, _, clip = case("demo_path_walk_1")
    skeleton, rigmap = args[0], args[1]
    arms_only = RigMap({r: b for r, b in rigmap.roles.items() if "thigh" not in r and "foot" not in r
                        and "shin" not in r and r != "hips"}, family="test")
    assert contact_marks(skeleton, arms_only, clip) == KeyMarks()


def test_a_clip_of_some_bones_in_another_order_gives_the_same_contacts():
    _, args, _, clip = case("demo_source_walk_1")
    skeleton, rigmap = args[0], args[1]
    order = list(range(len(skeleton)))[::-1]
    shuffled = dataclasses.replace(clip, bone_names=[clip.bone_names[i] for i in order],
                                   locations=clip.locations[:, order], rotations=clip.rotations[:, order],
                                   key_location=clip.key_location[order], key_rotation=clip.key_rotation[order])
    assert on_skeleton(clip, skeleton) is clip
    back = on_skeleton(shuffled, skeleton)
    assert np.array_equal(back.locations, clip.locations) and np.array_equal(back.rotations, clip.rotations)
    assert contact_marks(skeleton, rigmap, shuffled).markers() == contact_marks(skeleton, rigmap, clip).markers()


def test_the_default_ground_is_the_plane_of_the_rest_soles():
    _, args, _, clip = case("demo_source_walk_1")
    marks = contact_marks(args[0], args[1], clip)
    lowest = min(p[2] for foot in marks.feet for _, p in foot.points)
    assert rest_sole_ground(marks.feet).z == lowest


def test_a_path_walk_without_a_ground_walks_on_its_path():
    points = np.array([[0.0, 0.0, 0.0], [0.0, -3.0, 0.5]])
    assert isinstance(walk_ground(points, None, 0.15), PathHeightGround)
    flat = FlatGround(0.2)
    assert walk_ground(points, flat, 0.15) is flat


def test_the_handshake_marks_its_phase_boundaries_from_its_report():
    _, args, _, (clip_i, clip_p, report) = case("demo_handshake_1")
    clips = handshake_call(*args, ("Ann", "Bob"))
    for clip, who in zip(clips, ("initiator", "partner")):
        starts = report[f"phase_starts_{who}"]
        assert clip.metrics["phase_starts"] == [list(s) for s in starts]
        marks = handshake_key_marks(clip).marks
        want = {(float(clip.frames[i]), letter) for i, letter in starts if 0 < i < clip.frame_count}
        got = {(m.frame, m.name[0].upper()) for m in marks}
        assert got == want and {m.key_type for m in marks} == {"EXTREME"} and all(m.forced for m in marks)
        assert {m.name for m in marks} <= {"dummy", "approach", "shake", "retreat", "neutral"}


def test_changed_most_picks_the_largest_peaks_apart_from_each_other():
    frames = np.arange(1.0, 241.0)
    change = 0.01 * np.ones(240)
    for f, height in ((30, 0.5), (33, 0.45), (100, 0.3), (150, 0.2), (200, 0.26)):
        change[f] = height
    got = changed_most(frames, change, fps=24.0)
    assert got == [(31.0, 50.0), (101.0, 30.0), (201.0, 26.0)]  # 0.45 is 3 frames from 0.5; 0.2 < half of 0.5
    many = changed_most(frames, 0.1 + 0.05 * np.sin(np.arange(240) * np.pi / 6), fps=24.0)
    assert len(many) == MARKERS
    assert changed_most(frames, np.zeros(240), 24.0) == []


def test_a_terrain_adaptation_marks_the_frames_it_moved_the_body_most():
    _, args, _, adapted = case("engine_terrain_walk_knee")
    skeleton, source = args[0], args[2]
    assert np.all(pose_change(skeleton, source, source) == 0.0)
    change = pose_change(skeleton, source, adapted)
    pose_a, pose_b = skeleton.fk(source.locations, source.rotations), skeleton.fk(adapted.locations, adapted.rotations)
    heads = np.linalg.norm(pose_b[..., :3, 3] - pose_a[..., :3, 3], axis=-1).max(axis=1)
    assert np.all(change >= heads - 1e-12)  # heads and tails: at least the heads' displacement
    marks = change_marks(changed_most(adapted.frames, change, adapted.fps))
    assert marks and all(not m.forced and m.key_type == "KEYFRAME" and m.name.startswith("changed ") for m in marks)
    top = int(np.argmax(change))
    assert any(m.frame == adapted.frames[top] for m in marks)
    assert KeyMarks(marks).markers() == sorted((m.frame, m.name) for m in marks)


def test_the_dense_bake_is_tolerance_zero():
    assert BakeSettings(0.0).dense and not BakeSettings().dense


def test_the_markers_are_named_once_per_frame():
    clip = Clip.rest(["a"], np.arange(1.0, 5.0), 24.0)
    marks = handshake_key_marks(dataclasses.replace(clip, metrics={"phase_starts": [[0, "N"], [2, "S"], [2, "S"]]}))
    assert KeyMarks(marks.marks).markers() == [(3.0, "shake")]
