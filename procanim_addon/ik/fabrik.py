"""FABRIK (forward and backward reaching IK) with joint limits.

Joint positions ``P_0 … P_m`` (heads, then the effector) are moved in two passes keeping each
segment length ``L_i``: backward from ``P_m = t``, forward from the fixed root ``P_0``. The new
positions are then turned back into angles bone by bone — each bone swung (shortest arc) so its
segment points at its new child position, the rotation expressed in the joint's axes and clamped
into the limits — and the clamped pose's FK gives the positions of the next iteration. So every
iterate is a valid, limited pose.
"""

from __future__ import annotations

import math

import numpy as np

from .. import transforms as tf
from ._effector import cross3, dot3, effector_of


def _positions(chain, base, th, count, eff_local):
    mats = chain.fk(base, th, count)
    pts = np.empty((count + 1, 3))
    pts[:count] = mats[:, :3, 3]
    pts[count] = effector_of(mats, eff_local)
    return mats, pts


def _to_angles(chain, base, th, pts, count, eff_local):
    th = th.copy()
    parent = np.asarray(base, float)
    for j in range(count):
        pre = parent @ chain.rest_rel[j]
        rot = chain.joint_matrix(j, th[j])
        world = pre[:3, :3] @ rot
        off = eff_local if j == count - 1 else chain.head_offset(j)
        cur = world @ off
        want = pts[j + 1] - pre[:3, 3]
        if want @ want > 1e-24 and cur @ cur > 1e-24:
            q = _turn_between(cur, want)
            new_local = pre[:3, :3].T @ q @ world
            th[j] = chain.clamp_joint(j, chain.angles_of(j, new_local))
            rot = chain.joint_matrix(j, th[j])
        parent = pre.copy()
        parent[:3, :3] = pre[:3, :3] @ rot
    return th


def _feasible_direction(chain, pre, j, th_j, want, off):
    """World direction of bone ``j``'s segment closest to ``want`` that its limits allow, with the
    joint's frame before rotation ``pre`` (3×3) taken from the current pose."""
    cur_local = off
    if want @ want < 1e-24:
        return None
    want_local = pre.T @ want
    q = _turn_between(cur_local, want_local)
    ang = chain.clamp_joint(j, chain.angles_of(j, q))
    r = _joint_rotation(chain, j, ang)
    d = pre @ (r @ off)
    return d / math.sqrt(d @ d)


def _joint_rotation(chain, j, ang):
    return chain.joint_matrix(j, ang)


def _turn_between(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Shortest-arc rotation matrix taking direction ``a`` onto ``b``:
    ``I + [v]× + [v]×² / (1 + c)`` with ``v = â × b̂``, ``c = â · b̂`` (plain floats inside)."""
    a = a.tolist()
    b = b.tolist()
    na, nb = math.sqrt(dot3(a, a)), math.sqrt(dot3(b, b))
    a = [x / na for x in a]
    b = [x / nb for x in b]
    c = dot3(a, b)
    if c < -1.0 + 1e-9:
        return tf.quat_to_mat3(tf.rotation_between(np.array(a), np.array(b)))
    x, y, z = cross3(a, b)
    f = 1.0 / (1.0 + c)
    return np.array([
        [1.0 - (y * y + z * z) * f, -z + x * y * f, y + x * z * f],
        [z + x * y * f, 1.0 - (x * x + z * z) * f, -x + y * z * f],
        [-y + x * z * f, x + y * z * f, 1.0 - (x * x + y * y) * f],
    ])


def fabrik(chain, base, target, angles, count, eff_local, tol=1e-6, max_iter=300):
    """Solve by FABRIK; returns ``(angles (n, 3), iterations)``.

    The backward pass is constrained too: each segment takes the direction nearest the wanted one
    that its joint's limits allow, in its parent's current frame.
    """
    th = np.array(angles, float)
    offs = [chain.head_offset(j) for j in range(count - 1)] + [np.asarray(eff_local, float)]
    seg = np.array([np.linalg.norm(o) for o in offs])
    for it in range(max_iter):
        mats, pts = _positions(chain, base, th, count, eff_local)
        if np.sum((target - pts[-1]) ** 2) < tol * tol:
            return th, it
        root = pts[0].copy()
        reach = np.linalg.norm(target - root)
        if reach >= seg.sum():  # out of reach: stretch straight toward the target
            d = (target - root) / max(reach, 1e-12)
            for i in range(count):
                pts[i + 1] = pts[i] + seg[i] * d
        else:
            pres = [(np.asarray(base, float) if j == 0 else mats[j - 1]) @ chain.rest_rel[j] for j in range(count)]
            pts[-1] = target
            for i in range(count - 1, -1, -1):
                d = _feasible_direction(chain, pres[i][:3, :3], i, th[i], pts[i + 1] - pts[i], offs[i])
                if d is not None:
                    pts[i] = pts[i + 1] - seg[i] * d
            pts[0] = root
            for i in range(count):
                d = pts[i + 1] - pts[i]
                pts[i + 1] = pts[i] + seg[i] * d / max(np.linalg.norm(d), 1e-12)
        th = _to_angles(chain, base, th, pts, count, eff_local)
    return th, max_iter
