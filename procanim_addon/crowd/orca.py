"""Optimal reciprocal collision avoidance (ORCA) in the plane.

J. van den Berg, S. J. Guy, M. Lin, D. Manocha, "Reciprocal n-body collision avoidance", Robotics
Research (ISRR 2009), Springer Tracts in Advanced Robotics 70 (2011) 3–19. Symbols are the paper's:

* VO^τ_{A|B}: the velocities of A relative to B that collide within τ — the cone from the origin
  tangent to the disc D(p, r), p = p_B − p_A, r = r_A + r_B, cut off by D(p/τ, r/τ) (§4).
* u: the smallest change of the relative velocity v_A − v_B that leaves VO^τ_{A|B}, n the outward
  normal of its boundary there; A takes its share of u (½ with another agent that avoids too, 1
  against one that does not move):  ORCA^τ_{A|B} = {v | (v − (v_A + share·u))·n ≥ 0}  (eq. 6).
* A new velocity: the one nearest the preferred velocity within every half-plane and the speed
  limit (linear program 2, §5.2); where the half-planes leave nothing, the one that violates them
  least (linear program 3, §5.3: the largest violation made smallest), static obstacles kept hard.
* Agents already overlapping avoid within one time step Δt instead of τ (§5.1).

Half-planes are ``(q, n)``: a point on the boundary line and the inward normal, {v | (v − q)·n ≥ 0}.
The half-planes of many pairs are computed at once (numpy); each agent's linear program is small
(its nearest neighbours) and solved in plain Python floats.
"""

from __future__ import annotations

import math

import numpy as np

EPS = 1e-9


def agent_halfplanes(p, v, r, share, tau: float, dt: float):
    """ORCA half-planes of agent A for pairs (A, B), all at once.

    p: (P, 2) p_B − p_A (m); v: (P, 2) v_A − v_B (m/s); r: (P,) r_A + r_B (m); share: (P,) A's
    share of u (½ reciprocal, 1 when B does not avoid); tau: time horizon τ (s); dt: the time step
    Δt used for pairs already overlapping (s).
    Returns (u (P, 2), n (P, 2)); the half-plane is {v' | (v' − (v_A + share·u))·n ≥ 0}.
    """
    p = np.asarray(p, float)
    v = np.asarray(v, float)
    r = np.asarray(r, float)
    dist2 = np.einsum("ij,ij->i", p, p)
    r2 = r * r
    apart = dist2 > r2
    # cut-off disc D(p/τ, r/τ) apart, D(p/Δt, r/Δt) when already overlapping
    horizon = np.where(apart, tau, dt)
    w = v - p / horizon[:, None]
    w_len = np.sqrt(np.einsum("ij,ij->i", w, w))
    w_dot_p = np.einsum("ij,ij->i", w, p)
    on_cutoff = ~apart | ((w_dot_p < 0) & (w_dot_p * w_dot_p > r2 * w_len * w_len))
    w_unit = w / np.maximum(w_len, EPS)[:, None]
    u = (r / horizon - w_len)[:, None] * w_unit
    n = w_unit.copy()
    # the legs: tangents from the origin to D(p, r), rotated ±α from p (sin α = r/|p|)
    legs = ~on_cutoff
    if np.any(legs):
        pl, vl, rl = p[legs], v[legs], r[legs]
        d2 = dist2[legs]
        leg = np.sqrt(np.maximum(d2 - rl * rl, 0.0))
        left = (pl[:, 0] * w[legs, 1] - pl[:, 1] * w[legs, 0]) > 0
        sgn = np.where(left, 1.0, -1.0)
        d = np.stack([pl[:, 0] * leg - sgn * pl[:, 1] * rl, sgn * pl[:, 0] * rl + pl[:, 1] * leg], axis=-1)
        d /= d2[:, None]
        proj = np.einsum("ij,ij->i", vl, d)
        u[legs] = proj[:, None] * d - vl
        # outward: to the left of the left leg, to the right of the right leg
        n[legs] = np.stack([-sgn * d[:, 1], sgn * d[:, 0]], axis=-1)
    return u, n


def clear_within(p, v, r, tau: float) -> np.ndarray:
    """(P,) True where agents p apart (p: (P, 2) p_B − p_A, m) moving at relative velocity
    v = v_A − v_B (m/s) stay more than r (m) apart for the next τ seconds (v outside the velocity
    obstacle VO^τ_{A|B}); False for pairs already closer than r."""
    p, v, r = np.asarray(p, float), np.asarray(v, float), np.asarray(r, float)
    vv = np.einsum("ij,ij->i", v, v)
    t = np.clip(np.einsum("ij,ij->i", p, v) / np.maximum(vv, EPS), 0.0, tau)
    gap = p - v * t[:, None]
    return np.einsum("ij,ij->i", gap, gap) > r * r


def _lp1(lines: list, i: int, opt: tuple, v_max: float, direction: bool):
    """Linear program 1: the best point on line ``i`` within the disc |v| ≤ v_max and lines 0 … i−1;
    None when there is none. ``opt``: the preferred velocity, or (``direction``) the direction to
    go as far as possible in."""
    qx, qy, nx, ny = lines[i]
    dx, dy = -ny, nx  # along the line
    dot = qx * dx + qy * dy
    disc = dot * dot + v_max * v_max - (qx * qx + qy * qy)
    if disc < 0.0:
        return None
    root = math.sqrt(disc)
    t_lo, t_hi = -dot - root, -dot + root
    for j in range(i):
        ax, ay, mx, my = lines[j]
        denom = dx * mx + dy * my
        numer = (ax - qx) * mx + (ay - qy) * my  # the line point at t is inside j when t·denom ≥ numer
        if abs(denom) <= EPS:
            if numer > EPS:
                return None
            continue
        t = numer / denom
        if denom > 0.0:
            t_lo = max(t_lo, t)
        else:
            t_hi = min(t_hi, t)
        if t_lo > t_hi:
            return None
    if direction:
        t = t_hi if opt[0] * dx + opt[1] * dy > 0.0 else t_lo
    else:
        t = min(max((opt[0] - qx) * dx + (opt[1] - qy) * dy, t_lo), t_hi)
    return qx + t * dx, qy + t * dy


def _lp2(lines: list, opt: tuple, v_max: float, direction: bool = False):
    """Linear program 2 (incremental, Seidel's order: the lines as given): (index of the first line
    that leaves nothing, or len(lines); the velocity so far)."""
    if direction:
        vx, vy = opt[0] * v_max, opt[1] * v_max
    else:
        vx, vy = opt
        speed = math.hypot(vx, vy)
        if speed > v_max:
            vx, vy = vx * v_max / speed, vy * v_max / speed
    for i, (qx, qy, nx, ny) in enumerate(lines):
        if (vx - qx) * nx + (vy - qy) * ny < -EPS:
            best = _lp1(lines, i, opt, v_max, direction)
            if best is None:
                return i, (vx, vy)
            vx, vy = best
    return len(lines), (vx, vy)


def _lp3(lines: list, hard: int, start: int, v: tuple, v_max: float) -> tuple:
    """Linear program 3: the velocity whose largest violation of lines ``hard`` … is smallest, the
    first ``hard`` lines (static obstacles) kept. For each line i violated more than the violation
    reached so far, the lines before it are replaced by those where their violation equals i's, and
    the velocity goes as far along i's normal as they allow."""
    worst = 0.0
    vx, vy = v
    for i in range(start, len(lines)):
        qx, qy, nx, ny = lines[i]
        if nx * (qx - vx) + ny * (qy - vy) <= worst + EPS:
            continue
        projected = list(lines[:hard])
        for j in range(hard, i):
            ax, ay, mx, my = lines[j]
            det = nx * my - ny * mx
            if abs(det) <= EPS:
                if nx * mx + ny * my > 0.0:
                    continue  # parallel, same side: one of the two always violated more
                px, py = 0.5 * (qx + ax), 0.5 * (qy + ay)
            else:
                # where line i meets line j (both violated by 0)
                t = ((ax - qx) * mx + (ay - qy) * my) / det
                px, py = qx - t * ny, qy + t * nx
            ex, ey = mx - nx, my - ny
            norm = math.hypot(ex, ey)
            projected.append((px, py, ex / norm, ey / norm))
        end, best = _lp2(projected, (nx, ny), v_max, direction=True)
        if end == len(projected):
            vx, vy = best
        worst = nx * (qx - vx) + ny * (qy - vy)
    return vx, vy


def solve_velocity(lines: list, hard: int, v_pref: tuple, v_max: float) -> tuple:
    """The velocity nearest ``v_pref`` (m/s) within the half-planes ``lines`` [(q_x, q_y, n_x, n_y)]
    and |v| ≤ ``v_max``; the first ``hard`` lines (static obstacles) are kept even when all cannot
    be (linear program 3 then spreads the violation over the others)."""
    end, v = _lp2(lines, v_pref, v_max)
    if end < len(lines):
        v = _lp3(lines, hard if end >= hard else 0, end, v, v_max)
    return v


def violation(lines: list, v: tuple) -> float:
    """The largest violation of the half-planes by velocity ``v`` (m/s; 0 when inside all)."""
    return max([0.0] + [nx * (qx - v[0]) + ny * (qy - v[1]) for qx, qy, nx, ny in lines])
