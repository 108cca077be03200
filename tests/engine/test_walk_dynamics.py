"""The dynamics of Tsutsuguchi et al. (2000): reaction forces, the COM solved by shooting, rotation on
curves, arm pendulum."""

import numpy as np
import pytest

from procanim_addon.ground import FlatGround
from procanim_addon.walk import forces as fr
from procanim_addon.walk.arms import arm_pendulum_constants, solve_swings
from procanim_addon.walk.com import ComTargets, solve_com
from procanim_addon.walk.params import PathWalkParams
from procanim_addon.walk.path import build_path
from procanim_addon.walk.steps import StepRules, divide_path
from procanim_addon.walk.timing import make_timeline
from procanim_addon.walk.turning import body_yaw, turning_force


def _peaks(y):
    i = np.nonzero((y[1:-1] > y[:-2]) & (y[1:-1] >= y[2:]))[0] + 1
    return i


def test_vertical_force_of_one_foot_has_two_peaks_and_a_valley():
    p = PathWalkParams()
    tau = np.linspace(0, 1, 2001)
    f = fr.harmonics(tau, fr.vertical_coeffs(p, "plane"))  # s_y = 1: the measured curve
    peaks = _peaks(f)
    assert len(peaks) == 2
    valley = f[peaks[0]:peaks[1]].min()
    # paper: two peaks of 1.1–1.45 body weight, a valley near 0.9
    assert 1.05 < f[peaks].min() and f[peaks].max() < 1.5
    assert 0.75 < valley < 1.0
    assert f[0] == pytest.approx(0.0, abs=1e-12) and f[-1] == pytest.approx(0.0, abs=1e-12)


def test_f_v_raises_the_first_peak_against_the_second():
    """a_y2 = f_v multiplies sin 2πτ: positive in the first half of the stance, negative in the second."""
    p = PathWalkParams()
    tau = np.linspace(0, 1, 2001)

    def peak_ratio(mode):
        f = fr.harmonics(tau, fr.vertical_coeffs(p, mode))
        i = _peaks(f)
        return f[i[0]] / f[i[-1]]

    up, plane, down = peak_ratio("up"), peak_ratio("plane"), peak_ratio("down")
    assert up == pytest.approx(1.0, abs=0.02)  # f_v = 0: symmetric
    assert up < plane < down
    # the personality offset δ_y2 acts exactly like f_v
    p2 = PathWalkParams(delta_y=(0.0, 0.15, 0.0))
    f = fr.harmonics(tau, fr.vertical_coeffs(p2, "plane"))
    i = _peaks(f)
    assert f[i[0]] / f[i[-1]] == pytest.approx(down, rel=1e-9)


def test_lateral_force_pushes_toward_the_inside_over_the_stance():
    p = PathWalkParams()
    tau = np.linspace(0, 1, 1001)
    f = fr.harmonics(tau, fr.lateral_coeffs(p))
    assert f[500] > 0.05  # mid-stance: toward the inside of the foot
    assert np.mean(f) > 0
    assert fr.harmonic_integral(fr.lateral_coeffs(p)) > 0


def _plane_walk(params=None, length=6.0):
    p = params or PathWalkParams()
    g = FlatGround()
    path = build_path(np.array([[0, 0, 0], [0, -length, 0.0]]), g)
    st = divide_path(path, StepRules(0.65, 0.2, 0.04, 0.2, 0.23), ground=g)
    tl = make_timeline(st.w, p.cadence_spm, 0.0, p.double_support, 0.4, 0.65)
    K = len(st)
    com = solve_com(tl, st, p, ComTargets(0.9, np.full(K, 0.87), 0.9, path.length))
    return st, tl, com


def test_com_position_and_velocity_are_continuous_at_every_step_boundary():
    st, tl, com = _plane_walk()
    n = len(st) - 1
    for name, q in (("progression", com.s), ("height", com.y), ("lateral", com.z)):
        dt = np.diff(com.t)
        v = np.diff(q) / dt
        for i in range(1, n + 1):
            j = int(np.searchsorted(com.t, tl.heel_strike[i]))
            j = min(max(j, 2), len(com.t) - 3)
            # no jump in position (beyond what the velocity moves it) and none in velocity
            moved = 0.5 * (v[j - 2] + v[j + 1]) * (com.t[j + 1] - com.t[j - 1])
            assert abs(q[j + 1] - q[j - 1] - moved) < 0.002, f"{name} position jumps at step {i}"
            assert abs(v[j + 1] - v[j - 2]) < 0.2, f"{name} velocity jumps at step {i}"


def test_com_passes_midway_between_the_feet_at_heel_strike():
    st, tl, com = _plane_walk()
    n = len(st) - 1
    s, y, _ = com.at(tl.heel_strike[2:n])
    mid = 0.5 * (st.s[1:n - 1] + st.s[2:n])
    assert np.allclose(s, mid, atol=0.01)
    assert np.allclose(y, 0.87, atol=0.005)


def test_com_moves_forward_and_rises_2_to_6_cm_between_heel_strikes_on_flat_ground():
    st, tl, com = _plane_walk()
    n = len(st) - 1
    walking = (com.t > tl.heel_strike[1]) & (com.t < tl.heel_strike[n])
    assert np.all(np.diff(com.s[walking]) > -1e-6)
    travel = []
    for i in range(2, n - 1):
        m = (com.t >= tl.heel_strike[i]) & (com.t < tl.heel_strike[i + 1])
        travel.append(np.ptp(com.y[m]))
    assert 0.02 < np.mean(travel) < 0.06


def test_total_vertical_force_in_walking_shows_the_double_peak():
    st, tl, com = _plane_walk()
    n = len(st) - 1
    i = n // 2
    m = (com.t >= tl.heel_strike[i]) & (com.t <= tl.heel_strike[i + 2])
    f = com.vertical_force[m]
    assert f.max() > 1.05 and f.min() < 0.95


def test_more_f_v_means_a_stronger_first_half_of_the_step():
    def first_peak(fv):
        p = PathWalkParams()
        p.forces.f_v = {"plane": fv, "up": 0.0, "down": 0.25}
        st, tl, com = _plane_walk(p)
        k = len(st) // 2
        m = (com.t >= tl.heel_strike[k]) & (com.t <= tl.heel_strike[k] + 0.5 * tl.T[k])
        return com.force_feet[m, k].max() / com.scale_y[k]

    assert first_peak(0.25) > first_peak(0.1) > first_peak(0.0)


def test_body_turns_by_alpha_each_step_and_stops_turning_at_its_boundaries():
    hs = np.array([0.5, 0.5, 1.1, 1.7, 2.3])
    T = np.full(5, 0.6)
    Tds = 0.25 * T
    alpha = np.array([0.0, 0.3, -0.2, 0.1, 0.0])
    t = np.linspace(0, 3, 3001)
    psi = body_yaw(t, hs, T, Tds, 1.0, alpha)
    for i, expect in ((2, 1.3), (3, 1.1), (4, 1.2)):
        j = int(np.searchsorted(t, hs[i]))
        assert psi[j] == pytest.approx(expect, abs=1e-3)
        assert abs(psi[j + 1] - psi[j - 1]) / (t[j + 1] - t[j - 1]) < 0.01  # Ψ̇ = 0 (rad/s)
    # the force is a step function: zero in double support, on only in single support
    f = turning_force(t, hs, T, Tds, alpha)
    in_ds = (t >= hs[1]) & (t < hs[1] + Tds[1])
    assert np.all(f[in_ds] == 0.0)
    assert np.unique(np.round(np.abs(f[(t > hs[1]) & (t < hs[2]) & (f != 0)]), 9)).size == 1


def test_arm_pendulum_swings_between_the_boundary_angles_at_rest():
    k, gamma = arm_pendulum_constants(0.3, 0.27, 0.1, np.radians(20))
    assert 0 < gamma < np.radians(20)  # the bent elbow puts G ahead of the upper arm
    back, fwd = -np.radians(9), np.radians(30)
    th, om, u = solve_swings(np.array([back, fwd]) + gamma, np.array([fwd, back]) + gamma, np.array([0.6, 0.6]),
                             0.625, k)
    assert th[:, -1] - gamma == pytest.approx([fwd, back], abs=1e-4)
    assert np.abs(om[:, [0, -1]]).max() < 1e-3
    # driven by a step at T_0: more forward torque before it on the forward swing (accelerate,
    # then brake), less before it on the backward swing
    assert u[0, 0] > u[0, 1] and u[1, 0] < u[1, 1]
    # a forward swing never overshoots its target by more than a couple of degrees
    assert th[0].max() - gamma < fwd + np.radians(3)


def test_personality_offsets_change_the_com_but_not_its_boundaries():
    st, tl, plain = _plane_walk()
    _, _, bouncy = _plane_walk(PathWalkParams(delta_y=(0.0, 0.3, 0.0), delta_x=(0.05, 0.0, 0.0)))
    n = len(st) - 1
    walking = (plain.t > tl.heel_strike[2]) & (plain.t < tl.heel_strike[n - 1])
    # a different body motion …
    assert np.max(np.abs(plain.y[walking] - bouncy.y[walking])) > 0.003
    # … through the same boundary positions (hip midway between the feet at every heel strike)
    s_a, y_a, _ = plain.at(tl.heel_strike[2:n])
    s_b, y_b, _ = bouncy.at(tl.heel_strike[2:n])
    assert np.allclose(s_a, s_b, atol=0.01) and np.allclose(y_a, y_b, atol=0.005)
