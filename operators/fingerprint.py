"""What a bake wrote, as a fingerprint stored on its action, so that a re-run can tell whether the
animator has touched the keys since (and then keep them instead of replacing them).

The fingerprint is a SHA-1 over every F-curve of the action, sorted by data path and index — its key
count, its keyframes' coordinates (frame, value) and both handles as float32, and per key its
handle types, interpolation and key type — and over the action's pose markers (frame, name). Moving,
adding or deleting a key, a handle, a curve or a marker, or changing a key's type, interpolation or
handle type changes it; saving and reloading the file does not. The bake reads each curve once
after writing it (``FCurve.update()`` has computed the automatic handles by then); a re-run reads
every curve once (one ``foreach_get`` per key attribute).

Fingerprints stored before handles and key types were covered (no ``v2:`` prefix) are compared on the
keys' coordinates alone, as they were taken; those bakes wrote no pose markers, so a marker on one is
an edit.
"""

from __future__ import annotations

import hashlib

import numpy as np

from .compat import action_fcurves

VERSION = "v2:"
POINTS = ("co", "handle_left", "handle_right")  # float32 pairs per key
ENUMS = ("handle_left_type", "handle_right_type", "interpolation", "type")  # an integer per key

Curve = dict[str, np.ndarray]  # POINTS and ENUMS of one F-curve's keys (flat arrays)


def curve_state(fc) -> Curve:
    """Everything of the F-curve ``fc``'s keys the fingerprint covers (one ``foreach_get`` each)."""
    points = fc.keyframe_points
    n = len(points)
    out: Curve = {}
    for attr in POINTS:
        out[attr] = np.empty(2 * n, dtype=np.float32)
        points.foreach_get(attr, out[attr])
    for attr in ENUMS:
        out[attr] = np.empty(n, dtype=np.int32)
        points.foreach_get(attr, out[attr])
    return out


def digest(curves: dict[tuple[str, int], Curve], markers=()) -> str:
    """The fingerprint of ``{(data_path, index): curve}`` (:func:`curve_state`) and pose ``markers``
    ``(frame, name)``."""
    sha = hashlib.sha1()
    for (path, index), curve in sorted(curves.items()):
        sha.update(f"{path}[{index}]:{len(curve['co']) // 2};".encode())
        for attr in POINTS:
            sha.update(np.ascontiguousarray(curve[attr], dtype=np.float32).tobytes())
        for attr in ENUMS:
            sha.update(np.ascontiguousarray(curve[attr], dtype=np.int32).tobytes())
    for frame, name in sorted((int(f), str(n)) for f, n in markers):
        sha.update(f"marker {frame} {name};".encode())
    return VERSION + sha.hexdigest()


def _coordinates_digest(curves: dict[tuple[str, int], Curve]) -> str:
    """The fingerprint as it was taken before handles and key types were covered."""
    sha = hashlib.sha1()
    for (path, index), curve in sorted(curves.items()):
        co = np.ascontiguousarray(curve["co"], dtype=np.float32)
        sha.update(f"{path}[{index}]:{len(co) // 2};".encode())
        sha.update(co.tobytes())
    return sha.hexdigest()


def markers_of(action) -> list[tuple[int, str]]:
    """The pose markers of ``action`` as ``(frame, name)``."""
    return [(m.frame, m.name) for m in action.pose_markers]


def fingerprint(action, obj=None, legacy: bool = False) -> str:
    """The fingerprint of ``action``'s keys and markers as they are now (for ``obj``'s slot when
    given); ``legacy``: as taken before handles and key types were covered."""
    curves = {(fc.data_path, fc.array_index): curve_state(fc) for fc in action_fcurves(action, obj)}
    return _coordinates_digest(curves) if legacy else digest(curves, markers_of(action))


def untouched(action, obj=None) -> bool:
    """True when ``action`` still holds exactly what its bake wrote (or predates fingerprints)."""
    stored = action.procanim.fingerprint
    if not stored:
        return True
    if not stored.startswith(VERSION):  # those bakes wrote no markers: any is the animator's
        return not len(action.pose_markers) and stored == fingerprint(action, obj, legacy=True)
    return stored == fingerprint(action, obj)


def keep_edited(action) -> str:
    """Set an animator-edited bake aside: renamed ``<name>.edited`` (Blender adds .001 … when that
    is taken), a fake user so it is saved, and no longer this generator's own bake. Returns its new name."""
    action.name = f"{action.name}.edited"
    action.use_fake_user = True
    action.procanim.owner = ""
    return action.name
