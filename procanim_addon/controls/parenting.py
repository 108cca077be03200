"""How a pose bone's channels become its armature-space matrix, with every inheritance setting.

Blender composes a pose bone as ``pose = parent_transform ∘ basis`` (``BKE_bone_parent_transform_*``
in Blender's armature code). The parent transform is two matrices: ``rotscale`` that the basis
rotation/scale goes through and ``loc`` that the basis location goes through::

    pose[:3, :3] = rotscale[:3, :3] @ basis[:3, :3]
    pose[:3, 3]  = loc @ basis[:3, 3]            (loc applied to the point basis.location)

With the default settings (inherit rotation, inherit scale FULL, local location)
``rotscale = loc = pose[parent] @ rest_rel``. The others, which generated Rigify rigs use on many
controls, change them:

* inherit rotation off (a *hinge*): ``rotscale = rest[parent] @ rest_rel`` (the parent's rest
  orientation);
* inherit scale NONE / AVERAGE / ALIGNED: the parent's scale is taken out of ``rotscale`` (AVERAGE
  puts back the cube root of its volume change, ALIGNED its per-axis scale);
* in both cases the head still follows the whole parent: ``loc = pose[parent] @ rest_rel``;
* local location off: the location is read along the *parent's* posed axes instead of the bone's
  own rest axes: ``loc = [pose[parent][:3, :3] | pose[parent] @ rest_rel.origin]``.

Inverting these gives the basis that puts a bone at a wanted matrix (:func:`basis_for`) and the
bone's LOCAL-space matrix that constraints use (the same function).
"""

from __future__ import annotations

import numpy as np

from ..transforms import column_scale, det3, inverse3


def mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` for stacks of matrices, with one product over all frames when either side is a
    single matrix (numpy otherwise multiplies small matrices one by one)."""
    a, b = np.asarray(a), np.asarray(b)
    if b.ndim == 2 and a.ndim > 2:
        return (a.reshape(-1, a.shape[-1]) @ b).reshape(a.shape[:-1] + (b.shape[-1],))
    if a.ndim == 2 and b.ndim > 2:
        bt = np.swapaxes(b, -1, -2)
        out = (bt.reshape(-1, bt.shape[-1]) @ a.T).reshape(bt.shape[:-1] + (a.shape[0],))
        return np.swapaxes(out, -1, -2)
    return a @ b


def _orthonormal(m: np.ndarray) -> np.ndarray:
    """``m`` (…, 4, 4) with its 3×3 part's columns made unit length (scale removed)."""
    out = m.copy()
    out[..., :3, :3] = m[..., :3, :3] / np.maximum(column_scale(m)[..., None, :], 1e-12)
    return out


def parent_transform(rig, i: int, parent_pose: np.ndarray | None, frames: int):
    """``(rotscale, loc)`` matrices ``(F, 4, 4)`` of bone ``i`` under ``parent_pose`` (F, 4, 4)."""
    offs = rig.rest_rel[i]
    p = int(rig.parents[i])
    if p < 0 or parent_pose is None:
        rotscale = np.broadcast_to(offs, (frames, 4, 4))
        if rig.local_location[i]:
            return rotscale, rotscale
        loc = np.broadcast_to(np.eye(4), (frames, 4, 4)).copy()
        loc[:, :3, 3] = offs[:3, 3]
        return rotscale, loc
    mode = rig.inherit_scale[i]
    use_rotation = rig.inherit_rotation[i]
    if use_rotation and mode == "FULL":
        rotscale = mul(parent_pose, offs)
    else:
        if use_rotation:
            tmat = parent_pose if mode == "FIX_SHEAR" else _orthonormal(parent_pose)
        else:
            tmat = np.broadcast_to(rig.matrix_local[p], parent_pose.shape).copy()
            if mode in ("FULL", "FIX_SHEAR"):
                tmat[..., :3, :3] *= column_scale(parent_pose)[..., None, :]
        if mode == "AVERAGE":
            volume = np.abs(det3(parent_pose))
            tmat = tmat.copy()
            tmat[..., :3, :3] *= np.cbrt(volume)[..., None, None]
        rotscale = mul(tmat, offs)
        if mode == "ALIGNED":
            rotscale = _orthonormal(rotscale)
            rotscale[..., :3, :3] *= column_scale(parent_pose)[..., None, :]
    if not rig.local_location[i]:
        loc = np.broadcast_to(np.eye(4), parent_pose.shape).copy()
        loc[..., :3, :3] = parent_pose[..., :3, :3]
        loc[..., :3, 3] = mul(parent_pose[..., :3, :3], offs[:3, 3:4])[..., 0] + parent_pose[..., :3, 3]
    elif not (use_rotation and mode == "FULL"):
        loc = mul(parent_pose, offs)  # hinge or partial scale: the head still follows the full parent
    else:
        loc = rotscale
    return rotscale, loc


def apply_basis(rotscale: np.ndarray, loc: np.ndarray, basis: np.ndarray | None) -> np.ndarray:
    """Pose matrices from a parent transform and basis matrices (None: identity basis)."""
    if basis is None:
        out = rotscale.copy()
        out[..., :3, 3] = loc[..., :3, 3]
        return out
    out = rotscale @ basis
    if loc is not rotscale:  # by default the product's last column is already loc · basis.location
        out[..., :3, 3] = np.einsum("...ij,...j->...i", loc[..., :3, :3], basis[..., :3, 3]) + loc[..., :3, 3]
    return out


def parent_inverse(rotscale: np.ndarray, loc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The inverses of the 3×3 parts of a parent transform (one when ``loc`` is ``rotscale``)."""
    inv = inverse3(rotscale[..., :3, :3])
    return inv, (inv if loc is rotscale else inverse3(loc[..., :3, :3]))  # the same matrices by default


def basis_for(rotscale: np.ndarray, loc: np.ndarray, pose: np.ndarray, inverse=None) -> np.ndarray:
    """The basis matrices that put the bone at ``pose`` (the inverse of :func:`apply_basis`);
    also the bone's LOCAL-space matrix as constraints read it. ``inverse``: :func:`parent_inverse`
    of the parent transform when already computed."""
    out = np.array(pose, dtype=float, copy=True)
    inv, inv_loc = parent_inverse(rotscale, loc) if inverse is None else inverse
    out[..., :3, :3] = inv @ pose[..., :3, :3]
    out[..., :3, 3] = np.einsum("...ij,...j->...i", inv_loc, pose[..., :3, 3] - loc[..., :3, 3])
    out[..., 3, :] = (0.0, 0.0, 0.0, 1.0)
    return out
