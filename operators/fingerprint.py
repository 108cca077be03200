"""What a bake wrote, as a fingerprint stored on its action, so that a re-run can tell whether the
animator has touched the keys since (and then keep them instead of replacing them).

The fingerprint is a SHA-1 over every F-curve of the action, sorted by data path and index: its
key count and its keyframes' coordinates (frame, value) as float32. Moving, adding or deleting a
key or a curve changes it; saving and reloading the file does not. The bake computes it from the
arrays it writes (no read-back); a re-run reads the keys once (one ``foreach_get`` per F-curve).
An edit of handles or interpolation alone, with every key left in place, is not seen.
"""

from __future__ import annotations

import hashlib

import numpy as np

from .compat import action_fcurves


def digest(curves: dict[tuple[str, int], np.ndarray]) -> str:
    """The fingerprint of ``{(data_path, index): co}`` (``co``: float32 ``[f0, v0, f1, v1, …]``)."""
    sha = hashlib.sha1()
    for (path, index), co in sorted(curves.items()):
        co = np.ascontiguousarray(co, dtype=np.float32)
        sha.update(f"{path}[{index}]:{len(co) // 2};".encode())
        sha.update(co.tobytes())
    return sha.hexdigest()


def fingerprint(action, obj=None) -> str:
    """The fingerprint of ``action``'s keys as they are now (for ``obj``'s slot when given)."""
    curves = {}
    for fc in action_fcurves(action, obj):
        co = np.empty(2 * len(fc.keyframe_points), dtype=np.float32)
        fc.keyframe_points.foreach_get("co", co)
        curves[fc.data_path, fc.array_index] = co
    return digest(curves)


def untouched(action, obj=None) -> bool:
    """True when ``action`` still holds exactly what its bake wrote (or predates fingerprints)."""
    stored = action.procanim.fingerprint
    return not stored or stored == fingerprint(action, obj)


def keep_edited(action) -> str:
    """Set an animator-edited bake aside: renamed ``<name>.edited`` (Blender adds .001 … when that
    is taken), a fake user so it is saved, and no longer this generator's own bake. Returns its new name."""
    action.name = f"{action.name}.edited"
    action.use_fake_user = True
    action.procanim.owner = ""
    return action.name
