"""Shared by the solvers: the tip-to-root sweep of CCD and the fuzzy controllers, on plain floats.

Angles are a flat list ``θ[3j + k]``; heads and world axes come from :meth:`.kernel.Kernel.detail`.
"""

from __future__ import annotations

import math


def sweep_tip_to_root(p, t, heads, axes, th, locked, count, turn_to) -> tuple:
    """One sweep over the angles of the first ``count`` joints, tip to root (CCD and the fuzzy
    controllers).

    Each angle ``i`` about its world axis ``w`` through its joint's head ``h`` sees the signed angle
    (radians) from ``u = p − h`` to ``v = t − h``, both projected on the plane ⊥ w, and
    ``turn_to(i, angle, old)`` returns its new value (limits applied); the effector ``p`` turns
    with it. Going tip to root, and within a joint from its innermost angle out, a turn moves only
    the effector for the angles still to come (their axes and heads sit above it), so one FK per
    sweep is enough. ``th`` is updated in place; returns the effector.
    """
    px, py, pz = p
    tx, ty, tz = t
    for j in range(count - 1, -1, -1):
        hx, hy, hz = heads[j]
        vx, vy, vz = tx - hx, ty - hy, tz - hz
        for i in (3 * j + 2, 3 * j + 1, 3 * j):
            if locked[i]:
                continue
            wx, wy, wz = axes[i]
            ux, uy, uz = px - hx, py - hy, pz - hz
            wu = wx * ux + wy * uy + wz * uz
            wv = wx * vx + wy * vy + wz * vz
            upx, upy, upz = ux - wx * wu, uy - wy * wu, uz - wz * wu  # u, v on the plane ⊥ w
            vpx, vpy, vpz = vx - wx * wv, vy - wy * wv, vz - wz * wv
            uu = upx * upx + upy * upy + upz * upz
            vv = vpx * vpx + vpy * vpy + vpz * vpz
            if uu < 1e-14 or vv < 1e-14:
                continue
            cx, cy, cz = upy * vpz - upz * vpy, upz * vpx - upx * vpz, upx * vpy - upy * vpx
            ang = math.atan2(wx * cx + wy * cy + wz * cz, upx * vpx + upy * vpy + upz * vpz)
            old = th[i]
            new = turn_to(i, ang, old)
            if new == old:
                continue
            # p turned about w through h by new − old (Rodrigues; u = p − h)
            c, s = math.cos(new - old), math.sin(new - old)
            kv = wu * (1.0 - c)
            px = hx + ux * c + (wy * uz - wz * uy) * s + wx * kv
            py = hy + uy * c + (wz * ux - wx * uz) * s + wy * kv
            pz = hz + uz * c + (wx * uy - wy * ux) * s + wz * kv
            th[i] = new
    return px, py, pz


def distance2(a, b) -> float:
    """Squared distance of two 3-tuples."""
    dx, dy, dz = a[0] - b[0], a[1] - b[1], a[2] - b[2]
    return dx * dx + dy * dy + dz * dz
