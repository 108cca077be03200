"""Walk loops in Blender (issue 24, item 1): the path walk and the duck walk baked with ``loop``
``IN_PLACE`` or ``ROOT_MOTION`` play as seamless cycles under the Cycles modifiers the bake adds —
measured on Blender's EVALUATED deform bones (``frame_set``), two loops and the first frame of a
third, on ProcAnim's human and duck and on a generated Rigify human keyed on its IK and on its FK
controls.

Acceptance: the pose one loop on equals the pose a loop earlier within 1 mm (over a whole loop, so
every frame the modifiers play beyond the keys; with root motion after taking off the travel the
root bone measured); every deform joint's velocity across the seam within 10 % of its velocity at
the same point of the motion one period earlier, inside the loop (joints slower than 0.1 m/s:
within 1 cm/s); a foot point in contact slides
< 1 cm/s across the seam (in the walker's frame: in place, carried along by the loop's travel); in
place the pelvis moves ≤ 1 cm horizontally per period of the motion; with root motion the root bone
travels the stride measured from the footprints × the cycles, and the pelvis stays within 1 cm of
where it was relative to the root.
"""

from __future__ import annotations

import bpy
import numpy as np
import pytest
from harness import fcurves_of, keyframes
from rigify_rigs import add_rigify

SEAM_M = 0.001
VELOCITY_RATIO = 0.10
SLOW_M_S = 0.1
SKATE_M_S = 0.01
DRIFT_M = 0.01
CONTACT_M = 0.003  # a foot point this close to its lowest height over the loop is in contact
CYCLES = 2  # gait cycles per loop: two periods of the motion (a weaving walk's period is two cycles: 4)
PRESETS = ("NEUTRAL", "JOY", "HAPPY_WANDERING", "SAD")
MODES = ("IN_PLACE", "ROOT_MOTION")


def metrics(obj) -> dict:
    import json

    return json.loads(obj.animation_data.action.procanim.metrics_json)


class Rig:
    """Which evaluated bones a loop is measured on: the deform bones, the feet's, the pelvis."""

    def __init__(self, obj, pelvis: str, feet: tuple[str, ...]):
        self.obj, self.pelvis, self.feet = obj, pelvis, feet
        self.deform = [b.name for b in obj.data.bones if b.use_deform]


def human_rig(obj) -> Rig:
    return Rig(obj, "hips", ("foot.L", "toe.L", "foot.R", "toe.R"))


def duck_rig(obj) -> Rig:
    return Rig(obj, "hips", ("foot.L", "toe.L", "foot.R", "toe.R"))


def rigify_rig(obj) -> Rig:
    return Rig(obj, "DEF-spine", ("DEF-foot.L", "DEF-toe.L", "DEF-foot.R", "DEF-toe.R"))


def evaluated(obj, frames, names) -> np.ndarray:
    """World heads and tails (F, 2N, 3) of the pose bones ``names`` on each frame (Blender evaluates)."""
    scene, bones = bpy.context.scene, obj.pose.bones
    index = [bones.find(n) for n in names]
    n = len(bones)
    head, tail = np.empty(3 * n, np.float32), np.empty(3 * n, np.float32)
    out = np.empty((len(frames), 2 * len(names), 3))
    for k, f in enumerate(frames):
        scene.frame_set(int(f))
        ev = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
        ev.pose.bones.foreach_get("head", head)
        ev.pose.bones.foreach_get("tail", tail)
        world = np.array(ev.matrix_world)
        pts = np.concatenate([head.reshape(n, 3)[index], tail.reshape(n, 3)[index]])
        out[k] = pts @ world[:3, :3].T + world[:3, 3]
    return out


def bone_heads(obj, frames, name) -> np.ndarray:
    return evaluated(obj, frames, [name])[:, 0]


def check_loop(rig: Rig, motion_cycles: int = 1, step: int = 1) -> dict:
    """Measure the baked loop on ``rig`` (the acceptance, module docstring); returns the figures.
    ``motion_cycles``: gait cycles in one period of the motion; ``step``: frames between keys (the
    feet's slide is measured from key to key, as the motion is made: between keys a chain's
    interpolated rotations do not hold a planted foot)."""
    obj = rig.obj
    m = metrics(obj)
    fps = bpy.context.scene.render.fps / bpy.context.scene.render.fps_base
    start, P, C = int(m["loop_frame_start"]), int(round(m["loop_period_frames"])), m["cycle_frames"]
    assert P == round(m["loop_period_frames"]) and C * m["loop_cycles"] == pytest.approx(P)
    frames = np.arange(start, start + 2 * P + 2)
    names = rig.deform
    J = evaluated(obj, frames, names)  # (F, 2N, 3)
    # the travel over one loop: the root bone's (or the object's) as Blender evaluates it
    if m["loop_mode"] == "ROOT_MOTION":
        if m["loop_travel_role"] == "object":
            carrier = np.array([_object_location(obj, f) for f in (start, start + P)])
        else:
            carrier = bone_heads(obj, [start, start + P], m["loop_travel_bone"])
        travel = carrier[1] - carrier[0]
    else:
        travel = np.zeros(3)
    # the pose one loop on is the pose a loop earlier, on every frame of a whole loop
    seam = np.linalg.norm(J[P:2 * P + 1] - travel - J[:P + 1], axis=-1).max()
    # velocity across the seam (the key step into frame start + P and the one out of it) against the
    # same steps one period of the motion earlier, inside the loop's keys (the loop holds two periods)
    period = int(round(C * motion_cycles))
    assert P >= 2 * period, "a loop of two periods of the motion at least is measured"
    V = np.diff(J, axis=0) * fps
    ratios = []
    for s in (P - 1, P):
        ref = V[s - period]
        ratios.append(np.max(np.linalg.norm(V[s] - ref, axis=-1) / np.maximum(np.linalg.norm(ref, axis=-1),
                                                                                 SLOW_M_S)))
    velocity = max(ratios)
    # foot points in contact across the seam, in the walker's frame
    feet = [names.index(n) for n in rig.feet if n in names]
    points = np.concatenate([J[:, feet], J[:, [len(names) + i for i in feet]]], axis=1)
    if m["loop_mode"] == "IN_PLACE":
        forward = np.array(obj.matrix_world.to_3x3()) @ np.array([m[f"loop_forward_{a}"] for a in "xyz"])
        forward /= np.linalg.norm(forward)  # the travel is in metres: the world's direction of it
        points = points + np.outer((frames - start) / P * m["loop_travel_m"], forward)[:, None]
    low = points[:P + 1, :, 2].min(axis=0)
    touching = points[..., 2] <= low + CONTACT_M
    skate = 0.0
    for s in (P - 2 * step, P - step, P):
        both = touching[s] & touching[s + step]
        if both.any():
            slide = np.linalg.norm(points[s + step, both, :2] - points[s, both, :2], axis=-1).max()
            skate = max(skate, float(slide) * fps / step)
    # the pelvis per period of the motion: in place about its place, with root motion about the root
    at = np.arange(0, P + 1, period)
    pelvis = bone_heads(obj, frames[at], rig.pelvis)
    if m["loop_mode"] == "ROOT_MOTION":
        pelvis = pelvis - at[:, None] / P * travel
    drift = float(np.linalg.norm((pelvis - pelvis[0])[:, :2], axis=-1).max())
    figures = {"seam_mm": 1000 * seam, "velocity": velocity, "skate_cm_s": 100 * skate, "drift_cm": 100 * drift,
               "travel_m": float(np.linalg.norm(travel[:2]))}
    print(f"[loop {obj.name} {m['loop_mode']}] {figures}")
    assert seam <= SEAM_M, f"the pose one loop on is {1000 * seam:.2f} mm off"
    assert velocity <= VELOCITY_RATIO, f"velocity across the seam {100 * velocity:.1f} % off"
    assert skate < SKATE_M_S, f"feet in contact slide {100 * skate:.2f} cm/s across the seam"
    assert drift <= DRIFT_M, f"the pelvis drifts {100 * drift:.2f} cm per period"
    assert m["loop_seam_velocity_ratio"] <= VELOCITY_RATIO  # the engine's: the seam against the uncut walk
    if m["loop_mode"] == "ROOT_MOTION":
        stride = footprint_stride(obj, rig, start, period) / motion_cycles
        assert np.linalg.norm(travel[:2]) == pytest.approx(stride * m["loop_cycles"], abs=0.01)
        assert stride == pytest.approx(m["cycle_stride_m"], abs=0.01)  # metres, as every figure
    else:
        assert m["loop_travel_bone"] == ""
    return figures


def footprint_stride(obj, rig: Rig, start: int, period: int) -> float:
    """The travel of one period of the motion measured from the footprints: the horizontal move of
    the foot that stands at the loop's first frame (the lower one) between that frame and one period
    later."""
    feet = [n for n in rig.feet if "foot" in n.lower()]
    first = np.array([bone_heads(obj, [start, start + period], n) for n in feet])  # (2, 2, 3)
    standing = int(np.argmin(first[:, 0, 2]))
    return float(np.linalg.norm(first[standing, 1, :2] - first[standing, 0, :2]))


def _object_location(obj, frame) -> np.ndarray:
    bpy.context.scene.frame_set(int(frame))
    return np.array(obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).matrix_world.translation)


def check_modifiers(obj) -> None:
    """Every F-curve of the bake has a Cycles modifier: REPEAT_OFFSET exactly on the carrier's location
    channels that advance, REPEAT elsewhere; each curve has a key at the first frame and a closing key
    one loop on (its first value again, or the first plus the per-loop offset); the action is cyclic
    over the loop."""
    action = obj.animation_data.action
    m = metrics(obj)
    start, end = m["loop_frame_start"], m["loop_frame_start"] + m["loop_period_frames"]
    assert action.use_frame_range and action.use_cyclic
    assert tuple(action.frame_range) == pytest.approx((start, end))
    carrier = "location" if m["loop_travel_role"] == "object" else f'pose.bones["{m["loop_travel_bone"]}"].location'
    offsets = []
    for fc in fcurves_of(action, obj):
        cycles = [mod for mod in fc.modifiers if mod.type == "CYCLES"]
        assert len(cycles) == 1, f"{fc.data_path}[{fc.array_index}] has no Cycles modifier"
        keys = keyframes(fc)
        assert keys[0, 0] == pytest.approx(start) and keys[-1, 0] == pytest.approx(end)
        offset = keys[-1, 1] - keys[0, 1]
        mode = cycles[0].mode_after
        assert cycles[0].mode_before == mode
        if m["loop_mode"] == "ROOT_MOTION" and fc.data_path == carrier and abs(offset) > 1e-6:
            assert mode == "REPEAT_OFFSET"
            offsets.append(offset)
        else:
            assert mode == "REPEAT", f"{fc.data_path}[{fc.array_index}] {mode}"
            assert abs(offset) <= 1e-4, f"{fc.data_path}[{fc.array_index}] does not close: {offset}"
    if m["loop_mode"] == "ROOT_MOTION":
        assert offsets, "no channel carries the travel"


def motion_cycles(preset: str) -> int:
    """Gait cycles in one period of a path walk's motion: a weaving walk sways over two."""
    return 2 if preset == "HAPPY_WANDERING" else 1


def walk_loop(obj, preset: str, mode: str, **kw):
    cycles = CYCLES * motion_cycles(preset)
    assert bpy.ops.procanim.path_walk(armature=obj.name, style=preset, loop=mode, loop_cycles=cycles, **kw) == {
        "FINISHED"}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("preset", PRESETS)
def test_a_path_walk_loop_on_procanims_human_plays_seamlessly(preset, mode):
    assert bpy.ops.procanim.add_human(name="Walker") == {"FINISHED"}
    obj = bpy.data.objects["Walker"]
    walk_loop(obj, preset, mode)  # no path: a loop walks a straight line from where it stands
    check_modifiers(obj)
    check_loop(human_rig(obj), motion_cycles(preset))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("preset", PRESETS)
def test_a_duck_walk_loop_plays_seamlessly(preset, mode):
    """The duck keyed every 3 frames (the article's interval): the Cycles modifiers play the Bezier
    curves across the seam as they are inside the loop."""
    assert bpy.ops.procanim.add_duck(name="Duck") == {"FINISHED"}
    obj = bpy.data.objects["Duck"]
    assert bpy.ops.procanim.duck_walk(armature="Duck", preset=preset, loop=mode, loop_cycles=CYCLES,
                                      key_interval=3) == {"FINISHED"}
    check_modifiers(obj)
    check_loop(duck_rig(obj), step=3)


@pytest.mark.parametrize("root_motion", ["OBJECT", "BONE"])
def test_root_motion_on_the_object_of_a_turned_scaled_human_goes_on_along_its_heading(root_motion):
    """Root motion on a human whose object is turned 90° and scaled ×1.2 (read in its upright frame,
    in metres): 'Object' puts the travel on the object's channels, composed with its transform,
    'Bone' on the root bone's channels in the armature's units; the modifiers repeat it along the
    character's heading."""
    assert bpy.ops.procanim.add_human(name="Walker") == {"FINISHED"}
    obj = bpy.data.objects["Walker"]
    obj.rotation_euler[2] = np.pi / 2
    obj.scale = (1.2, 1.2, 1.2)
    obj.location = (2.0, 1.0, 0.0)
    bpy.context.view_layer.update()
    walk_loop(obj, "NEUTRAL", "ROOT_MOTION", root_motion=root_motion)
    assert metrics(obj)["loop_travel_role"] == ("object" if root_motion == "OBJECT" else "root")
    check_modifiers(obj)
    figures = check_loop(human_rig(obj))
    assert figures["travel_m"] > 1.0


RIGIFY_CASES = [("IK_CONTROLS", preset) for preset in PRESETS] + [("FK_CONTROLS", "NEUTRAL")]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("key_target", "preset"), RIGIFY_CASES)
def test_a_loop_on_a_generated_rigify_human_plays_seamlessly_on_its_controls(rigify_library, key_target, preset,
                                                                             mode):
    """The control conversion of a periodic deform pose is periodic: every control curve closes the
    loop (its closing key is its first; the root's forward channel advances by the travel), and the
    deform bones Blender evaluates from the controls loop as the acceptance asks — every preset on
    the IK controls, the FK controls with the plain walk."""
    rig = add_rigify(rigify_library, "human", "Rig")
    walk_loop(rig, preset, mode, key_target=key_target)
    m = metrics(rig)
    assert m["key_target"] == key_target
    if mode == "ROOT_MOTION":
        assert m["loop_travel_bone"] == "root"
    check_modifiers(rig)
    check_loop(rigify_rig(rig), motion_cycles(preset))


def test_a_loop_bake_without_its_modifiers_is_caught():
    """The measure can fail: with the Cycles modifiers removed the pose stops at the closing key."""
    assert bpy.ops.procanim.add_human(name="Walker") == {"FINISHED"}
    obj = bpy.data.objects["Walker"]
    walk_loop(obj, "NEUTRAL", "IN_PLACE")
    for fc in fcurves_of(obj.animation_data.action, obj):
        for mod in list(fc.modifiers):
            fc.modifiers.remove(mod)
    with pytest.raises(AssertionError):
        check_loop(human_rig(obj))


def test_a_rerun_rewrites_the_loop_and_a_loop_off_bakes_a_plain_walk():
    assert bpy.ops.procanim.add_human(name="Walker") == {"FINISHED"}
    obj = bpy.data.objects["Walker"]
    walk_loop(obj, "NEUTRAL", "IN_PLACE")
    action = obj.animation_data.action
    walk_loop(obj, "JOY", "ROOT_MOTION")
    assert obj.animation_data.action == action  # untouched: rewritten in place, modifiers and all
    check_modifiers(obj)
    curve = bpy.data.objects.new("Line", bpy.data.curves.new("Line", "CURVE"))
    spline = curve.data.splines.new("POLY")
    spline.points.add(1)
    spline.points[1].co = (0.0, -3.0, 0.0, 1.0)
    bpy.context.collection.objects.link(curve)
    assert bpy.ops.procanim.path_walk(armature="Walker", path="Line") == {"FINISHED"}
    action = obj.animation_data.action
    assert not action.use_cyclic and not any(fc.modifiers for fc in fcurves_of(action, obj))
    assert metrics(obj).get("loop_mode", "NONE") == "NONE"


def test_a_path_walk_without_a_path_and_no_loop_is_refused():
    assert bpy.ops.procanim.add_human(name="Walker") == {"FINISHED"}
    with pytest.raises(RuntimeError, match="walking path"):
        bpy.ops.procanim.path_walk(armature="Walker")


def test_a_crowd_with_the_path_walks_loop_on_is_refused():
    assert bpy.ops.procanim.add_human(name="Walker") == {"FINISHED"}
    with pytest.raises(RuntimeError, match="crowd walks its paths"):
        bpy.ops.procanim.crowd_walk(armatures="Walker", loop="IN_PLACE")
