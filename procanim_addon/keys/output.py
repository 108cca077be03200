"""What a reduced bake hands to the writer: per F-curve its keys, handles and key types; the action's
pose markers; the figures of the bake.

Everything is in the form Blender's ``keyframe_points.foreach_set`` takes (:meth:`CurveKeys.arrays`):
float32 coordinates and the integer codes of the enum properties (:data:`.bezier.HANDLE`,
:data:`.bezier.INTERPOLATION`, :data:`.bezier.KEY_TYPE`). After writing, ``FCurve.update()`` lets
Blender recompute what it owns (automatic handles, the alignment of ``ALIGNED`` ones);
:meth:`CurveKeys.blender_keys` is that result, and :meth:`CurveKeys.evaluate` the values Blender
then plays.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .bezier import HANDLE, INTERPOLATION, KEY_TYPE, Keys, evaluate
from .handles import recalc

F32 = np.float32
_NAMES = {
    "handle_left_type": {v: k for k, v in HANDLE.items()},
    "handle_right_type": {v: k for k, v in HANDLE.items()},
    "interpolation": {v: k for k, v in INTERPOLATION.items()},
    "type": {v: k for k, v in KEY_TYPE.items()},
}


@dataclass
class CurveKeys:
    """The keys of one F-curve.

    data_path, index: the F-curve; group: its action group (the bone's name);
    co ``(K, 2)``: (frame, value) of each key; handle_left, handle_right ``(K, 2)``: handle
    coordinates; handle_left_type, handle_right_type, interpolation, key_type ``(K,)``: enum codes.
    ``smoothing``: the curve's auto smoothing these handles assume (``CONT_ACCEL`` is Blender's default
    for new curves; it only changes automatic handles).
    """

    data_path: str
    index: int
    group: str
    co: np.ndarray
    handle_left: np.ndarray
    handle_right: np.ndarray
    handle_left_type: np.ndarray
    handle_right_type: np.ndarray
    interpolation: np.ndarray
    key_type: np.ndarray
    smoothing: str = "CONT_ACCEL"

    def __post_init__(self):
        self.co = np.asarray(self.co, F32).reshape(-1, 2)
        self.handle_left = np.asarray(self.handle_left, F32).reshape(-1, 2)
        self.handle_right = np.asarray(self.handle_right, F32).reshape(-1, 2)
        for name in ("handle_left_type", "handle_right_type", "interpolation", "key_type"):
            setattr(self, name, np.asarray(getattr(self, name), np.int32))

    def __len__(self) -> int:
        return len(self.co)

    @property
    def frames(self) -> np.ndarray:
        return self.co[:, 0]

    @property
    def values(self) -> np.ndarray:
        return self.co[:, 1]

    def arrays(self) -> dict[str, np.ndarray]:
        """``{property: flat array}`` for ``keyframe_points.foreach_set`` (after ``add(len(self))``)."""
        return {
            "co": self.co.ravel(),
            "handle_left": self.handle_left.ravel(),
            "handle_right": self.handle_right.ravel(),
            "handle_left_type": self.handle_left_type,
            "handle_right_type": self.handle_right_type,
            "interpolation": self.interpolation,
            "type": self.key_type,
        }

    def names(self, prop: str) -> list[str]:
        """Enum names of ``prop`` (``handle_left_type``, ``handle_right_type``, ``interpolation``, ``type``)."""
        codes = self.key_type if prop == "type" else getattr(self, prop)
        return [_NAMES[prop][int(c)] for c in codes]

    def blender_keys(self) -> Keys:
        """The keys as Blender holds them after ``FCurve.update()`` (handles recomputed)."""
        left, right = recalc(self.frames, self.values, self.handle_left, self.handle_right, self.handle_left_type,
                             self.handle_right_type, self.smoothing)
        return Keys(self.frames, self.values, left, right, self.interpolation)

    def evaluate(self, t) -> np.ndarray:
        """Values (float32) Blender plays at frames ``t``."""
        return evaluate(self.blender_keys(), t)


@dataclass
class KeyedAction:
    """A bake's keys: the curves, the pose markers ``(frame, name)`` and the figures.

    keys_written / keys_dense: keys of these curves / of the dense bake of the same motion;
    max_error_m: the largest distance of any measured point (deform heads and tails, sole points)
    from the dense motion on any frame, with the curves evaluated as Blender does (:mod:`.bezier`);
    skate_added_m_s: the mean horizontal speed the curves add to the feet's sole points over every
    contact frame; contacts_exact: every
    contact's first and last frame is a key of its leg and no planted foot skates more than the
    bound; tolerance_m: the bound asked for; notes: sentences for the user.
    """

    curves: list[CurveKeys]
    markers: list[tuple[float, str]] = field(default_factory=list)
    keys_written: int = 0
    keys_dense: int = 0
    max_error_m: float = 0.0
    skate_added_m_s: float = 0.0
    contacts_exact: bool = True
    tolerance_m: float = 0.0
    notes: list[str] = field(default_factory=list)

    def metrics(self) -> dict:
        """The figures for the action's metrics (plain numbers)."""
        return {
            "key_tolerance_mm": self.tolerance_m * 1000.0,
            "keys_written": int(self.keys_written),
            "keys_dense": int(self.keys_dense),
            "keys_percent_of_dense": 100.0 * self.keys_written / max(self.keys_dense, 1),
            "key_error_max_mm": self.max_error_m * 1000.0,
            "key_skate_added_cm_s": self.skate_added_m_s * 100.0,
            "contacts_exact": bool(self.contacts_exact),
        }
