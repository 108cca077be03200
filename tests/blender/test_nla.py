"""Bakes onto NLA strips (issue 24, item 2): ``bake_to='NLA_STRIP'`` puts the bake in a strip on a new
NLA track named after the generator (blend Combine unless asked), leaving the animator's active
action, its keys and the other tracks as they were; the evaluated pose is the strip's; a re-run
replaces its own untouched strip and keeps an edited one; Undo takes the bake back."""

from __future__ import annotations

import bpy
import numpy as np
import pytest
from harness import fcurves_of, keyframes
from scenes import add_curve, add_human

FRAMES = (1, 12, 25, 40)


def walk(name: str, undo: bool = False, **kw):
    """The path walk along ``Line``; ``undo``: pushing its undo step as a click in the sidebar does."""
    assert bpy.ops.procanim.path_walk("EXEC_DEFAULT", undo, armature=name, path="Line", **kw) == {"FINISHED"}


def _slot_name(strip) -> str | None:
    slot = getattr(strip, "action_slot", None)  # Blender 4.4+
    return None if slot is None else slot.name_display


def scene_with_layers():
    """ProcAnim's human with the animator's work: an active action (keys on the object's custom
    property ``mood``) and an NLA track ``Idle`` with a strip of another action (``sway``)."""
    human = add_human("Walker")
    add_curve("Line", [(0.0, 0.0, 0.0), (0.0, -3.0, 0.0)])
    human["sway"] = 0.0
    for frame, value in ((1, 0.0), (30, 1.0)):
        human["sway"] = value
        human.keyframe_insert('["sway"]', frame=frame)
    idle = human.animation_data.action
    idle.name = "Idle"
    track = human.animation_data.nla_tracks.new()
    track.name = "Idle"
    strip = track.strips.new("Idle", 1, idle)
    if hasattr(strip, "action_slot") and strip.action_slot is None:
        strip.action_slot = idle.slots[0]
    strip.influence = 0.5
    human.animation_data.action = None
    human["mood"] = 0.0
    for frame, value in ((1, 0.2), (20, 0.8), (50, 0.4)):
        human["mood"] = value
        human.keyframe_insert('["mood"]', frame=frame)
    human.animation_data.action.name = "Mood"
    return human


def snapshot(obj) -> dict:
    """The animator's animation on ``obj``: the active action and its keys, every track and strip."""
    ad = obj.animation_data
    action = ad.action
    return {
        "action": action.name if action else None,
        "keys": {(fc.data_path, fc.array_index): keyframes(fc).tolist() for fc in fcurves_of(action, obj)},
        "blend": (ad.action_blend_type, ad.action_influence, ad.use_nla),
        "tracks": [
            (t.name, t.mute, t.is_solo, [(s.name, s.action.name if s.action else None, s.frame_start, s.frame_end,
                                          s.blend_type, s.influence, s.mute, _slot_name(s)) for s in t.strips])
            for t in ad.nla_tracks
        ],
    }


def pose(obj, frame) -> np.ndarray:
    bpy.context.scene.frame_set(frame)
    ev = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    flat = np.empty(len(ev.pose.bones) * 16, np.float32)
    ev.pose.bones.foreach_get("matrix", flat)
    return flat.reshape(-1, 4, 4).transpose(0, 2, 1)  # foreach_get gives each matrix column by column


def test_a_strip_bake_adds_one_track_and_leaves_the_animators_work_as_it_was():
    human = scene_with_layers()
    before = snapshot(human)
    walk("Walker", bake_to="NLA_STRIP")
    after = snapshot(human)
    assert after["action"] == before["action"] == "Mood" and after["keys"] == before["keys"]
    assert after["blend"] == before["blend"]
    assert after["tracks"][:-1] == before["tracks"], "the tracks there were changed"
    assert len(after["tracks"]) == len(before["tracks"]) + 1
    track = human.animation_data.nla_tracks[-1]
    assert track.name == "Path Walk" and len(track.strips) == 1
    strip = track.strips[0]
    assert strip.blend_type == "COMBINE" and strip.action.procanim.generator == "path_walk"
    assert strip.action.procanim.owner == "Walker" and strip.action.users >= 1
    if hasattr(strip, "action_slot"):
        assert strip.action_slot is not None and strip.action_slot.name_display == "Walker"
    # the evaluated pose is the strip's: the same walk baked into the active action of a twin (the
    # NLA blends rotations as normalised quaternions: within 0.5 mm and 0.03°)
    twin = add_human("Twin")
    walk("Twin")
    for frame in FRAMES:
        np.testing.assert_allclose(pose(human, frame), pose(twin, frame), atol=5e-4, err_msg=f"frame {frame}")
    hips = human.pose.bones.find("hips")
    assert np.ptp(np.array([pose(human, f)[hips, :3, 3] for f in FRAMES]), axis=0).max() > 0.1  # it walks


def test_the_blend_type_is_the_callers():
    scene_with_layers()
    walk("Walker", bake_to="NLA_STRIP", blend_type="REPLACE")
    assert bpy.data.objects["Walker"].animation_data.nla_tracks[-1].strips[0].blend_type == "REPLACE"


def test_a_rerun_replaces_its_untouched_strip_and_keeps_an_edited_one():
    human = scene_with_layers()
    walk("Walker", bake_to="NLA_STRIP")
    tracks = len(human.animation_data.nla_tracks)
    action = human.animation_data.nla_tracks[-1].strips[0].action
    human.animation_data.nla_tracks[-1].strips[0].influence = 0.7  # the animator's setting stays
    walk("Walker", bake_to="NLA_STRIP", cadence=110.0)
    assert len(human.animation_data.nla_tracks) == tracks
    strip = human.animation_data.nla_tracks[-1].strips[0]
    assert strip.action == action and strip.influence == pytest.approx(0.7)
    # the animator edits a key of the baked strip's action
    fc = next(f for f in fcurves_of(action) if len(f.keyframe_points) > 2) if bpy.app.version < (4, 4, 0) else next(
        f for layer in action.layers for s in layer.strips for bag in s.channelbags for f in bag.fcurves
        if len(f.keyframe_points) > 2)
    fc.keyframe_points[1].co.y += 0.1
    fc.update()
    walk("Walker", bake_to="NLA_STRIP")
    assert len(human.animation_data.nla_tracks) == tracks + 1
    edited = human.animation_data.nla_tracks[-2].strips[0]
    assert edited.mute and edited.action == action and action.name.endswith(".edited") and action.use_fake_user
    fresh = human.animation_data.nla_tracks[-1].strips[0]
    assert fresh.action != action and not fresh.mute and fresh.action.procanim.generator == "path_walk"
    assert human.animation_data.action.name == "Mood"


def test_undo_takes_a_strip_bake_back():
    human = scene_with_layers()
    before = snapshot(human)
    actions = sorted(a.name for a in bpy.data.actions)
    bpy.ops.ed.undo_push(message="before the bake")
    walk("Walker", undo=True, bake_to="NLA_STRIP")
    assert len(bpy.data.objects["Walker"].animation_data.nla_tracks) == len(before["tracks"]) + 1
    assert bpy.ops.ed.undo() == {"FINISHED"}
    human = bpy.data.objects["Walker"]  # undo reloads the data: look the object up again
    assert snapshot(human) == before
    assert sorted(a.name for a in bpy.data.actions) == actions


def test_a_strip_bake_in_tweak_mode_is_refused():
    human = scene_with_layers()
    human.animation_data.nla_tracks[0].strips[0].select = True
    human.animation_data.use_tweak_mode = True
    with pytest.raises(RuntimeError, match="tweak mode"):
        walk("Walker", bake_to="NLA_STRIP")
