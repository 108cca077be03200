"""The settings every bake has, whatever its generator: how many keys it writes.

``key_tolerance`` (m): the keys a bake writes keep every deform bone's head and tail within this
distance of the dense motion (a key on every generated frame) on every frame, as Blender plays
them (:mod:`procanim_addon.keys`, docs/keys.md). 0 writes the dense bake itself. Its limits are
documented with every other setting's (:mod:`.limits`, docs/limits.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from .keys import DEFAULT_TOLERANCE_M
from .limits import check_limits


@dataclass
class BakeSettings:
    """key_tolerance: m (0 = a key on every generated frame, the dense bake)."""

    key_tolerance: float = DEFAULT_TOLERANCE_M

    def validate(self) -> BakeSettings:
        """Raise :class:`~.errors.InputError` naming the setting when a value is outside its limits."""
        check_limits(self)
        return self

    @property
    def dense(self) -> bool:
        """A key on every generated frame (no reduction)."""
        return self.key_tolerance == 0.0
