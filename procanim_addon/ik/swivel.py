"""Swivel (pole): turn the arm about the shoulder→wrist axis so the elbow sits toward a pole.

For joint ``s`` (the upper arm) with head ``h``, effector ``p`` and elbow ``e`` (head of joint
``s + 1``), the axis is ``n = (p − h)/|p − h|``; the swivel angle φ is the signed angle about ``n``
from the elbow's offset ``e − h`` to the pole direction, both projected on the plane ⊥ ``n``.
Turning the upper arm's world rotation by ``Rot(n, weight · φ)`` about its head leaves the
effector where it is (the joints below keep their local angles) — unless a limit clamps it, in
which case the caller re-solves. In the joint's axis coordinates (see :mod:`.kernel`) the new
turn is ``Rot(G_sᵀ n, φ) · M(θ_s)``.
"""

from __future__ import annotations

import math

from .kernel import axis_rotation, euler_xyz, mat_mul


def swivel_angle(p, heads, pole, joint) -> tuple[float, tuple]:
    """φ (rad) that would put the elbow on the pole side, and the unit axis ``n`` (world)."""
    h, e = heads[joint], heads[joint + 1]
    nx, ny, nz = p[0] - h[0], p[1] - h[1], p[2] - h[2]
    nn = math.sqrt(nx * nx + ny * ny + nz * nz)
    if nn < 1e-9:
        return 0.0, (0.0, 0.0, 1.0)
    nx, ny, nz = nx / nn, ny / nn, nz / nn
    ex, ey, ez = e[0] - h[0], e[1] - h[1], e[2] - h[2]
    ne = nx * ex + ny * ey + nz * ez
    ux, uy, uz = ex - nx * ne, ey - ny * ne, ez - nz * ne
    npole = nx * pole[0] + ny * pole[1] + nz * pole[2]
    vx, vy, vz = pole[0] - nx * npole, pole[1] - ny * npole, pole[2] - nz * npole
    if ux * ux + uy * uy + uz * uz < 1e-12 or vx * vx + vy * vy + vz * vz < 1e-12:
        return 0.0, (nx, ny, nz)
    cx, cy, cz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
    return math.atan2(nx * cx + ny * cy + nz * cz, ux * vx + uy * vy + uz * vz), (nx, ny, nz)


def apply_swivel(kern, g0, h0, th, count, pole, joint, weight=1.0) -> bool:
    """Swivel joint ``joint`` of the flat angles ``th`` (in place) toward ``pole`` (armature-space
    direction). True when a limit clamped the new angles (then the effector has moved)."""
    if joint is None or joint < 0 or joint + 1 >= count:
        return False
    p, heads, _ = kern.detail(g0, h0, th, count)
    phi, n = swivel_angle(p, heads, pole, joint)
    phi *= weight
    if abs(phi) < 1e-12:
        return False
    g = kern.frames(g0, th, joint)[joint]
    k = (g[0] * n[0] + g[3] * n[1] + g[6] * n[2], g[1] * n[0] + g[4] * n[1] + g[7] * n[2],
         g[2] * n[0] + g[5] * n[1] + g[8] * n[2])  # Gᵀ n
    return kern.set_joint(th, joint, mat_mul(axis_rotation(k, phi), euler_xyz(*th[3 * joint:3 * joint + 3])))
