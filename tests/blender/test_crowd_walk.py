"""procanim.crowd_walk: many armatures, each on its own curve, in one call — the same bake as one
procanim.path_walk per character, pairs found by nearness, all or nothing on bad input."""

from __future__ import annotations

import bpy
import numpy as np
import pytest
from harness import fcurves_of, keyframes
from scenes import add_curve, add_human

SPACING_M = 1.5


def _crowd(n=3, length=2.0):
    """``n`` humans side by side along x and ``n`` straight curves starting at their feet, made in
    reverse order and named so that neither creation order nor name order pairs them."""
    humans = [add_human(f"Walker.{i}", location=(SPACING_M * i, 0.0, 0.0)) for i in range(n)]
    curves = {}
    for i in reversed(range(n)):
        x = SPACING_M * i
        curves[i] = add_curve(f"Path.{chr(ord('Z') - i)}", [(x, 0.0, 0.0), (x + 0.3 * i, -length, 0.0)])
    bpy.context.view_layer.update()
    return humans, [curves[i] for i in range(n)]


def _select(objs):
    for obj in bpy.context.view_layer.objects:
        obj.select_set(obj in objs)


def _keys(obj) -> dict:
    return {(fc.data_path, fc.array_index): keyframes(fc) for fc in fcurves_of(obj.animation_data.action, obj)}


def _actions() -> set:
    return {a.name for a in bpy.data.actions}


def test_selected_armatures_walk_their_nearest_curves_as_path_walk_would(procanim_extension):
    humans, curves = _crowd()
    _select(humans + curves)
    assert bpy.ops.procanim.crowd_walk(cadence=110.0) == {"FINISHED"}
    crowd = {h.name: _keys(h) for h in humans}
    for h, c in zip(humans, curves):
        assert h.animation_data.action.procanim.generator == "crowd_walk"
        # the same character baked alone along the curve it should have been given
        assert bpy.ops.procanim.path_walk(armature=h.name, path=c.name, cadence=110.0) == {"FINISHED"}
        alone = _keys(h)
        assert alone.keys() == crowd[h.name].keys()
        for channel, keys in alone.items():
            np.testing.assert_allclose(crowd[h.name][channel], keys, atol=1e-6, err_msg=f"{h.name} {channel}")


def test_named_pairs_follow_the_given_order(procanim_extension):
    humans, curves = _crowd(2)
    _select([])
    swapped = ",".join(c.name for c in reversed(curves))
    assert bpy.ops.procanim.crowd_walk(armatures=",".join(h.name for h in humans), paths=swapped) == {"FINISHED"}
    crowd = _keys(humans[0])
    assert bpy.ops.procanim.path_walk(armature=humans[0].name, path=curves[1].name) == {"FINISHED"}
    alone = _keys(humans[0])
    for channel, keys in alone.items():
        np.testing.assert_allclose(crowd[channel], keys, atol=1e-6)


@pytest.mark.parametrize("case, message", [
    ("nothing selected", "Select the armatures"),
    ("fewer curves", "2 armatures and 1 curves selected"),
    ("counts differ", "2 armatures and 1 paths"),
    ("not an armature", "not an armature"),
    ("named twice", "named twice"),
    ("a curve without length", "Walker.1 on 'Dot'.*no length"),
    ("a negative radius", "Personal radius must be between 0 and 5 m"),
    ("variation above 1", "Variation must be between 0 and 1"),
    ("no such collection", "No collection named 'Nowhere'"),
    ("a collection without meshes", "'Empties' holds no mesh objects"),
])
def test_bad_input_cancels_the_whole_crowd_and_writes_nothing(procanim_extension, case, message):
    humans, curves = _crowd(2)
    dot = add_curve("Dot", [(SPACING_M, 0.0, 0.0), (SPACING_M, 0.0, 0.0)])
    names = ",".join(h.name for h in humans)
    calls = {
        "nothing selected": dict(),
        "fewer curves": dict(armatures=names),
        "counts differ": dict(armatures=names, paths=curves[0].name),
        "not an armature": dict(armatures=f"{humans[0].name},{curves[0].name}", paths=names),
        "named twice": dict(armatures=f"{humans[0].name},{humans[0].name}"),
        "a curve without length": dict(armatures=names, paths=f"{curves[0].name},{dot.name}"),
        "a negative radius": dict(armatures=names, personal_radius=-0.1),
        "variation above 1": dict(armatures=names, variation=1.5),
        "no such collection": dict(armatures=names, obstacles="Nowhere"),
        "a collection without meshes": dict(armatures=names, obstacles="Empties"),
    }
    empties = bpy.data.collections.new("Empties")
    empties.objects.link(bpy.data.objects.new("Marker", None))
    _select(curves[:1] if case == "fewer curves" else curves if names in calls[case].get("armatures", "") else [])
    before = _actions()
    with pytest.raises(RuntimeError, match=message) as err:
        bpy.ops.procanim.crowd_walk(**calls[case])
    assert "Traceback" not in str(err.value)
    assert _actions() == before
    assert all(h.animation_data is None or h.animation_data.action is None for h in humans)


def test_the_sidebar_button_walks_the_selection_with_the_panels_settings(procanim_extension):
    """The Walk Crowd panel (under Path Walk): the crowd's settings and the Path Walk panel's go on
    its Generate button; what it bakes is the path walk alone of each (nothing to avoid)."""
    from harness import button_args, draw_log

    humans, curves = _crowd(2)
    settings = bpy.context.scene.procanim.path_walk
    settings.cadence, settings.stride = 112.0, 0.6
    crowd_settings = bpy.context.scene.procanim.crowd_walk
    crowd_settings.personal_radius, crowd_settings.seed = 0.25, 4
    _select(humans + curves[:1])
    log = draw_log(bpy.types.PROCANIM_PT_crowd_walk)
    assert ("label", "Selected: 2 armatures, 1 curves") in log and ("label", "Select one curve per armature") in log
    _select(humans + curves)
    log = draw_log(bpy.types.PROCANIM_PT_crowd_walk)
    args = button_args(log, "procanim.crowd_walk")
    assert args["cadence"] == pytest.approx(112.0) and args["stride"] == pytest.approx(0.6)
    assert args["personal_radius"] == pytest.approx(0.25) and args["seed"] == 4 and args["obstacles"] == ""
    assert args["ground"] == "" and "armatures" not in args and "paths" not in args and "path" not in args
    assert bpy.ops.procanim.crowd_walk(**args) == {"FINISHED"}
    crowd = _keys(humans[1])
    assert bpy.ops.procanim.path_walk(armature=humans[1].name, path=curves[1].name, cadence=112.0,
                                      stride=0.6) == {"FINISHED"}
    for channel, keys in _keys(humans[1]).items():
        np.testing.assert_allclose(crowd[channel], keys, atol=1e-6)


# --------------------------------------------------------------------------------------------
# Issue 27's acceptance, measured on Blender's evaluated pose bones (scene.frame_set per frame)

RADIUS_M = 0.3
CONTACT_M = 0.003  # a sole point within this of the floor is in contact (as tests/blender/test_path_walk.py)
FPS = 24


class CrowdPose:
    """Every walker's evaluated pose over the crowd's frames, in world space: the hips' heads and
    the sole points (heel under the ankle, ball and tip under the toe bone's head and tail, at the
    rest sole height, carried by the posed foot and toe bones), read in one pass over the frames."""

    def __init__(self, objs, frames):
        from test_path_walk import rest_sole_z

        self.objs, self.frames = objs, np.asarray(frames)
        bones = ("hips", "foot.L", "foot.R", "toe.L", "toe.R", "hand.L", "hand.R")
        mats = {o.name: {b: [] for b in bones} for o in objs}
        scene = bpy.context.scene
        for f in self.frames:
            scene.frame_set(int(f))
            depsgraph = bpy.context.evaluated_depsgraph_get()
            for o in objs:
                ev = o.evaluated_get(depsgraph)
                world = np.array(ev.matrix_world)
                for b in bones:
                    mats[o.name][b].append(world @ np.array(ev.pose.bones[b].matrix))
        self.pose = {n: {b: np.array(m) for b, m in d.items()} for n, d in mats.items()}
        self.hips = np.stack([self.pose[o.name]["hips"][:, :3, 3] for o in objs], axis=1)  # (F, A, 3)
        self.soles = {}
        for o in objs:
            rest = {b.name: np.array(b.matrix_local) for b in o.data.bones}
            z = rest_sole_z(o)
            pts = []
            for side in "LR":
                foot, toe = f"foot.{side}", f"toe.{side}"
                ankle, ball = rest[foot][:3, 3], rest[toe][:3, 3]
                tip = np.array(o.data.bones[toe].tail_local)
                for bone, p in ((foot, ankle), (toe, ball), (toe, tip)):
                    local = np.linalg.inv(rest[bone]) @ np.array([p[0], p[1], z, 1.0])
                    pts.append(np.einsum("fij,j->fi", self.pose[o.name][bone], local)[:, :3])
            self.soles[o.name] = np.stack(pts, axis=1)  # (F, 6, 3)

    def closest_pelvises(self, skip=()) -> float:
        """The smallest horizontal distance between two walkers' hips on any frame (pairs in ``skip`` aside)."""
        xy = self.hips[..., :2]
        d = np.linalg.norm(xy[:, :, None] - xy[:, None, :], axis=-1)
        n = xy.shape[1]
        d[:, np.arange(n), np.arange(n)] = np.inf
        for i, j in skip:
            d[:, i, j] = d[:, j, i] = np.inf
        return float(d.min())

    def skate_cm_s(self, obj) -> float:
        """Mean horizontal speed of the sole points on consecutive frames both in contact (cm/s)."""
        pts = self.soles[obj.name]
        on = pts[..., 2] < CONTACT_M
        both = on[1:] & on[:-1]
        v = np.linalg.norm(np.diff(pts[..., :2], axis=0), axis=-1) * FPS
        return float(100 * v[both].mean())

    def last_move(self) -> int:
        """The last frame on which any pelvis moves (more than 0.5 mm horizontally since the frame before)."""
        step = np.linalg.norm(np.diff(self.hips[..., :2], axis=0), axis=-1).max(axis=1)
        return int(self.frames[1:][step > 5e-4].max())


def _lanes(ends):
    """One human per (name, start, end) at its start, facing along its lane, and the lane's curve."""
    humans, curves = [], []
    for name, a, b in ends:
        h = add_human(name, location=(a[0], a[1], 0.0))
        humans.append(h)
        curves.append(add_curve(f"{name}.lane", [(a[0], a[1], 0.0), (b[0], b[1], 0.0)]))
    bpy.context.view_layer.update()
    return humans, curves


def _walk(humans, curves, **kw):
    assert bpy.ops.procanim.crowd_walk(armatures=",".join(h.name for h in humans),
                                       paths=",".join(c.name for c in curves), **kw) == {"FINISHED"}
    lo = min(int(h.animation_data.action.frame_range[0]) for h in humans)
    hi = max(int(h.animation_data.action.frame_range[1]) for h in humans)
    return np.arange(lo, hi + 1)


def _circle(n, radius=6.0):
    a = 2 * np.pi * np.arange(n) / n
    return [(f"C{i:02d}", (radius * np.cos(t), radius * np.sin(t)), (-radius * np.cos(t), -radius * np.sin(t)))
            for i, t in enumerate(a)]


@pytest.mark.parametrize("scene", ["twenty crossing", "two head-on"])
def test_a_crossing_crowd_keeps_its_distance_plants_its_feet_and_arrives(procanim_extension, scene):
    """Twenty walkers from a circle of 6 m radius to its opposite side (all through the centre), and
    two walkers head-on on one line: on every frame pelvises at least 2·r − 5 cm apart, each
    walker's feet skate < 1 cm/s in contact, each ends within 1 m of its curve's end, the crowd
    done within twice the slowest walker alone (the same crowd with no radius: each walks alone)."""
    head_on = [("A", (-5.0, 0.0), (5.0, 0.0)), ("B", (5.0, 0.0), (-5.0, 0.0))]
    ends = _circle(20) if scene == "twenty crossing" else head_on
    humans, curves = _lanes(ends)
    frames = _walk(humans, curves, personal_radius=0.0)
    alone = CrowdPose(humans, frames)
    assert alone.closest_pelvises() < 0.1  # alone they walk through each other: the measure can fail
    frames = _walk(humans, curves, personal_radius=RADIUS_M)
    crowd = CrowdPose(humans, frames)
    closest = crowd.closest_pelvises()
    skates = [crowd.skate_cm_s(h) for h in humans]
    gaps = [np.linalg.norm(crowd.hips[-1, k, :2] - np.array(b)) for k, (_n, _a, b) in enumerate(ends)]
    took, slowest = crowd.last_move() - frames[0], alone.last_move() - frames[0]
    print(f"\n{scene}: closest pelvises {closest:.3f} m, skate ≤ {max(skates):.3f} cm/s, end gap ≤ {max(gaps):.2f} m, "
          f"done at {took} frames (alone {slowest})")
    assert closest >= 2 * RADIUS_M - 0.05
    assert max(skates) < 1.0
    assert max(gaps) <= 1.0
    assert took <= 2 * slowest


def test_the_same_seed_bakes_the_same_keys_another_seed_another_timing(procanim_extension):
    humans, curves = _lanes(_circle(4, radius=3.0))
    _walk(humans, curves, variation=0.5, seed=1)
    first = {h.name: _keys(h) for h in humans}
    _walk(humans, curves, variation=0.5, seed=1)
    for h in humans:
        again = _keys(h)
        assert again.keys() == first[h.name].keys()
        for channel, keys in again.items():
            np.testing.assert_allclose(keys, first[h.name][channel], rtol=0, atol=1e-6, err_msg=f"{h.name} {channel}")
    frames = _walk(humans, curves, variation=0.5, seed=2)
    other = CrowdPose(humans, frames)
    frames = _walk(humans, curves, variation=0.5, seed=1)
    same = CrowdPose(humans, frames)

    def leaves(pose):  # the frame each walker's pelvis has moved 5 mm from where it stood
        moved = np.linalg.norm(pose.hips[..., :2] - pose.hips[:1, :, :2], axis=-1) > 0.005
        return [int(pose.frames[np.argmax(moved[:, k])]) for k in range(moved.shape[1])]

    assert leaves(other) != leaves(same)


def test_no_radius_and_no_variation_is_each_walk_alone_key_for_key(procanim_extension):
    """Crossing walkers with a personal radius of 0 and variation 0: each walker's keys are what
    procanim.path_walk bakes for it alone (today's crowd)."""
    humans, curves = _lanes(_circle(4, radius=3.0))
    _walk(humans, curves, personal_radius=0.0, variation=0.0)
    crowd = {h.name: _keys(h) for h in humans}
    for h, c in zip(humans, curves):
        assert bpy.ops.procanim.path_walk(armature=h.name, path=c.name) == {"FINISHED"}
        alone = _keys(h)
        assert alone.keys() == crowd[h.name].keys()
        for channel, keys in alone.items():
            np.testing.assert_allclose(crowd[h.name][channel], keys, rtol=0, atol=1e-6, err_msg=f"{h.name} {channel}")


def _grip_local(pose, frame_index) -> np.ndarray:
    """The handshake's documented grip point of the right hand (docs/handshake.md: 0.5·L along the
    hand bone, 0.15·L toward the body's midline), in the hand bone's frame of the pose the handshake
    starts from (the walk's last pose: the crowd's handshake is made on it)."""
    from test_handshake import GRIP_FRACTION, HALF_PALM

    hand, other = pose["hand.R"][frame_index], pose["hand.L"][frame_index]
    medial = other[:3, 3] - hand[:3, 3]
    medial[2] = 0.0
    n = hand[:3, :3].T @ (medial / np.linalg.norm(medial))
    n[1] = 0.0
    n /= np.linalg.norm(n)
    length = bpy.data.objects["Greeter.A"].data.bones["hand.R"].length
    return np.array([0.0, GRIP_FRACTION * length, 0.0]) + HALF_PALM * length * n


def test_two_walkers_whose_curves_end_apart_stop_plant_their_feet_and_shake_hands(procanim_extension):
    """Curves ending 1.2 m apart, facing each other, ``greet``: both stop with their feet planted,
    then their right hands meet in the shake with the handshake's grip error (≤ 0.1 cm). A claim
    about the generator's own motion: baked with every key (``key_tolerance=0``), as the handshake's
    tests do; each character's 1 mm bake may put each hand up to 1 mm off it (test_editable_bakes)."""
    import json

    humans, curves = _lanes([("Greeter.A", (-5.0, 0.3), (-0.6, 0.0)), ("Greeter.B", (5.0, -0.2), (0.6, 0.0))])
    frames = _walk(humans, curves, greet=True, key_tolerance=0.0)
    m = [json.loads(h.animation_data.action.procanim.metrics_json) for h in humans]
    assert m[0]["crowd_meetings"] == 1 and {m[0]["greet_role"], m[1]["greet_role"]} == {"initiator", "partner"}
    pose = CrowdPose(humans, frames)
    start = int(round(m[0]["greet_frame_start"]))
    k0 = int(np.searchsorted(frames, start))
    phases = [np.array(list(x["greet_phases"])) for x in m]
    shake = np.flatnonzero((phases[0] == "S") & (phases[1] == "S")) + k0
    assert len(shake) >= 24
    # both stood still, feet planted, for the frames before the handshake began
    for k, h in enumerate(humans):
        still = pose.hips[k0 - 6:k0 + 1, k, :2]
        assert np.ptp(still, axis=0).max() < 1e-4, h.name
        soles = pose.soles[h.name][k0 - 6:k0 + 1]
        assert np.ptp(soles[..., :2], axis=0).max() < 1e-4 and soles[..., 2].min() > -CONTACT_M, h.name
    grips = []
    for h in humans:
        bone_pose = pose.pose[h.name]
        local = np.append(_grip_local(bone_pose, k0 - 1), 1.0)
        grips.append(np.einsum("fij,j->fi", bone_pose["hand.R"][shake], local)[:, :3])
    err_cm = 100 * np.linalg.norm(grips[0] - grips[1], axis=1)
    print(f"\ngreet: grip error in the shake {err_cm.mean():.4f} cm mean, {err_cm.max():.4f} cm max "
          f"({len(shake)} frames)")
    assert err_cm.max() <= 0.1
    assert np.linalg.norm(grips[0][0] - grips[0][len(shake) // 4]) > 0.02  # the hands move in the shake
