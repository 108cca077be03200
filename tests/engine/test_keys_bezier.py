"""procanim_addon/keys/bezier.py and handles.py on their own: the evaluation of keys and handles by
Blender's arithmetic, checked by its defining properties (that it equals Blender's own
``FCurve.evaluate`` is tests/blender/test_key_reduction_eval.py)."""

from __future__ import annotations

import numpy as np
import pytest

from procanim_addon.curves import hermite
from procanim_addon.keys import HANDLE, INTERPOLATION, CurveKeys
from procanim_addon.keys import plan as plan_module
from procanim_addon.keys.bezier import Keys, evaluate, evaluate_many, solve_cubic
from procanim_addon.keys.handles import aligned, hermite_values, recalc, recalc_many

BEZIER = INTERPOLATION["BEZIER"]


def curve(frames, values, left, right, ipo=BEZIER) -> Keys:
    n = len(frames)
    return Keys(frames, values, left, right, np.full(n, ipo))


def test_solve_cubic_finds_the_root_in_the_unit_interval():
    rng = np.random.default_rng(3)
    roots = rng.uniform(0.0, 1.0, 500)
    others = rng.uniform(2.0, 9.0, (500, 2)) * rng.choice([-1, 1], (500, 2))
    # (t - r)(t - a)(t - b) expanded: a cubic with exactly one root in [0, 1]
    a, b = others[:, 0], others[:, 1]
    c3 = np.ones(500)
    c2 = -(roots + a + b)
    c1 = roots * a + roots * b + a * b
    c0 = -roots * a * b
    t, found = solve_cubic(c0, c1, c2, c3)
    assert found.all()
    assert np.abs(t - roots).max() < 1e-5
    t, found = solve_cubic(np.array([-0.3]), np.array([1.0]), np.array([0.0]), np.array([0.0]))  # a line
    assert found[0] and t[0] == pytest.approx(0.3)
    t, found = solve_cubic(np.array([0.5]), np.array([1.0]), np.array([0.0]), np.array([0.0]))  # root at -0.5
    assert not found[0]



def test_solve_cubic_takes_each_case_where_it_applies_in_one_call():
    """Every case of Blender's solve_cubic in one call, shuffled: each coefficient row gets its own
    case's root (solve_cubic works each case out on the rows it applies to)."""
    cases = [  # (c0, c1, c2, c3), the root in [0, 1] or None
        ((-0.25, 1.0, -0.25, 1.0), 0.25),  # (t - 1/4)(t² + 1): one real root
        ((-0.125, 0.75, -1.5, 1.0), 0.5),  # (t - 1/2)³: the discriminant exactly 0
        ((-0.2 * 3 * 5, 0.2 * 3 + 0.2 * 5 + 15, -(0.2 + 3 + 5), 1.0), 0.2),  # three real roots
        ((0.75, -3.25, 1.0, 0.0), 0.25),  # a quadratic, (t - 1/4)(t - 3)
        ((0.25, -1.0, 1.0, 0.0), 0.5),  # a quadratic's double root
        ((1.0, 0.0, 1.0, 0.0), None),  # a quadratic without a real root
        ((-0.75, 1.0, 0.0, 0.0), 0.75),  # a line
        ((0.0, 0.0, 0.0, 0.0), 0.0),  # zero: any t, Blender takes 0
        ((1.0, 0.0, 0.0, 0.0), None),  # a constant that is never zero
        ((2.0, 1.0, 0.0, 0.0), None),  # a line whose root is -2
    ]
    order = np.random.default_rng(7).permutation(np.repeat(np.arange(len(cases)), 3))
    coefficients = np.array([cases[i][0] for i in order]).T
    t, found = solve_cubic(*coefficients)
    for k, i in enumerate(order):
        expected = cases[i][1]
        assert found[k] == (expected is not None), cases[i]
        if expected is not None:
            assert t[k] == pytest.approx(expected, abs=1e-6), cases[i]
            alone, _ = solve_cubic(*(np.array([c]) for c in cases[i][0]))
            assert t[k] == alone[0]

def test_keys_hold_their_values_and_the_ends_are_constant():
    x = np.array([1.0, 4.0, 9.0])
    y = np.array([0.0, 2.0, -1.0])
    left = np.stack([x - 1, y - 0.5], axis=-1)
    right = np.stack([x + 1, y + 0.5], axis=-1)
    keys = curve(x, y, left, right)
    assert np.allclose(evaluate(keys, x), y)
    assert np.allclose(evaluate(keys, x + 5e-5), y)  # within Blender's search threshold: the key
    assert np.allclose(evaluate(keys, [-10.0, 0.0, 9.5, 100.0]), [0.0, 0.0, -1.0, -1.0])


def test_handles_at_thirds_make_the_hermite_curve():
    rng = np.random.default_rng(5)
    x = np.cumsum(rng.integers(1, 9, 12)).astype(float)
    y = rng.normal(size=12)
    m = rng.normal(size=12)
    left, right, lt, rt = aligned(x, y, m, m)
    assert (lt == HANDLE["ALIGNED"]).all() and (rt == HANDLE["ALIGNED"]).all()
    t = np.linspace(x[0], x[-1], 997)
    got = evaluate(curve(x, y, left, right), t)
    want = hermite_values(x, y[:, None], m[:, None], m[:, None], t)[:, 0]
    assert np.abs(got - want).max() < 1e-5 * (1 + np.abs(y).max())


def test_linear_and_constant_segments():
    x = np.array([0.0, 10.0, 20.0])
    y = np.array([0.0, 5.0, 1.0])
    keys = Keys(x, y, np.stack([x, y], -1), np.stack([x, y], -1),
                [INTERPOLATION["LINEAR"], INTERPOLATION["CONSTANT"], BEZIER])
    assert evaluate(keys, [2.5, 7.5])[0] == pytest.approx(1.25)
    assert evaluate(keys, [12.0, 19.0]).tolist() == [5.0, 5.0]


def test_handles_reaching_past_the_next_key_are_shortened():
    x = np.array([0.0, 3.0])
    y = np.array([0.0, 1.0])
    far = curve(x, y, np.stack([x - 1, y], -1), np.array([[9.0, 3.0], [4.0, 1.0]]))
    t = np.linspace(0.1, 2.9, 50)
    v = evaluate(far, t)
    assert np.all(np.isfinite(v)) and np.all(np.diff(t) > 0)  # still a function of the frame


def test_evaluate_many_is_evaluate_of_each():
    """Curves of 0 to 9 keys, evaluated together (their keys laid end to end) and one by one (a search
    of each curve's own keys): the same values bit for bit, before, on, next to and between keys."""
    rng = np.random.default_rng(9)
    curves = []
    for size in (7, 0, 1, 2, 9, 7, 3):
        x = np.cumsum(rng.uniform(0.5, 4, size))
        y = rng.normal(size=size)
        left = np.stack([x - rng.uniform(0.1, 1, size), y + rng.normal(size=size)], -1)
        right = np.stack([x + rng.uniform(0.1, 1, size), y + rng.normal(size=size)], -1)
        curves.append(Keys(x, y, left, right, rng.choice([0, 1, 2, 2], size)))
    keys_at = np.concatenate([k.frames for k in curves]).astype(float)
    t = np.sort(np.concatenate([np.linspace(-1, 30, 400), keys_at, keys_at + 5e-5, keys_at - 2e-4]))
    many = evaluate_many(curves, t)
    assert many.shape == (len(t), len(curves))
    for c, keys in enumerate(curves):
        assert np.array_equal(many[:, c], evaluate(keys, t))
    assert np.all(many[:, 1] == 0.0) and np.all(many[:, 2] == curves[2].values[0])


def test_auto_clamped_handles_are_flat_at_extremes_and_ends():
    x = np.array([0.0, 2.0, 5.0, 6.0, 9.0])
    y = np.array([0.0, 3.0, 1.0, 2.0, 2.5])
    auto = np.full(5, HANDLE["AUTO_CLAMPED"])
    for smoothing in ("NONE", "CONT_ACCEL"):
        pts = np.stack([x, y], -1)
        left, right = recalc(x, y, pts, pts, auto, auto, smoothing)
        assert left[0, 1] == right[0, 1] == y[0] and left[-1, 1] == right[-1, 1] == np.float32(y[-1])
        assert left[1, 1] == right[1, 1] == y[1]  # a maximum
        assert left[2, 1] == right[2, 1] == y[2]  # a minimum
        assert left[3, 1] < y[3] < right[3, 1]  # rising through key 3: a slope of its own


def test_aligned_handles_are_made_collinear_and_free_ones_are_kept():
    x = np.array([0.0, 4.0, 8.0])
    y = np.array([0.0, 1.0, 0.0])
    left = np.array([[-1.0, 0.0], [3.0, 0.0], [7.0, 0.5]])
    right = np.array([[1.0, 0.0], [6.0, 1.0], [9.0, 0.0]])
    al = np.full(3, HANDLE["ALIGNED"])
    new_left, new_right = recalc(x, y, left, right, al, al, "CONT_ACCEL")
    d_left = new_left[1] - [4.0, 1.0]
    d_right = new_right[1] - [4.0, 1.0]
    assert abs(d_left[0] * d_right[1] - d_left[1] * d_right[0]) < 1e-6  # collinear through the key
    assert np.linalg.norm(d_right) == pytest.approx(2.0, rel=1e-6)  # each keeps its length
    free = np.full(3, HANDLE["FREE"])
    same_left, same_right = recalc(x, y, left, right, free, free, "CONT_ACCEL")
    assert np.array_equal(same_left, left.astype(np.float32)) and np.array_equal(same_right, right.astype(np.float32))


def test_curve_keys_give_foreach_set_arrays():
    x = np.array([1.0, 5.0])
    y = np.array([0.5, 1.5])
    left, right, lt, rt = aligned(x, y, np.zeros(2), np.zeros(2))
    c = CurveKeys('pose.bones["a"].location', 1, "a", np.stack([x, y], -1), left, right, lt, rt, [2, 2], [1, 0])
    arrays = c.arrays()
    assert arrays["co"].dtype == np.float32 and arrays["co"].tolist() == [1.0, 0.5, 5.0, 1.5]
    assert arrays["type"].tolist() == [1, 0] and c.names("type") == ["EXTREME", "KEYFRAME"]
    assert c.names("handle_left_type") == ["ALIGNED", "ALIGNED"]


def test_hermite_values_match_the_curves_module():
    x = np.array([0.0, 3.0])
    y = np.array([[1.0], [2.0]])
    m = np.array([[0.5], [-0.5]])
    u = np.linspace(0, 1, 7)
    want = hermite(1.0, 3.0 * 0.5, 2.0, 3.0 * -0.5, u)
    assert np.allclose(hermite_values(x, y, m, m, 3.0 * u)[:, 0], want)


def test_the_handles_of_several_curves_recalculated_at_once_are_each_curves_own():
    """recalc_many (the planner's playback of every curve in one pass) gives each curve the handles
    recalc gives it alone: at once for free and aligned handles, one by one when a key is automatic."""
    rng = np.random.default_rng(3)
    curves = []
    for k, n in enumerate((2, 5, 9, 17)):
        frames = np.sort(rng.choice(np.arange(1, 60), size=n, replace=False)).astype(float)
        values = rng.normal(0.0, 1.0, n)
        left, right, lt, rt = aligned(frames, values, rng.normal(0, 0.3, n), rng.normal(0, 0.3, n))
        left[k % n, 0] += 3.0  # a handle past its key in time: pulled back to the key's side
        lt[-1], rt[-1] = HANDLE["ALIGNED"], HANDLE["ALIGNED"]
        right[-1, 1] += 0.5  # the last key's handles out of line: aligned again
        curves.append((frames, values, left, right, lt, rt, "CONT_ACCEL"))
    for mixed in (False, True):
        if mixed:
            frames, values, left, right, lt, rt, smoothing = curves[1]
            auto = np.full(len(frames), HANDLE["AUTO_CLAMPED"], dtype=np.int32)
            curves[1] = (frames, values, left, right, auto, auto, smoothing)
        together = recalc_many(curves)
        for curve, (left, right) in zip(curves, together):
            alone_left, alone_right = recalc(*curve)
            assert np.array_equal(left, alone_left) and np.array_equal(right, alone_right)


def _group(*curves) -> tuple:
    """Curves of one key group (the same key frames) as the player holds them (plan._held)."""
    return (curves[0].frames, np.stack([c.values for c in curves]), np.stack([c.handle_left for c in curves]),
            np.stack([c.handle_right for c in curves]))


def test_a_curve_changes_only_on_the_frames_of_its_changed_segments():
    """plan._changed (bezier.frames_of_changes): keys moved, added and removed on one curve of a group
    of two — the new curves evaluate as the old ones everywhere outside the frames it marks, and the
    marks stay near the changes."""
    rng = np.random.default_rng(11)
    t = np.arange(0.0, 200.0)
    for _ in range(20):
        x = np.unique(np.concatenate([[0.0, 199.0], rng.choice(np.arange(1.0, 199.0), 30, replace=False)]))
        y = rng.normal(size=len(x))
        m = rng.normal(size=len(x))
        left, right, _, _ = aligned(x, y, m, m)
        old = curve(x, y, left, right)
        other = curve(x, -y, *aligned(x, -y, m, m)[:2])  # the group's other curve (the same key frames)
        x2, y2, m2 = x.copy(), y.copy(), m.copy()
        k = rng.integers(1, len(x) - 1)
        change = rng.integers(4)
        if change == 0:  # a key's value and slope
            y2[k] += 0.3
            m2[k] -= 0.2
        elif change == 3:  # its slope alone: only its handles tell
            m2[k] += 0.4
        elif change == 1:  # a key removed
            x2, y2, m2 = np.delete(x2, k), np.delete(y2, k), np.delete(m2, k)
        else:  # a key added between two
            at = x[k] + 1.0 if x[k + 1] - x[k] > 1.0 else x[k] - 1.0
            if at in x:
                continue
            x2, y2, m2 = (np.insert(v, np.searchsorted(x, at), w) for v, w in ((x, at), (y, 0.5), (m, 0.0)))
        left2, right2, _, _ = aligned(x2, y2, m2, m2)
        new = curve(x2, y2, left2, right2)
        # a key's value or slope: the other curve unchanged; a key added or removed: on both curves
        other_new = other if len(x2) == len(x) else curve(x2, -y2, *aligned(x2, -y2, m2, m2)[:2])
        marked = plan_module._changed(_group(old, other), _group(new, other_new), t.astype(np.float32))
        for a, b in ((old, new), (other, other_new)):
            assert np.array_equal(evaluate(a, t)[~marked], evaluate(b, t)[~marked])
        assert marked.any() and marked.sum() < 0.5 * len(t)
    assert not plan_module._changed(_group(old, other), _group(old, other), t.astype(np.float32)).any()
