"""Relationship descriptors (Al-Asqhar, Komura & Choi 2013; Jo & Choi 2019, Eq. 1 and 2).

For a joint p_j, descriptor points d_i are sampled on the environment's surface around the joint's
vertical projection. Each carries a local frame — normal n_i, tangent t_i, binormal b_i — and the
joint is stored in that frame::

    r_ij = [n_i t_i b_i]ᵀ (p_j − d_i)                                   (Eq. 1)

When the environment changes, each d_i is carried to the new surface (same XY, the new surface's
height and normal: d_i', n_i', t_i', b_i') and the joint is estimated from all of them::

    p_j = Σ_i w_ij (d_i' + [n_i' t_i' b_i'] r_ij),   w_ij ∝ 1/|p_j − d_i|, 0 beyond a cutoff   (Eq. 2)

Sampling: at least 10 points per joint on a sunflower spiral around the projection; the spiral's
radius grows with the joint's height h above the surface as ρ = sqrt(ρ₀² + c·h), so the density
(points per area) is inversely proportional to the distance (**RECON**: the paper states the
proportionality only; ρ₀ and c are parameters). The tangent is the motion's forward direction
projected on the surface, so a flat surface gives the same frame everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

GOLDEN_ANGLE = np.pi * (3.0 - np.sqrt(5.0))


@dataclass
class Descriptors:
    """Descriptor points for N joints, K each.

    points: d_i ``(N, K, 3)`` m; frames: rows n_i, t_i, b_i ``(N, K, 3, 3)``; valid ``(N, K)``
    (the surface was hit there).
    """

    points: np.ndarray
    frames: np.ndarray
    valid: np.ndarray


def spiral(count: int) -> np.ndarray:
    """Unit-disc sunflower pattern ``(count, 2)``: even coverage, deterministic."""
    k = np.arange(count)
    r = np.sqrt((k + 0.5) / count)
    a = k * GOLDEN_ANGLE
    return np.column_stack((r * np.cos(a), r * np.sin(a)))


def surface_frames(normals: np.ndarray, forward: np.ndarray) -> np.ndarray:
    """Rows ``[n, t, b]`` ``(..., 3, 3)``: t is ``forward`` projected on the surface, b = n × t.

    Written per component (the arrays hold ~10⁵ descriptors; numpy sums over a last axis of three
    are slow): the same operations, in the same order, as normalising, projecting and crossing
    whole vectors."""
    nx, ny, nz = normals[..., 0], normals[..., 1], normals[..., 2]
    ln = np.maximum(np.sqrt(nx * nx + ny * ny + nz * nz), 1e-12)
    nx, ny, nz = nx / ln, ny / ln, nz / ln
    fx, fy, fz = (float(v) for v in np.asarray(forward, float))
    d = fx * nx + fy * ny + fz * nz
    tx, ty, tz = fx - d * nx, fy - d * ny, fz - d * nz
    lt = np.sqrt(tx * tx + ty * ty + tz * tz)
    # a surface facing the forward direction (a wall) has no projected forward: use the up axis
    bad = lt < 1e-6
    if np.any(bad):
        du = 0.0 * nx + 0.0 * ny + 1.0 * nz
        tx, ty = np.where(bad, 0.0 - du * nx, tx), np.where(bad, 0.0 - du * ny, ty)
        tz = np.where(bad, 1.0 - du * nz, tz)
        lt = np.sqrt(tx * tx + ty * ty + tz * tz)
    lt = np.maximum(lt, 1e-12)
    tx, ty, tz = tx / lt, ty / lt, tz / lt
    out = np.empty(np.shape(normals)[:-1] + (3, 3))
    out[..., 0, 0], out[..., 0, 1], out[..., 0, 2] = nx, ny, nz
    out[..., 1, 0], out[..., 1, 1], out[..., 1, 2] = tx, ty, tz
    out[..., 2, 0], out[..., 2, 1], out[..., 2, 2] = ny * tz - nz * ty, nz * tx - nx * tz, nx * ty - ny * tx
    return out


def sample(surface, joints: np.ndarray, forward, count: int = 12, radius0_m: float = 0.05,
           spread_m: float = 0.3) -> Descriptors:
    """Descriptors around joints ``(N, 3)`` on ``surface`` (a TerrainMesh).

    Each joint is projected straight down (the highest surface at or below it; the top surface if
    the joint is under the surface); ``count`` points on a spiral of radius
    ρ = sqrt(radius0_m² + spread_m·h) around the projection are dropped onto the surface.
    """
    p = np.asarray(joints, float).reshape(-1, 3)
    z, _, hit = surface.ray_down(p, normals=False)
    top, _, top_hit = surface.height(p[:, :2], normals=False)
    z = np.where(hit, z, top)
    h = np.where(hit | top_hit, np.maximum(p[:, 2] - z, 0.0), 0.0)
    rho = np.sqrt(radius0_m**2 + spread_m * h)  # density ∝ 1/h (RECON)
    xy = p[:, None, :2] + rho[:, None, None] * spiral(count)[None]
    below = np.repeat(np.maximum(p[:, 2], z + 1e-6)[:, None], count, axis=1) + 1e-6
    dz, dn, dhit = surface.ray_down(np.concatenate((xy, below[..., None]), axis=-1).reshape(-1, 3))
    use_top = np.nonzero(~dhit)[0]  # no surface below the joint's height there: take the top one
    valid = dhit.copy()
    if use_top.size:
        tz, tn, thit = surface.height(xy.reshape(-1, 2)[use_top])
        dz[use_top], dn[use_top], valid[use_top] = tz, tn, thit
    valid = valid.reshape(len(p), count)
    points = np.concatenate((xy, dz.reshape(len(p), count, 1)), axis=-1)
    frames = surface_frames(dn.reshape(len(p), count, 3), forward)
    return Descriptors(points, frames, valid)


def encode(joints: np.ndarray, desc: Descriptors) -> np.ndarray:
    """Eq. 1: r_ij = [n_i t_i b_i]ᵀ (p_j − d_i), ``(N, K, 3)``."""
    return np.einsum("nkab,nkb->nka", desc.frames, joints[:, None, :] - desc.points)


def carry(desc: Descriptors, terrain, forward) -> Descriptors:
    """The same descriptors on another surface: same XY, that surface's top height and normal."""
    n, k = desc.valid.shape
    z, nrm, hit = terrain.height(desc.points[..., :2].reshape(-1, 2))
    pts = desc.points.copy()
    pts[..., 2] = np.where(hit, z, 0.0).reshape(n, k)
    return Descriptors(pts, surface_frames(nrm.reshape(n, k, 3), forward), desc.valid & hit.reshape(n, k))


def weights(joints: np.ndarray, desc: Descriptors, cutoff_ratio: float = 4.0) -> np.ndarray:
    """w_ij ∝ 1/|p_j − d_i|, falling smoothly to 0 at a cutoff and normalised per joint, ``(N, K)``.

    **RECON** (the paper: inversely proportional to the distance, zero beyond a cutoff): the cutoff
    is ``cutoff_ratio`` × the joint's nearest descriptor distance, so it scales with the joint's
    height; ``w = max(0, 1/dist − 1/cutoff)``. Joints with no valid descriptor get all-zero weights.
    """
    dist = np.linalg.norm(joints[:, None, :] - desc.points, axis=-1)
    dist = np.where(desc.valid, np.maximum(dist, 1e-6), np.inf)
    cutoff = cutoff_ratio * np.min(dist, axis=1, keepdims=True)
    w = np.maximum(1.0 / dist - 1.0 / cutoff, 0.0)
    w = np.where(desc.valid, w, 0.0)
    s = w.sum(axis=1, keepdims=True)
    return np.where(s > 0, w / np.where(s > 0, s, 1.0), 0.0)


def estimate(desc_new: Descriptors, r: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Eq. 2: p_j = Σ_i w_ij (d_i' + [n_i' t_i' b_i'] r_ij), ``(N, 3)``."""
    local = np.einsum("nkba,nkb->nka", desc_new.frames, r)  # frames hold rows: transpose back
    return np.einsum("nk,nka->na", w, desc_new.points + local)
