"""The path walk baked in Blender, measured on the EVALUATED pose (``frame_set``), not on the engine.

Every figure here is measured from what Blender shows: sole points carried by the posed foot and
toe bones, the hips' world position and heading, the ground as this test built it (a plane or a
staircase mesh made with ``from_pydata``, whose profile the test knows). Nothing is read back from
the engine's own metrics except where a test checks that they were stored.

Sole points (per side), defined from the rest pose only:
    heel  — under the ankle (foot bone head) at the rest sole height, carried by the foot bone
    ball  — under the toe bone's head, carried by the toe bone
    tip   — under the toe bone's tail, carried by the toe bone
The rest sole height is the lowest point of the character's body mesh (ProcAnim's human) or of its
foot bones and their children (a bare metarig: Rigify's heel bone). A point is in contact on a
frame when it is within 3 mm of the ground.
For the footprint on stairs the foot also reaches back behind the ankle by a quarter of the
ankle-to-tip length (a common anatomical proportion), so a foot "on a tread" has its whole
heel-to-tip extent on it.
"""

from __future__ import annotations

import json
import math

import bpy
import harness
import numpy as np
import pytest

CONTACT_M = 0.003
FPS = 24

# ----------------------------------------------------------------------------- scene builders


def add_human(name="Human"):
    assert bpy.ops.procanim.add_human(name=name) == {"FINISHED"}
    return bpy.data.objects[name]


def add_curve(name, points, kind="POLY"):
    """A curve object through ``points`` (world space): a poly spline, or a Bezier with auto handles."""
    cu = bpy.data.curves.new(name, "CURVE")
    cu.dimensions = "3D"
    if kind == "POLY":
        sp = cu.splines.new("POLY")
        sp.points.add(len(points) - 1)
        for p, co in zip(sp.points, points):
            p.co = (*co, 1.0)
    else:
        sp = cu.splines.new("BEZIER")
        sp.bezier_points.add(len(points) - 1)
        for p, co in zip(sp.bezier_points, points):
            p.co = co
            p.handle_left_type = p.handle_right_type = "AUTO"
        cu.resolution_u = 24
    ob = bpy.data.objects.new(name, cu)
    bpy.context.collection.objects.link(ob)
    return ob


def stairs_with_a_bend() -> tuple:
    """A :class:`Staircase` (its mesh ``Stairs``) and the Bezier curve ``Path`` that bends, then runs
    straight over the stairs to 1.5 m past their end: ``(stairs, its mesh object, the path's points)``."""
    stairs = Staircase()
    ground = stairs.mesh_object()
    end = stairs.end + 1.5
    pts = [(0.0, 0.0, 0.0), (0.25, -0.6, 0.0), (0.0, -1.2, 0.0), (0.0, -end, 0.0)]
    add_curve("Path", pts, kind="BEZIER")
    return stairs, ground, pts


def s_curve_points(length=8.0, amp=1.2, n=161):
    y = np.linspace(0.0, -length, n)
    return np.stack([amp * np.sin(2 * np.pi * (-y) / length), y, np.zeros(n)], -1)


class Staircase:
    """Up ``n`` treads, a landing, down ``n`` treads, along −Y from y = −start; x in [−1, 1]."""

    def __init__(self, start=1.5, tread=0.30, riser=0.16, n=4, landing=1.0):
        self.edges, self.levels = [], []
        s, z = start, 0.0
        for k in range(n):
            z += riser
            self.edges.append(s)
            self.levels.append(z)
            s += landing if k == n - 1 else tread
        for _ in range(n):
            z -= riser
            self.edges.append(s)
            self.levels.append(z)
            s += tread
        self.end = s
        self.edges = np.array(self.edges)
        self.levels = np.array(self.levels)

    def profile(self, s):
        k = np.searchsorted(self.edges, np.asarray(s, float), side="right")
        return np.concatenate(([0.0], self.levels))[k]

    def height(self, xy):
        return self.profile(-np.asarray(xy)[..., 1])

    def mesh_object(self, name="Stairs", far=3.0):
        """Floor before and after, a horizontal face per tread and a vertical face per riser."""
        bounds = np.concatenate(([-0.5], self.edges, [self.end + far]))
        zs = np.concatenate(([0.0], self.levels))
        verts, faces = [], []
        for k in range(len(bounds) - 1):
            y0, y1, z = -bounds[k], -bounds[k + 1], zs[k]
            b = len(verts)
            verts += [(-1, y0, z), (1, y0, z), (1, y1, z), (-1, y1, z)]
            faces.append((b, b + 1, b + 2, b + 3))
            if k + 1 < len(zs):  # riser at bounds[k + 1]
                z2 = zs[k + 1]
                b = len(verts)
                verts += [(-1, y1, z), (1, y1, z), (1, y1, z2), (-1, y1, z2)]
                faces.append((b, b + 1, b + 2, b + 3))
        me = bpy.data.meshes.new(name)
        me.from_pydata(verts, [], faces)
        ob = bpy.data.objects.new(name, me)
        bpy.context.collection.objects.link(ob)
        return ob


def flat(xy):
    return np.zeros(np.asarray(xy).shape[:-1])


# ----------------------------------------------------------------------------- measuring


class Walk:
    """The evaluated animation of an armature over its baked frame range, in world space."""

    def __init__(self, obj, hips="hips"):
        action = obj.animation_data.action
        self.metrics = json.loads(action.procanim.metrics_json)
        f0, f1 = int(self.metrics["frame_start"]), int(self.metrics["frame_end"])
        self.frames = np.arange(f0, f1 + 1)
        poses = [harness.evaluated_pose(obj, f, "WORLD") for f in self.frames]
        self.pose = {name: np.array([p[name] for p in poses]) for name in poses[0]}
        bones = obj.data.bones
        rest = {b.name: np.array(b.matrix_local) for b in bones}
        self.rest = rest
        sole_z = rest_sole_z(obj)
        self.soles = {}
        self.footprint = {}
        for side in "LR":
            foot, toe = f"foot.{side}", f"toe.{side}"
            ankle, ball, tip = rest[foot][:3, 3], rest[toe][:3, 3], np.array(bones[toe].tail_local)
            fwd = tip[:2] - ankle[:2]
            length = np.linalg.norm(fwd)
            fwd /= length
            pts = {
                "heel": (foot, [ankle[0], ankle[1], sole_z]),
                "ball": (toe, [ball[0], ball[1], sole_z]),
                "tip": (toe, [tip[0], tip[1], sole_z]),
                "back": (foot, [*(ankle[:2] - 0.25 * length * fwd), sole_z]),
            }
            world = {k: self._carry(b, p) for k, (b, p) in pts.items()}
            self.soles[side] = np.stack([world["heel"], world["ball"], world["tip"]], axis=1)  # (F, 3, 3)
            self.footprint[side] = np.stack([world["back"], world["tip"]], axis=1)  # (F, 2, 3)
        self.hips = self.pose[hips][:, :3, 3]
        rest_fwd = np.array([*(fwd), 0.0])  # feet → toes at rest is the character's forward
        rot = self.pose[hips][:, :3, :3] @ np.linalg.inv(rest[hips][:3, :3])
        self.forward = np.einsum("fij,j->fi", rot, rest_fwd)

    def _carry(self, bone, p_rest):
        local = np.linalg.inv(self.rest[bone]) @ np.array([*p_rest, 1.0])
        return np.einsum("fij,j->fi", self.pose[bone], local)[:, :3]

    def contact_speeds(self, ground):
        """Horizontal speeds (m/s) of sole points on consecutive frames both in contact; and depths."""
        speeds, depth = [], []
        for pts in self.soles.values():
            gz = ground(pts[..., :2])
            height = pts[..., 2] - gz
            depth.append(-height)
            on = height < CONTACT_M
            both = on[1:] & on[:-1]
            v = np.linalg.norm(np.diff(pts[..., :2], axis=0), axis=-1) * FPS
            speeds.append(v[both])
        return np.concatenate(speeds), np.concatenate([d.ravel() for d in depth])


def rest_sole_z(obj) -> float:
    meshes = [c for c in obj.children if c.type == "MESH"]
    if meshes:
        inv = np.linalg.inv(np.array(obj.matrix_world))
        z = []
        for m in meshes:
            co = np.array([v.co for v in m.data.vertices])
            mw = inv @ np.array(m.matrix_world)
            z.append((co @ mw[:3, :3].T + mw[:3, 3])[:, 2].min())
        return float(min(z))
    # a bare rig: the lowest point of the foot bones and their children (Rigify's heel bone)
    roots = {"foot.L", "foot.R"}
    feet = [b for b in obj.data.bones if b.name in roots or roots & {p.name for p in b.parent_recursive}]
    return float(min(min(b.head_local.z, b.tail_local.z) for b in feet))


def distance_to_polyline(points_xy, poly_xy):
    """Horizontal distance (m) of each point to a polyline."""
    a, b = poly_xy[:-1], poly_xy[1:]
    ab = b - a
    t = np.clip(np.einsum("pki,ki->pk", points_xy[:, None] - a, ab) / np.einsum("ki,ki->k", ab, ab), 0, 1)
    closest = a + t[..., None] * ab
    return np.min(np.linalg.norm(points_xy[:, None] - closest, axis=-1), axis=1)


def largest_step_angles(walk):
    """Per bone, per frame: the rotation angle (deg) from one frame to the next (world space)."""
    out = {}
    for name, m in walk.pose.items():
        r = m[:, :3, :3]
        rel = np.einsum("fji,fjk->fik", r[:-1], r[1:])
        cos = np.clip((np.trace(rel, axis1=1, axis2=2) - 1) / 2, -1, 1)
        out[name] = np.degrees(np.arccos(cos))
    return out


def walking_frames(walk):
    """Frames where the hips move (not the standing start and end)."""
    v = np.linalg.norm(np.diff(walk.hips[:, :2], axis=0), axis=-1) * FPS
    moving = np.nonzero(v > 0.3)[0]
    return np.arange(moving[0] + 1, moving[-1])


# ----------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def s_walk(procanim_extension):
    """Human along an S-curve on a flat floor (no ground object): the curve's own height."""
    harness.reset_scene()
    human = add_human()
    pts = s_curve_points()
    add_curve("S", pts)
    assert bpy.ops.procanim.path_walk(armature=human.name, path="S", frame_start=1) == {"FINISHED"}
    walk = Walk(human)
    action = human.animation_data.action
    walk.generator = action.procanim.generator
    walk.fcurves = {key: harness.keyframes(fc)[:, 0] for key, fc in harness.fcurve_map(action, human).items()}
    return walk, pts


@pytest.fixture(scope="module")
def stairs_walk(procanim_extension):
    """Human up a staircase mesh, across the landing and down again."""
    harness.reset_scene()
    human = add_human()
    stairs = Staircase()
    ground = stairs.mesh_object()
    add_curve("Line", [(0.0, 0.0, 0.0), (0.0, -(stairs.end + 1.5), 0.0)])
    assert bpy.ops.procanim.path_walk(armature=human.name, path="Line", ground=ground.name) == {"FINISHED"}
    return Walk(human), stairs


# ----------------------------------------------------------------------------- tests


def test_bake_keys_the_leg_bones_on_the_walks_frames(s_walk):
    """At the default key tolerance the keys are some of the walk's frames, its first and last among
    them (a key on every frame with key_tolerance=0: tests/blender/test_editable_bakes.py)."""
    walk, _ = s_walk
    assert walk.generator == "path_walk"
    for bone in ("root", "hips", "thigh.L", "shin.R", "foot.L", "upper_arm.R"):
        assert any(path.startswith(f'pose.bones["{bone}"]') for path, _ in walk.fcurves), bone
    keys = walk.fcurves[('pose.bones["thigh.L"].rotation_quaternion', 0)]
    assert set(keys) <= set(walk.frames) and keys[0] == walk.frames[0] and keys[-1] == walk.frames[-1]
    assert 10 < len(keys) < len(walk.frames)
    assert walk.frames[0] == 1 and len(walk.frames) > 5 * FPS


def test_stance_foot_does_not_slide_on_the_s_curve(s_walk):
    walk, _ = s_walk
    v, _ = walk.contact_speeds(flat)
    assert v.size > 500, "too few contact samples: the feet never touch the floor?"
    assert v.mean() * 100 < 1.0, f"skate mean {v.mean() * 100:.2f} cm/s"
    assert np.percentile(v, 95) * 100 < 5.0, f"skate p95 {np.percentile(v, 95) * 100:.2f} cm/s"


def test_no_foot_below_the_floor(s_walk):
    walk, _ = s_walk
    _, depth = walk.contact_speeds(flat)
    assert depth.max() * 100 < 0.5, f"penetration {depth.max() * 100:.2f} cm"


def test_character_follows_the_s_curve_within_5_cm(s_walk):
    walk, pts = s_walk
    dev = distance_to_polyline(walk.hips[:, :2], pts[:, :2])
    assert dev.mean() < 0.05, f"mean pelvis deviation {dev.mean() * 100:.1f} cm"
    assert dev.max() < 0.12, f"max pelvis deviation {dev.max() * 100:.1f} cm"
    # it walked the whole curve: from its start to its end
    assert np.linalg.norm(walk.hips[0, :2] - pts[0, :2]) < 0.05
    assert np.linalg.norm(walk.hips[-1, :2] - pts[-1, :2]) < 0.05
    # and it did bend: the hips reached both sides of the S
    assert walk.hips[:, 0].max() > 1.0 and walk.hips[:, 0].min() < -1.0


def test_heading_follows_the_path_tangent(s_walk):
    walk, pts = s_walk
    seg = np.diff(pts[:, :2], axis=0)
    tangents = seg / np.linalg.norm(seg, axis=-1, keepdims=True)
    errs = []
    for f in walking_frames(walk):
        j = int(np.argmin(np.linalg.norm(pts[:-1, :2] - walk.hips[f, :2], axis=-1)))
        t, fw = tangents[j], walk.forward[f, :2]
        errs.append(abs(math.degrees(math.atan2(t[0] * fw[1] - t[1] * fw[0], t @ fw))))
    errs = np.array(errs)
    assert errs.mean() < 8.0 and errs.max() < 25.0, (errs.mean(), errs.max())


def test_no_frame_to_frame_pops(s_walk, stairs_walk):
    """A pop: a bone's world rotation step that stands out from both neighbouring steps by 10° or
    more, any step over 40° in one frame, or a jump in the hips' velocity."""
    for walk in (s_walk[0], stairs_walk[0]):
        for name, step in largest_step_angles(walk).items():
            assert step.max() < 40.0, f"{name}: turns {step.max():.1f}° in one frame"
            spike = step[1:-1] - np.maximum(step[:-2], step[2:])
            worst = int(spike.argmax())
            assert spike.max() < 10.0, f"{name}: a {spike.max():.1f}° pop at frame {walk.frames[1 + worst]}"
        vel = np.diff(walk.hips, axis=0) * FPS
        dv = np.linalg.norm(np.diff(vel, axis=0), axis=-1)
        assert dv.max() < 0.35, f"hips velocity jumps by {dv.max():.2f} m/s in one frame"


def test_stairs_every_footstep_on_one_tread_and_no_penetration(stairs_walk):
    walk, stairs = stairs_walk
    v, depth = walk.contact_speeds(stairs.height)
    assert v.size > 300
    assert v.mean() * 100 < 1.0 and np.percentile(v, 95) * 100 < 5.0, (v.mean(), np.percentile(v, 95))
    assert depth.max() * 100 < 0.5, f"penetration {depth.max() * 100:.2f} cm"
    steps_on_stairs = 0
    for side in "LR":
        pts = walk.soles[side]
        height = pts[..., 2] - stairs.height(pts[..., :2])
        down = np.all(height < CONTACT_M, axis=1)  # heel, ball and tip all on the ground: a footstep
        back, tip = -walk.footprint[side][down, 0, 1], -walk.footprint[side][down, 1, 1]
        for lo, hi in zip(np.minimum(back, tip), np.maximum(back, tip)):
            straddled = stairs.edges[(stairs.edges > lo) & (stairs.edges < hi)]
            assert straddled.size == 0, f"foot {side} straddles the stair edge at {straddled[0]:.2f} m"
        on_flight = np.zeros(len(walk.frames), dtype=int)
        on_flight[np.nonzero(down)[0]] = (back > stairs.edges[0]) & (tip < stairs.edges[-1])
        steps_on_stairs += np.count_nonzero(np.diff(np.concatenate(([0], on_flight))) == 1)
    assert steps_on_stairs >= 4, f"only {steps_on_stairs} footsteps on the staircase"
    # up and down again: the hips rose by the flight's height and came back to the floor
    rise = walk.hips[:, 2].max() - walk.hips[0, 2]
    assert rise > stairs.levels.max() - 0.1
    assert abs(walk.hips[-1, 2] - walk.hips[0, 2]) < 0.02


def test_metrics_are_stored_on_the_action_and_agree_with_blender(s_walk):
    walk, _ = s_walk
    m = walk.metrics
    for key in ("skate_mean_cm_s", "penetration_max_cm", "pelvis_deviation_mean_cm", "step_count", "cadence_spm"):
        assert key in m, key
    assert m["cadence_spm"] == pytest.approx(100.0, rel=0.02)
    v, _ = walk.contact_speeds(flat)
    assert m["skate_mean_cm_s"] < 1.0 and v.mean() * 100 < 1.0


def footsteps(walk, ground=flat):
    """Footsteps measured on the pose: (first frame, planted position) of each run of frames in
    which a foot has a sole point on the ground, both feet, in time order."""
    out = []
    for side in "LR":
        pts = walk.soles[side]
        on = np.min(pts[..., 2] - ground(pts[..., :2]), axis=1) < CONTACT_M
        edges = np.diff(np.concatenate(([0], on.astype(int), [0])))
        for a, b in zip(np.nonzero(edges == 1)[0], np.nonzero(edges == -1)[0]):
            out.append((int(a), pts[a:b, 0].mean(axis=0), side))
    return sorted(out, key=lambda f: f[0])


def _straight_walk(**kwargs):
    harness.reset_scene()
    human = add_human()
    add_curve("Line", [(0.0, 0.0, 0.0), (0.0, -6.0, 0.0)])
    assert bpy.ops.procanim.path_walk(armature=human.name, path="Line", **kwargs) == {"FINISHED"}
    return Walk(human)


def test_cadence_stride_and_double_support_arguments_shape_the_steps():
    for cadence in (90.0, 120.0):
        steps = [f for f in footsteps(_straight_walk(cadence=cadence)) if f[0] > 0]  # not the standing start
        sides = [f[2] for f in steps]
        assert all(a != b for a, b in zip(sides, sides[1:])), f"feet alternate: {sides}"
        gaps = np.diff([f[0] for f in steps[1:-1]])  # steady steps: frames between touch-downs
        assert 60.0 * FPS / np.median(gaps) == pytest.approx(cadence, rel=0.05)
    steps = [f for f in footsteps(_straight_walk(stride=0.55)) if f[0] > 0]
    advance = np.abs(np.diff([f[1][1] for f in steps]))  # along the path (−Y), one footstep to the next
    assert np.median(advance) == pytest.approx(0.55, abs=0.03)
    both = {}
    for ds in (0.15, 0.40):
        walk = _straight_walk(double_support=ds)
        on = [np.min(walk.soles[s][..., 2], axis=1) < CONTACT_M for s in "LR"]
        moving = walking_frames(walk)
        both[ds] = float(np.mean((on[0] & on[1])[moving]))
    assert both[0.40] > both[0.15] + 0.15, both


def test_the_skate_measure_sees_feet_that_slide():
    """The measure above can fail: stretch the root's travel by 15 % (what a Follow Path at the wrong
    speed does; the root starts at its rest place, so scaling every location key stretches the
    travel) and the planted feet slide."""
    human = add_human()
    add_curve("Line", [(0.0, 0.0, 0.0), (0.0, -3.0, 0.0)])
    assert bpy.ops.procanim.path_walk(armature=human.name, path="Line") == {"FINISHED"}
    v, _ = Walk(human).contact_speeds(flat)
    assert v.mean() * 100 < 1.0
    for fc in harness.fcurves_of(human.animation_data.action, human):
        if fc.data_path == 'pose.bones["root"].location':
            for kp in fc.keyframe_points:
                kp.co.y *= 1.15
            fc.update()
    v, _ = Walk(human).contact_speeds(flat)
    assert v.mean() * 100 > 1.0, f"sliding feet measured at only {v.mean() * 100:.2f} cm/s"


def test_works_on_rigify_human_metarig():
    import addon_utils

    addon_utils.enable("rigify", default_set=True)
    bpy.ops.object.armature_human_metarig_add()
    rig = bpy.context.object
    bpy.ops.object.mode_set(mode="OBJECT")
    pts = s_curve_points(length=5.0, amp=0.6, n=101)
    add_curve("S", pts, kind="BEZIER")
    assert bpy.ops.procanim.path_walk(armature=rig.name, path="S") == {"FINISHED"}
    walk = Walk(rig, hips="spine")
    v, depth = walk.contact_speeds(flat)
    assert v.size > 200
    assert v.mean() * 100 < 1.0 and np.percentile(v, 95) * 100 < 5.0, (v.mean(), np.percentile(v, 95))
    assert depth.max() * 100 < 0.5
    dev = distance_to_polyline(walk.hips[:, :2], pts[:, :2])
    assert dev.mean() < 0.05
    assert np.linalg.norm(walk.hips[-1, :2] - pts[-1, :2]) < 0.05


def test_a_bevelled_curve_is_walked_along_its_centre_line_and_left_as_it_was():
    human = add_human()
    pts = s_curve_points(length=5.0, amp=0.6, n=101)
    curve = add_curve("Tube", pts, kind="BEZIER")
    curve.data.bevel_depth, curve.data.extrude = 0.05, 0.02
    assert bpy.ops.procanim.path_walk(armature=human.name, path="Tube") == {"FINISHED"}
    assert curve.data.bevel_depth == pytest.approx(0.05) and curve.data.extrude == pytest.approx(0.02)
    walk = Walk(human)
    dev = distance_to_polyline(walk.hips[:, :2], pts[:, :2])
    assert dev.mean() < 0.05, f"mean pelvis deviation {dev.mean() * 100:.1f} cm"
    assert np.linalg.norm(walk.hips[-1, :2] - pts[-1, :2]) < 0.05


RAMP_Y, RAMP_Z = [0.0, -2.0, -5.0, -7.5], [0.0, 0.0, 0.3, 0.3]  # a 10 % ramp between two levels


def ramp_height(xy):
    return np.interp(-np.asarray(xy)[..., 1], [-y for y in RAMP_Y], RAMP_Z)


def _walk_up_the_ramp(with_mesh: bool):
    human = add_human()
    args = {"armature": human.name, "path": "Ramp"}
    if with_mesh:
        add_curve("Ramp", [(0.0, RAMP_Y[0], 0.0), (0.0, RAMP_Y[-1], 0.0)])
        verts = [(x, y, z) for y, z in zip(RAMP_Y, RAMP_Z) for x in (-1.0, 1.0)]
        faces = [(2 * k, 2 * k + 1, 2 * k + 3, 2 * k + 2) for k in range(len(RAMP_Y) - 1)]
        me = bpy.data.meshes.new("RampMesh")
        me.from_pydata(verts, [], faces)
        bpy.context.collection.objects.link(bpy.data.objects.new("RampMesh", me))
        args["ground"] = "RampMesh"
    else:
        add_curve("Ramp", list(zip([0.0] * len(RAMP_Y), RAMP_Y, RAMP_Z)))
    assert bpy.ops.procanim.path_walk(**args) == {"FINISHED"}
    walk = Walk(human)
    v, depth = walk.contact_speeds(ramp_height)
    assert v.size > 100 and v.mean() * 100 < 1.0
    assert walk.hips[-1, 2] - walk.hips[0, 2] == pytest.approx(0.3, abs=0.02)
    assert depth.max() * 100 < 0.5, f"penetration {depth.max() * 100:.2f} cm"


def test_up_a_ramp_mesh_the_feet_follow_the_slope():
    _walk_up_the_ramp(with_mesh=True)


def test_without_a_ground_the_curve_height_is_walked_up_a_ramp():
    _walk_up_the_ramp(with_mesh=False)


def test_object_root_motion_moves_the_object_along_the_path():
    human = add_human()
    human.location = (0.5, 0.0, 0.0)
    add_curve("Line", [(0.5, 0.0, 0.0), (0.5, -4.0, 0.0)])
    assert bpy.ops.procanim.path_walk(armature=human.name, path="Line", root_motion="OBJECT") == {"FINISHED"}
    fcurves = harness.fcurve_map(human.animation_data.action, human)
    assert ("location", 1) in fcurves
    walk = Walk(human)
    assert walk.hips[-1, 1] == pytest.approx(-4.0, abs=0.05)
    assert abs(walk.hips[-1, 0] - 0.5) < 0.05
    bpy.context.scene.frame_set(int(walk.frames[-1]))
    assert human.matrix_world.translation.y < -3.5  # the object itself walked
    v, depth = walk.contact_speeds(flat)
    assert v.mean() * 100 < 1.0 and depth.max() * 100 < 0.5


@pytest.mark.parametrize("root_motion", ["BONE", "OBJECT"])
def test_a_turned_and_moved_armature_walks_the_path_where_it_lies_in_the_world(root_motion):
    human = add_human()
    human.location = (2.0, 1.0, 0.0)
    human.rotation_euler = (0.0, 0.0, math.radians(90.0))  # faces +X
    path = [(2.0, 1.0, 0.0), (4.0, 1.0, 0.0), (5.0, 2.5, 0.0)]
    add_curve("Bend", path)
    assert bpy.ops.procanim.path_walk(armature=human.name, path="Bend", root_motion=root_motion) == {"FINISHED"}
    walk = Walk(human)
    pts = np.array(path)
    assert np.linalg.norm(walk.hips[-1, :2] - pts[-1, :2]) < 0.05
    assert distance_to_polyline(walk.hips[:, :2], pts[:, :2]).mean() < 0.05
    v, depth = walk.contact_speeds(flat)
    assert v.mean() * 100 < 1.0 and depth.max() * 100 < 0.5


def test_rerun_replaces_its_bake_and_keeps_the_users_action():
    human = add_human()
    add_curve("Line", [(0.0, 0.0, 0.0), (0.0, -3.0, 0.0)])
    mine = bpy.data.actions.new("MyKeys")
    human.animation_data_create().action = mine
    assert bpy.ops.procanim.path_walk(armature=human.name, path="Line") == {"FINISHED"}
    baked = human.animation_data.action
    assert baked != mine and mine.use_fake_user and baked.procanim.previous_action == "MyKeys"
    assert bpy.ops.procanim.path_walk(armature=human.name, path="Line", cadence=120) == {"FINISHED"}
    assert human.animation_data.action == baked
    assert len(bpy.data.actions) == 2


def test_sidebar_settings_take_curve_and_mesh_only():
    settings = bpy.context.scene.procanim.path_walk
    curve = add_curve("Line", [(0.0, 0.0, 0.0), (0.0, -3.0, 0.0)])
    settings.path = curve
    assert settings.path == curve
    prop = settings.bl_rna.properties["path"]
    assert prop.fixed_type.identifier == "Object"
    # the poll refuses a mesh for the path (what dragging a mesh into the field does)
    me = bpy.data.objects.new("M", bpy.data.meshes.new("M"))
    bpy.context.collection.objects.link(me)
    human = add_human()
    bpy.context.scene.procanim.armature = human
    settings.path = curve
    assert bpy.ops.procanim.path_walk() == {"FINISHED"}  # empty names: the sidebar's objects
    assert human.animation_data.action.procanim.generator == "path_walk"


def test_user_presets_save_and_restore_the_settings():
    import os

    walk = bpy.context.scene.procanim.path_walk
    walk.cadence, walk.arm_swing_forward, walk.delta_y, walk.root_motion = 115.0, 40.0, (0.2, 0.0, -0.1), "OBJECT"
    name = "procanim test walk preset"
    assert bpy.ops.procanim.path_walk_preset_add(name=name) == {"FINISHED"}
    folder = bpy.utils.user_resource("SCRIPTS", path=os.path.join("presets", "procanim", "path_walk"))
    path = os.path.join(folder, "procanim_test_walk_preset.py")
    try:
        assert os.path.isfile(path)
        walk.cadence, walk.arm_swing_forward, walk.delta_y, walk.root_motion = 90.0, 10.0, (0.0, 0.0, 0.0), "BONE"
        menu = "PROCANIM_MT_path_walk_presets"
        assert bpy.ops.script.execute_preset(filepath=path, menu_idname=menu) == {"FINISHED"}
        assert (walk.cadence, walk.arm_swing_forward, walk.root_motion) == (115.0, 40.0, "OBJECT")
        assert tuple(walk.delta_y) == pytest.approx((0.2, 0.0, -0.1))
    finally:
        if os.path.isfile(path):
            os.remove(path)


def _bad(make, kwargs, message):
    human = add_human()
    before = set(bpy.data.actions.keys())
    args = make(human)
    args.update(kwargs)
    with pytest.raises(RuntimeError, match=message):
        bpy.ops.procanim.path_walk(**args)
    assert human.animation_data is None or human.animation_data.action is None
    assert set(bpy.data.actions.keys()) == before


def test_a_path_that_is_not_a_curve_is_refused():
    def make(human):
        me = bpy.data.objects.new("Floor", bpy.data.meshes.new("Floor"))
        bpy.context.collection.objects.link(me)
        return {"armature": human.name, "path": "Floor"}

    _bad(make, {}, r"'Floor' is a mesh.*curve")


def test_a_curve_of_zero_length_is_refused():
    def make(human):
        add_curve("Dot", [(0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)])
        return {"armature": human.name, "path": "Dot"}

    _bad(make, {}, r"'Dot'.*no length|no horizontal length")


def test_a_path_steeper_than_a_ladder_is_refused():
    def make(human):
        add_curve("Ladder", [(0.0, 0.0, 0.0), (0.0, -1.0, 0.0), (0.0, -1.3, 3.0), (0.0, -3.0, 3.0)])
        return {"armature": human.name, "path": "Ladder"}

    _bad(make, {}, "too steep")


def test_a_ground_mesh_with_no_faces_is_refused():
    def make(human):
        add_curve("Line", [(0.0, 0.0, 0.0), (0.0, -3.0, 0.0)])
        me = bpy.data.meshes.new("Edges")
        me.from_pydata([(0, 0, 0), (1, 0, 0)], [(0, 1)], [])
        ob = bpy.data.objects.new("Edges", me)
        bpy.context.collection.objects.link(ob)
        return {"armature": human.name, "path": "Line", "ground": "Edges"}

    _bad(make, {}, "'Edges' has no faces")


def test_a_rig_missing_leg_roles_is_refused():
    arm = bpy.data.objects.new("Stick", bpy.data.armatures.new("Stick"))
    bpy.context.collection.objects.link(arm)
    bpy.context.view_layer.objects.active = arm
    bpy.ops.object.mode_set(mode="EDIT")
    for name, head, tail in (("hips", (0, 0, 1), (0, 0, 1.2)), ("thigh.L", (0.1, 0, 1), (0.1, 0, 0.5))):
        eb = arm.data.edit_bones.new(name)
        eb.head, eb.tail = head, tail
    bpy.ops.object.mode_set(mode="OBJECT")
    add_curve("Line", [(0.0, 0.0, 0.0), (0.0, -3.0, 0.0)])
    with pytest.raises(RuntimeError, match=r"'Stick'.*(shin|foot|thigh\.R)"):
        bpy.ops.procanim.path_walk(armature="Stick", path="Line")
    assert arm.animation_data is None and not bpy.data.actions


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"cadence": 1000.0}, "Cadence must be between 20 and 240"),
        ({"double_support": 0.9}, "Double support must be between"),
        ({"stride": 5.0}, "Stride must be between"),
        ({"delta_y": (3.0, 0.0, 0.0)}, r"δ vertical \[1\] must be between -1 and 1"),
    ],
)
def test_extreme_values_are_refused(kwargs, message):
    def make(human):
        add_curve("Line", [(0.0, 0.0, 0.0), (0.0, -3.0, 0.0)])
        return {"armature": human.name, "path": "Line"}

    _bad(make, kwargs, message)


def test_a_path_that_leaves_the_ground_mesh_is_refused():
    def make(human):
        add_curve("Long", [(0.0, 0.0, 0.0), (0.0, -6.0, 0.0)])
        me = bpy.data.meshes.new("Mat")
        me.from_pydata([(-1, 1, 0), (1, 1, 0), (1, -2, 0), (-1, -2, 0)], [], [(0, 1, 2, 3)])
        ob = bpy.data.objects.new("Mat", me)
        bpy.context.collection.objects.link(ob)
        return {"armature": human.name, "path": "Long", "ground": "Mat"}

    _bad(make, {}, "leaves the ground")


@pytest.mark.parametrize("scale", [(0.0, 0.0, 0.0), (1.0, 1.0, 0.0)])
def test_an_armature_scaled_to_nothing_is_refused_naming_its_scale(scale):
    """Found: a zero scale was reported as 'The walking path needs at least two points' (the path,
    read in the armature's space, became NaN), with a RuntimeWarning from numpy."""

    def make(human):
        add_curve("Line", [(0.0, 0.0, 0.0), (0.0, -3.0, 0.0)])
        human.scale = scale
        bpy.context.view_layer.update()
        return {"armature": human.name, "path": "Line"}

    _bad(make, {}, r"'Human'.*scale")
