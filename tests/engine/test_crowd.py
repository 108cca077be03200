"""Crowds that avoid, vary and greet (issue 27), measured on the clips the way a user meets them:
pelvises and soles by forward kinematics of the baked channels (``Skeleton.fk``), never the plan.

Acceptance: twenty walkers crossing a 6 m circle and two walkers head-on keep their pelvises at
least twice the personal radius less 5 cm apart on every frame, their feet do not skate in
contact, each ends within 1 m of its curve's end, the crowd finishes within twice the time its
slowest walker needs alone; the same inputs give the same keys, another seed another timing,
variation 0 today's crowd key for key; two walkers whose curves end 1.2 m apart, facing, stop and
shake hands with the handshake's grip error.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from procanim_addon.crowd import CrowdParams, Walker, footprint, generate_crowd
from procanim_addon.crowd.obstacles import nearest
from procanim_addon.errors import InputError
from procanim_addon.ground import FlatGround, StairsGround
from procanim_addon.handshake import HandshakeParams
from procanim_addon.handshake.character import prepare_character
from procanim_addon.rigs import human_skeleton
from procanim_addon.skeleton import Skeleton
from procanim_addon.threads import limit_blas_threads
from procanim_addon.walk import PathWalkParams, generate_path_walk
from procanim_addon.walk.metrics import contact_quality
from procanim_addon.walk.spec import bake_call as path_walk_call

SK, RM = human_skeleton(1.75)
# as the extension runs (its register): one BLAS thread — OpenBLAS's threaded products round
# differently from run to run
limit_blas_threads()
# "the same keys": equal to this (m, rad) — the path walk alone, called twice in one process, now and
# then differs in the last bits of a channel (≈ 3e-15; Blender keeps float32)
SAME = dict(rtol=0.0, atol=1e-12)
RADIUS = 0.3
SKATE_CM_S = 1.0


def walker(name, a, b, params=None, sk=SK, rm=RM) -> Walker:
    pts = np.array([[a[0], a[1], 0.0], [b[0], b[1], 0.0]])
    return Walker(name, sk, rm, pts, FlatGround(0.0), params or PathWalkParams())


def circle(n=20, radius=6.0, params=None) -> list[Walker]:
    angles = 2 * np.pi * np.arange(n) / n
    return [walker(f"W{i}", (radius * np.cos(a), radius * np.sin(a)), (-radius * np.cos(a), -radius * np.sin(a)),
                   params) for i, a in enumerate(angles)]


def pelvis(clip, sk=SK, rm=RM) -> np.ndarray:
    """(F, 3) the hips' heads, world = armature space here."""
    return sk.fk(clip.locations, clip.rotations)[:, rm.index(sk, "hips"), :3, 3]


def on_frames(clips, values):
    """(F, A, k): each clip's per-frame values on the crowd's frames, held before and after it."""
    lo, hi = min(c.frames[0] for c in clips), max(c.frames[-1] for c in clips)
    frames = np.arange(lo, hi + 1)
    return np.stack([v[np.clip((frames - c.frames[0]).astype(int), 0, len(v) - 1)] for c, v in zip(clips, values)],
                    axis=1)


def closest_pelvises(clips, skip=()) -> float:
    xy = on_frames(clips, [pelvis(c)[:, :2] for c in clips])
    d = np.linalg.norm(xy[:, :, None] - xy[:, None, :], axis=-1)
    n = len(clips)
    d[:, np.arange(n), np.arange(n)] = np.inf
    for i, j in skip:
        d[:, i, j] = d[:, j, i] = np.inf
    return float(d.min())


def skate(clip, fps=24.0) -> float:
    return contact_quality(SK, RM, SK.fk(clip.locations, clip.rotations), FlatGround(0.0), fps)["skate_mean_cm_s"]


def check_crowd(walkers, result, radius=RADIUS):
    clips = result.clips
    assert closest_pelvises(clips) >= 2 * radius - 0.05
    for w, c in zip(walkers, clips):
        assert skate(c, w.params.fps) < SKATE_CM_S, w.name
        assert np.linalg.norm(pelvis(c)[-1, :2] - w.points[-1, :2]) <= 1.0, w.name
    alone = max(generate_path_walk(w.skeleton, w.rigmap, w.points, w.ground, w.params).frame_count for w in walkers)
    took = max(c.frames[-1] for c in clips) - min(c.frames[0] for c in clips) + 1
    assert took <= 2 * alone


@pytest.fixture(scope="module")
def crossing():
    walkers = circle()
    return walkers, generate_crowd(walkers, CrowdParams(personal_radius_m=RADIUS))


@pytest.mark.slow
def test_twenty_walkers_crossing_the_centre_keep_their_distance_plant_their_feet_and_arrive(crossing):
    walkers, result = crossing
    check_crowd(walkers, result)
    assert result.report["moved"] == 20  # they all had to give way
    # without avoidance the same crowd walks through itself (the test can fail)
    assert closest_pelvises(generate_crowd(walkers, CrowdParams(personal_radius_m=0.0)).clips) < 0.1


def test_two_walkers_head_on_step_aside_and_pass():
    walkers = [walker("A", (0.0, 0.0), (10.0, 0.0)), walker("B", (10.0, 0.0), (0.0, 0.0))]
    result = generate_crowd(walkers, CrowdParams(personal_radius_m=RADIUS))
    check_crowd(walkers, result)
    sideways = [np.abs(pelvis(c)[:, 1]).max() for c in result.clips]
    assert min(sideways) > 0.1  # both stepped aside (the line itself would take them through each other)
    for w in result.walkers:
        assert w.moved


@pytest.mark.slow
def test_the_crossing_holds_with_variation_and_at_other_frame_rates():
    for variation, seed, fps in ((1.0, 1, 24.0), (0.5, 3, 30.0)):
        walkers = circle(params=PathWalkParams(fps=fps))
        check_crowd(walkers, generate_crowd(walkers, CrowdParams(variation=variation, seed=seed)))


def test_same_inputs_same_keys_another_seed_another_timing():
    walkers = circle(6)
    p = CrowdParams(variation=0.6, seed=7)
    a, b = generate_crowd(walkers, p), generate_crowd(walkers, p)
    for ca, cb in zip(a.clips, b.clips):
        assert np.array_equal(ca.frames, cb.frames)
        np.testing.assert_allclose(ca.locations, cb.locations, **SAME)
        np.testing.assert_allclose(ca.rotations, cb.rotations, **SAME)
    other = generate_crowd(walkers, dataclasses.replace(p, seed=8))

    def leaves(clip):  # the frame the walker's pelvis starts to move
        return int(np.argmax(np.linalg.norm(pelvis(clip) - pelvis(clip)[0], axis=1) > 0.005))

    assert [leaves(c) for c in a.clips] != [leaves(c) for c in other.clips]
    assert [c.frame_count for c in a.clips] != [c.frame_count for c in other.clips]


def test_variation_zero_is_todays_crowd_key_for_key():
    """Walkers whose curves never come near each other, and the crossing without avoidance: the
    crowd's clips are what today's crowd bakes: one path walk per walker (its spec's call)."""
    far = [walker(f"P{i}", (0.0, 3.0 * i), (8.0, 3.0 * i + 0.5 * i)) for i in range(4)]
    # side by side 1.5 m apart, drawing apart: ORCA's half-planes alone would bend their first steps
    side = [walker(f"S{i}", (1.5 * i, 0.0), (1.8 * i, -2.0), PathWalkParams(cadence_spm=110.0)) for i in range(3)]
    for walkers, p in ((far, CrowdParams()), (side, CrowdParams()), (circle(8), CrowdParams(personal_radius_m=0.0))):
        today = [path_walk_call(w.skeleton, w.rigmap, w.points, w.ground, w.params, np.eye(4), 1.0)[0]
                 for w in walkers]
        crowd = generate_crowd(walkers, p)
        assert not any(w.moved for w in crowd.walkers)
        for c, t in zip(crowd.clips, today):
            assert np.array_equal(c.frames, t.frames)
            np.testing.assert_allclose(c.locations, t.locations, **SAME)
            np.testing.assert_allclose(c.rotations, t.rotations, **SAME)


def test_variation_changes_each_walker_within_its_ranges():
    from procanim_addon.crowd.variation import vary

    base = PathWalkParams()
    assert vary(base, 0.0, 3, 0) == (base, 0.0)
    seen = [vary(base, 1.0, 3, i) for i in range(40)]
    cad = np.array([p.cadence_spm for p, _ in seen]) / base.cadence_spm
    delay = np.array([d for _, d in seen])
    assert np.all(np.abs(cad - 1) <= 0.10 + 1e-12) and np.ptp(cad) > 0.1
    assert np.all((delay >= 0) & (delay <= 1.0)) and np.ptp(delay) > 0.5
    assert vary(base, 1.0, 3, 5) == vary(base, 1.0, 3, 5)  # a walker's draw is its own
    half = vary(base, 0.5, 3, 5)[0].cadence_spm - base.cadence_spm
    assert half == pytest.approx(0.5 * (vary(base, 1.0, 3, 5)[0].cadence_spm - base.cadence_spm))


def _rested(sk: Skeleton, clip, k: int) -> Skeleton:
    pose = sk.fk(clip.locations[k:k + 1], clip.rotations[k:k + 1])[0]
    return Skeleton(sk.names, sk.parents, pose, sk.lengths)


def test_two_walkers_meet_stop_facing_and_shake_hands():
    walkers = [walker("A", (-5.0, 0.3), (-0.6, 0.0)), walker("B", (5.0, -0.2), (0.6, 0.0))]
    result = generate_crowd(walkers, CrowdParams(greet=True))
    assert result.report["meetings"] == 1 and len(result.handshakes) == 1
    hs = result.handshakes[0]
    a, b = result.clips
    start = hs["frame_start"]
    k0 = int(start - a.frames[0])
    # both stood still with their feet planted before the handshake and through it
    for clip in (a, b):
        still = pelvis(clip)[k0 - 6:k0 + 1]
        assert np.ptp(still[:, :2], axis=0).max() < 1e-6
        assert skate(clip) < SKATE_CM_S
    # facing each other, ends within 1 m of their curves' ends
    for clip, w, other in ((a, walkers[0], b), (b, walkers[1], a)):
        frame = character_forward(clip, k0)
        to_other = pelvis(other)[k0, :2] - pelvis(clip)[k0, :2]
        assert frame @ (to_other / np.linalg.norm(to_other)) > np.cos(np.radians(10))
        assert np.linalg.norm(pelvis(clip)[k0, :2] - w.points[-1, :2]) <= 1.0
    # right hands meet: the handshake's grip points (of each character as it stands) coincide
    hp = HandshakeParams()
    phases = np.array(list(hs["phase_initiator"])), np.array(list(hs["phase_partner"]))
    shake = np.flatnonzero((phases[0] == "S") & (phases[1] == "S")) + k0
    assert len(shake) >= 30
    grips = []
    for clip in (a, b):
        ch = prepare_character("c", _rested(SK, clip, k0 - 1), RM, np.eye(4), "DLS", hp)
        grips.append(ch.grip_world(SK.fk(clip.locations[shake], clip.rotations[shake])))
    assert np.linalg.norm(grips[0] - grips[1], axis=1).max() * 100 <= 0.1
    # every bone the handshake moves gets keys (a bake writes F-curves only for keyed bones)
    for clip in (a, b):
        moving = np.abs(np.diff(clip.rotations[k0:], axis=0)).max(axis=(0, 2)) > 1e-9
        assert set(np.flatnonzero(moving)) <= set(np.flatnonzero(clip.key_rotation)), clip.bone_names
    # the hands move in the shake (the measure can fail: the grip points apart before it)
    assert np.linalg.norm(grips[0][0] - grips[0][len(shake) // 4]) > 0.02


def character_forward(clip, k: int) -> np.ndarray:
    """Horizontal unit forward of the character on frame k: from the feet's heels to their tips."""
    pose = SK.fk(clip.locations[k:k + 1], clip.rotations[k:k + 1])[0]
    f = np.zeros(2)
    for side in "LR":
        foot = RM.index(SK, f"foot.{side}")
        toe = RM.index(SK, f"toe.{side}")
        tip = pose[toe, :3, 3] + pose[toe, :3, 1] * SK.lengths[toe]
        f += (tip - pose[foot, :3, 3])[:2]
    return f / np.linalg.norm(f)


def test_pairs_that_cannot_meet_walk_on_and_are_reported():
    walkers = [walker("A", (-5.0, 0.0), (-0.7, 0.0)), walker("B", (-0.7, 1.2), (0.5, 1.2)),  # B faces away
               walker("C", (5.0, 6.0), (3.0, 6.0))]  # nobody ends near C
    result = generate_crowd(walkers, CrowdParams(greet=True))
    assert result.report["meetings"] == 0 and not result.handshakes
    notes = {w.name: w.note for w in result.walkers}
    assert "face" in notes["A"] and "face" in notes["B"]
    assert "too far" in notes["C"]
    for w, c in zip(walkers, result.clips):
        assert np.linalg.norm(pelvis(c)[-1, :2] - w.points[-1, :2]) < 0.1


def test_walkers_keep_clear_of_obstacles():
    box = footprint("Box", [[2.0, -0.4, 0], [3.0, -0.4, 0], [3.0, 0.15, 0], [2.0, 0.15, 0], [2.5, 0.0, 1.0]])
    walkers = [walker("A", (0.0, 0.3), (6.0, 0.3)), walker("B", (0.0, -1.3), (6.0, -1.3))]
    result = generate_crowd(walkers, CrowdParams(obstacles=(box,)))
    for w, c in zip(walkers, result.clips):
        d, _ = nearest(box, pelvis(c)[:, :2])
        assert d.min() >= RADIUS - 0.05, w.name
        assert skate(c) < SKATE_CM_S
        assert np.linalg.norm(pelvis(c)[-1, :2] - w.points[-1, :2]) <= 1.0
    alone = generate_crowd(walkers, CrowdParams(personal_radius_m=0.0))
    assert nearest(box, pelvis(alone.clips[0])[:, :2])[0].min() < RADIUS - 0.1  # the curve runs that close


def test_walkers_passing_on_a_staircase_step_on_its_treads():
    """Two walkers going up and down the same staircase mesh, head-on, and one crossing its landing:
    they keep their distance and their feet stay planted on the ground the path walk drops them onto."""
    stairs = StairsGround(origin=(0, 0), direction=(1, 0), start=3.0, tread=0.32, riser=0.16, steps_up=5,
                          landing=1.2, steps_down=5)
    walkers = [Walker("Up", SK, RM, np.array([[0, 0, 0], [10, 0, 0.0]]), stairs),
               Walker("Down", SK, RM, np.array([[10, 0.1, 0], [0, 0.1, 0.0]]), stairs),
               Walker("Across", SK, RM, np.array([[5.3, -4, 0], [5.3, 4, 0.0]]), stairs)]
    result = generate_crowd(walkers, CrowdParams())
    assert closest_pelvises(result.clips) >= 2 * RADIUS - 0.05
    for w, c in zip(walkers, result.clips):
        q = contact_quality(SK, RM, SK.fk(c.locations, c.rotations), stairs, 24.0)
        assert q["skate_mean_cm_s"] < SKATE_CM_S, w.name
        assert np.linalg.norm(pelvis(c)[-1, :2] - w.points[-1, :2]) <= 1.0
    up = pelvis(result.clips[0])
    assert up[:, 2].max() - up[0, 2] > 0.6  # it climbed the flight


def test_a_walker_held_up_stops_and_stands_with_planted_feet():
    """A trace that stands still for two seconds halfway is walked as two legs: the walker stops,
    stands (pelvis still, feet planted), and walks on."""
    from procanim_addon.crowd.retime import WalkerWalk, legs_of, walk_legs

    dt = 0.1
    t = np.arange(0, 16, dt)
    s = np.interp(t, [0.4, 5.0, 7.0, 11.6], [0.0, 5.0, 5.0, 10.0])
    xy = np.column_stack([s, np.zeros_like(s)])
    legs = legs_of(xy, s, dt, 1.1)
    assert len(legs) == 2
    ww = WalkerWalk(SK, RM, FlatGround(0.0), PathWalkParams(), np.eye(4), 1.0, lambda q: np.zeros(len(q)), 1.2, 1.1)
    clip, legs = walk_legs(ww, legs, 1)
    assert len(clip.metrics["crowd_stops"]) == 1
    first, last = clip.metrics["crowd_stops"][0]
    assert last - first >= 24  # stood at least a second
    k = np.arange(int(first), int(last) - 12) - 1  # the weight shift before the first step aside (0.5 s)
    assert np.ptp(pelvis(clip)[k, :2], axis=0).max() < 0.001
    assert skate(clip) < SKATE_CM_S
    assert np.all(np.diff(clip.frames) == 1)
    assert abs(pelvis(clip)[-1, 0] - 10.0) < 0.1


@pytest.mark.parametrize("change, words", [
    (dict(personal_radius_m=-0.1), "Personal radius"),
    (dict(variation=1.5), "Variation"),
    (dict(time_step_s=float("nan")), "Plan time step"),
])
def test_bad_settings_are_refused_with_their_name(change, words):
    with pytest.raises(InputError, match=words):
        generate_crowd([walker("A", (0, 0), (3, 0))], CrowdParams(**change))


def test_bad_walkers_are_refused_naming_them():
    with pytest.raises(InputError, match="'B'"):
        generate_crowd([walker("A", (0, 0), (3, 0)), walker("B", (1, 1), (1, 1))])
    with pytest.raises(InputError, match="frame rate"):
        generate_crowd([walker("A", (0, 0), (3, 0)), walker("B", (0, 2), (3, 2), PathWalkParams(fps=30.0))])
    with pytest.raises(InputError, match="twice"):
        generate_crowd([walker("A", (0, 0), (3, 0)), walker("A", (0, 2), (3, 2))])
    tilted = walker("T", (0, 0), (3, 0))
    tilted.world = np.array([[1, 0, 0, 0], [0, 0, -1, 0], [0, 1, 0, 0], [0, 0, 0, 1.0]])
    with pytest.raises(InputError, match="tilted"):
        generate_crowd([tilted])
    with pytest.raises(InputError, match="no walkers"):
        generate_crowd([])


def test_armatures_placed_in_the_scene_meet_in_world_space():
    """Two armatures moved and turned in the scene, their curves in their own spaces: they avoid each
    other where they meet in the world."""
    a = walker("A", (0.0, 0.0), (10.0, 0.0))
    b = walker("B", (0.0, 0.0), (10.0, 0.0))
    b.world = np.array([[-1.0, 0, 0, 10.0], [0, -1.0, 0, 0.05], [0, 0, 1.0, 0], [0, 0, 0, 1.0]])
    result = generate_crowd([a, b], CrowdParams())
    xa = pelvis(result.clips[0])[:, :2]
    xb = pelvis(result.clips[1])[:, :2] @ b.world[:2, :2].T + b.world[:2, 3]
    k = min(len(xa), len(xb))
    assert np.linalg.norm(xa[:k] - xb[:k], axis=1).min() >= 2 * RADIUS - 0.05
