"""Path division (Tsutsuguchi et al. 2000, Figures 17–18):
footsteps along straight, curved and stair paths; refusals a user understands."""

import numpy as np
import pytest

from procanim_addon.errors import InputError
from procanim_addon.ground import FlatGround, StairsGround
from procanim_addon.walk.path import build_path
from procanim_addon.walk.steps import StepRules, divide_path

HEEL, TIP, HIP_W, MAX_H = 0.04, 0.20, 0.20, 0.23


def divide(points, ground, stride=0.65, **kw):
    path = build_path(np.asarray(points, float), ground)
    return path, divide_path(path, StepRules(stride, HIP_W, HEEL, TIP, MAX_H, **kw), ground=ground)


def test_straight_path_steps_alternate_sides_at_the_stride_and_start_and_end_standing():
    path, st = divide([[0, 0, 0], [0, -6, 0]], FlatGround())
    # start and end: two feet side by side
    assert st.s[0] == st.s[1] == 0.0 and st.s[-1] == st.s[-2] == pytest.approx(6.0)
    assert st.side[0] == -st.side[1] and st.side[-1] == -st.side[-2]
    # alternating sides all along
    assert np.all(st.side[1:] == -st.side[:-1])
    # steps of at most a stride, evenly spaced between the standing ends
    gaps = np.diff(st.s[1:-1])
    assert np.all(gaps <= 0.65 + 1e-9)
    assert np.ptp(gaps) < 1e-9
    assert gaps[0] > 0.55
    # feet half a hip width either side of the path (the path runs along −y: left is +x)
    assert np.allclose(st.pos[:, 0], st.side * HIP_W / 2)
    assert set(st.mode_v) == {"plane"} and set(st.mode_h) == {"straight"}


def test_curved_path_turns_left_then_right_and_feet_stay_beside_it():
    y = np.linspace(0, -8, 200)
    x = 1.2 * (1 - np.cos(2 * np.pi * (-y) / 8))  # an S: starts heading −y, bends to +x and back
    path, st = divide(np.stack([x, y, 0 * y], -1), FlatGround())
    # every foot stands half a hip width from the (smoothed) path
    nearest = np.array([np.min(np.linalg.norm(path.points[:, :2] - p[:2], axis=-1)) for p in st.pos])
    assert np.all(np.abs(nearest - HIP_W / 2) < 0.01)
    # the turn angles add up to the path's change of heading, and both turn directions occur
    total = np.sum(st.alpha)
    assert total == pytest.approx(path.heading_at(path.length) - path.heading_at(0.0), abs=0.05)
    assert "left" in st.mode_h and "right" in st.mode_h
    # heading −y (angle −90°) turning toward +x is a left turn (counter-clockwise seen from above)
    first_turn = next(m for m in st.mode_h if m != "straight")
    assert first_turn == "left"


def _assert_on_treads(st, stairs, foot_margin=0.0):
    """Every foot (heel … toe tip along the staircase) lies on one flat run between risers."""
    d = stairs.direction
    for p in st.pos:
        s = float(np.dot(p[:2] - stairs.origin, d))
        heel, tip = s - HEEL, s + TIP
        between = (stairs.edges > heel - foot_margin) & (stairs.edges < tip + foot_margin)
        assert not np.any(between), f"foot at {s:.3f} m straddles a riser at {stairs.edges[between]}"


def test_stairs_up_one_step_per_tread_every_foot_fully_on_a_tread():
    stairs = StairsGround(start=1.5, tread=0.30, riser=0.16, steps_up=5, landing=1.2, steps_down=0)
    path, st = divide([[0, 0, 0], [0, -4.5, 0]], stairs)
    _assert_on_treads(st, stairs, foot_margin=0.009)
    on_flight = [k for k in range(len(st)) if 1.5 < -st.pos[k, 1] < 1.5 + 4 * 0.30]
    levels = st.pos[on_flight, 2]
    # one foot per tread going up: consecutive feet one riser apart
    assert np.allclose(np.diff(levels), 0.16)
    assert "up" in st.mode_v and "down" not in st.mode_v


def test_stairs_down_every_foot_fully_on_a_tread():
    stairs = StairsGround(start=1.2, tread=0.30, riser=0.16, steps_up=1, landing=1.5, steps_down=5)
    path, st = divide([[0, 0, 0], [0, -5.5, 0]], stairs)
    _assert_on_treads(st, stairs, foot_margin=0.009)
    assert "down" in st.mode_v
    assert st.on_stairs.any()


def test_low_risers_take_two_treads_per_step():
    stairs = StairsGround(start=1.0, tread=0.30, riser=0.07, steps_up=8, landing=1.5, steps_down=0)
    _, st = divide([[0, 0, 0], [0, -5.0, 0]], stairs)
    flight = [k for k in range(2, len(st) - 2) if 1.0 < -st.pos[k, 1] < 1.0 + 7 * 0.3]
    rises = np.round(np.diff(st.pos[flight, 2]) / 0.07).astype(int)
    assert 2 in rises.tolist()


def test_zero_length_path_is_refused():
    with pytest.raises(InputError, match="no horizontal length"):
        build_path(np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 2.0]]), None)


def test_ladder_steep_path_is_refused():
    ramp = np.array([[0, 0, 0], [0, -1.0, 0], [0, -1.5, 2.5], [0, -3, 2.5]], float)
    with pytest.raises(InputError, match="too steep"):
        divide(ramp, None)


def test_riser_higher_than_a_step_is_refused():
    wall = StairsGround(start=1.0, tread=0.3, riser=0.45, steps_up=1, landing=3.0, steps_down=0)
    with pytest.raises(InputError, match="higher than this character can climb"):
        divide([[0, 0, 0], [0, -3, 0]], wall)


def test_tread_shorter_than_the_foot_is_refused():
    narrow = StairsGround(start=1.0, tread=0.15, riser=0.12, steps_up=4, landing=2.0, steps_down=0)
    with pytest.raises(InputError, match="shorter than the character's foot"):
        divide([[0, 0, 0], [0, -4, 0]], narrow)


@pytest.mark.parametrize("angle_deg", [20.0, 35.0])
def test_stairs_crossed_at_an_angle_every_sole_lies_on_one_tread(angle_deg):
    a = np.radians(angle_deg)
    stairs = StairsGround(direction=(np.sin(a), -np.cos(a)), start=1.5, tread=0.30, riser=0.16, steps_up=4,
                          landing=1.2, steps_down=4)
    path, st = divide([[0, 0, 0], [0, -6.5, 0]], stairs)
    assert st.on_stairs.any()
    for k in range(len(st)):
        # the sole of foot k: heel to toe tip along its heading, a few cm to either side
        fwd = np.array([np.cos(st.heading[k]), np.sin(st.heading[k])])
        lat = np.array([-fwd[1], fwd[0]])
        pts = np.array([st.pos[k, :2] + fwd * u + lat * v
                        for u in np.linspace(-HEEL, TIP, 25) for v in (-0.035, 0.0, 0.035)])
        z, _, _ = stairs.height(pts)
        assert np.ptp(z) < 1e-9, f"footstep {k} straddles a riser"
        assert z[0] == pytest.approx(st.pos[k, 2])


def test_a_curve_drawn_as_stairs_keeps_its_steps_without_a_ground():
    """No ground object: the curve's own height is the ground; its vertical segments stay risers."""
    pts, y, z = [(0, 0, 0), (0, -1.5, 0)], -1.5, 0.0
    for _ in range(4):
        z += 0.16
        pts.append((0, y, z))
        y -= 0.30
        pts.append((0, y, z))
    pts.append((0, y - 1.5, z))
    path = build_path(np.array(pts, float), None)
    assert np.interp(1.49, path.s, path.points[:, 2]) == pytest.approx(0.0, abs=1e-3)
    assert np.interp(1.51, path.s, path.points[:, 2]) == pytest.approx(0.16, abs=1e-3)
    from procanim_addon.walk.path import PathHeightGround

    ground = PathHeightGround(path)
    st = divide_path(path, StepRules(0.65, HIP_W, HEEL, TIP, MAX_H), ground=ground)
    on_flight = (st.s > 1.5) & (st.s < 1.5 + 3 * 0.3)
    assert np.allclose(np.diff(st.pos[on_flight, 2]), 0.16)  # one foot per tread
    assert set(np.round(st.pos[on_flight, 2] / 0.16).astype(int)) <= {1, 2, 3}


@pytest.mark.parametrize("radius", [0.6, 2.0])
def test_the_path_height_ground_takes_the_height_of_the_nearest_sample(radius):
    """Its grid search gives what a search over every sample gives (ties to the lower index), on a
    spiral ramp that passes over itself: points near the path, far from it, and on its samples."""
    from procanim_addon.walk.path import PathHeightGround

    t = np.linspace(0, 6 * np.pi, 60)
    path = build_path(np.stack([radius * np.cos(t), radius * np.sin(t), 0.25 * t], -1), None)
    rng = np.random.default_rng(7)
    near = path.points[rng.integers(0, len(path.points), 1500), :2] + rng.normal(0, 0.15, (1500, 2))
    far = rng.uniform(-3 * radius - 2, 3 * radius + 2, (300, 2))
    xy = np.concatenate([near, far, path.points[::97, :2]])
    z, normal, hit = PathHeightGround(path).height(xy)
    d = np.sum((xy[:, None, :] - path.points[None, :, :2]) ** 2, axis=-1)
    nearest = np.argmin(d, axis=1)
    np.testing.assert_array_equal(z, path.points[nearest, 2])
    np.testing.assert_array_equal(normal, PathHeightGround(path).normals[nearest])  # its slope there
    assert hit.all() and np.all(normal[:, 2] < 1.0) and np.allclose(np.linalg.norm(normal, axis=-1), 1.0)
