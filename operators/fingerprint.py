"""What a bake wrote, as a fingerprint stored on its action, so that a re-run can tell whether the
animator has touched the keys since (and then keep them instead of replacing them).

The fingerprint is a SHA-1 over every F-curve of the action (sorted by data path and index): its
keyframes' coordinates, handles and interpolation. Moving a key, changing a handle or an
interpolation, adding or deleting a key or a curve all change it; saving and reloading the file
does not.
"""

from __future__ import annotations

import hashlib

import numpy as np

from .compat import action_fcurves


def fingerprint(action, obj=None) -> str:
    """The fingerprint of ``action``'s keys (for ``obj``'s slot when given)."""
    digest = hashlib.sha1()
    curves = sorted(action_fcurves(action, obj), key=lambda fc: (fc.data_path, fc.array_index))
    for fc in curves:
        points = fc.keyframe_points
        n = len(points)
        digest.update(f"{fc.data_path}[{fc.array_index}]:{n};".encode())
        for attribute in ("co", "handle_left", "handle_right"):
            values = np.empty(2 * n, dtype=np.float32)
            points.foreach_get(attribute, values)
            digest.update(values.tobytes())
        modes = np.empty(n, dtype=np.int32)
        points.foreach_get("interpolation", modes)
        digest.update(modes.tobytes())
    return digest.hexdigest()


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
