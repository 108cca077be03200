"""Fix Feet's settings and their documented limits.

Lengths are in metres (``unit_m`` converts them to the armature's units), speeds in m/s, times in
seconds (so a 120 fps capture detects and blends over the same time as a 24 fps one).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from ..errors import InputError
from ..limits import LIMITS as ALL_LIMITS
from ..limits import Limit


@dataclass
class FixFeetParams:
    """How contacts are found and held.

    Contact detection (Ikemoto et al. 2006 label heel and toe contacts per foot; we classify each
    of a foot's two points — heel and ball — by its height above the floor and its speed):

    height_m:         a point closer to the floor than this may be in contact (enters contact)
    speed_m_s:        a point slower than this may be in contact (enters contact)
    hysteresis:       a point in contact leaves it only when its height or speed exceeds
                      ``hysteresis ×`` the thresholds above (≥ 1: no flicker at the threshold)
    min_contact_s:    contacts shorter than this are dropped
    min_lift_s:       lifts between two contacts of one point shorter than this are closed
    noise_factor:     RECON: the two thresholds come down to this many times the motion's own
                      spread of heights and typical speed in contact (a clean motion gets tight
                      thresholds, a jittery capture keeps the ones given); 0: use them as given

    Holding (Kovar et al. 2002):

    blend_s:          the foot eases from the source into a held contact, and back, over this
                      time before and after it (the lift between two close contacts is shared)
    max_reach:        the hip–ankle distance never exceeds this fraction of the leg's length
                      (thigh + shin) unless the source's own leg is straighter on that frame: no
                      hyperextension, no knee pop
    reach_slack_m:    RECON: a held ankle out of reach by less than this stops short of its place
                      (Kovar et al. stretch the leg for such small misses; ProcAnim keeps bone
                      lengths, and lowering the pelvis for a millimetre bends a straight knee a lot)
    max_pelvis_drop_m: where a held foot is out of reach, the pelvis is lowered smoothly by at most
                      this much; where that is not enough, the contact is shortened and reported
    place_on_ground:  with a ground: move the whole motion up or down by its offset above the
                      ground (a capture floating above the ground comes down onto it; :mod:`.detect`)
    sole_from_rest:   the contact points stand as high above the floor as they do in the rest pose
                      (its lowest foot point over z = 0, when the rest pose stands there); off:
                      ``sole_m`` above it
    sole_m:           height of the heel and ball points above the floor when the foot is flat
                      (used when ``sole_from_rest`` is off)
    unit_m:           metres per armature unit (the armature object's scale); every ``*_m`` value
                      above is in metres whatever the rig's units
    """

    height_m: float = 0.03
    speed_m_s: float = 0.6
    hysteresis: float = 1.25
    min_contact_s: float = 0.1
    min_lift_s: float = 0.08
    noise_factor: float = 4.0
    blend_s: float = 0.17
    max_reach: float = 0.985
    reach_slack_m: float = 0.002
    max_pelvis_drop_m: float = 0.06
    place_on_ground: bool = True
    sole_from_rest: bool = True
    sole_m: float = 0.0
    unit_m: float = 1.0

    def validate(self) -> FixFeetParams:
        """Refuse a value outside its limit (:data:`LIMITS`) with a message naming the setting."""
        for f in fields(self):
            if f.name in LIMITS:
                LIMITS[f.name].check(getattr(self, f.name))
            elif not isinstance(getattr(self, f.name), bool):
                raise InputError(f"Fix Feet setting '{f.name}' has no documented limit.")
        return self

    def frames(self, seconds: float, fps: float) -> int:
        """``seconds`` as a whole number of frames at ``fps`` (at least 1)."""
        return max(1, int(round(seconds * fps)))


#: The range in which each setting means something (the engine refuses values outside it) and the
#: sidebar's slider range: the Fix Feet table of :data:`..limits.LIMITS` (docs/limits.md).
LIMITS: dict[str, Limit] = ALL_LIMITS["FixFeetParams"]
