"""What a crowd is made of: its walkers (each as the path walk takes it) and the crowd's settings,
with their documented limits."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np

from ..errors import InputError
from ..frames import uniform_scale
from ..handshake import HandshakeParams
from ..limits import LIMITS as ALL_LIMITS
from ..limits import Limit
from ..walk import PathWalkParams
from .obstacles import Footprint


@dataclass
class Walker:
    """One character of the crowd.

    name:     how reports name it (the armature's name)
    skeleton, rigmap: its rig
    points:   (N, 3) its curve, armature space (as :func:`~procanim_addon.walk.generate_path_walk`)
    ground:   its ground in armature space (None: the curve's own heights)
    params:   its path walk settings
    world:    (4, 4) the armature object's world matrix (uniform scale): where the crowd meets
    """

    name: str
    skeleton: object
    rigmap: object
    points: np.ndarray
    ground: object = None
    params: PathWalkParams = field(default_factory=PathWalkParams)
    world: np.ndarray = field(default_factory=lambda: np.eye(4))


@dataclass
class CrowdParams:
    """The crowd's settings (world metres and seconds).

    personal_radius_m: each walker keeps this from the others: pelvises at least twice apart
                      (0: no avoidance, each walker walks its curve as if alone)
    variation:        0–1: how much walkers differ (seeded; 0: every walker as its settings say);
                      the ranges at 1 are in :mod:`.variation`
    seed:             the variation's seed
    greet:            walkers whose curves end within ``greet_distance_m`` of each other, facing
                      each other, stop face to face and shake hands (``handshake``'s settings)
    greet_distance_m: curve ends at most this far apart meet
    obstacles:        footprints the walkers keep ``personal_radius_m`` from
    handshake:        the handshake's settings for every meeting (its frame_start and fps are the
                      crowd's)
    Planning (ProcAnim's choices, van den Berg et al. 2011 leave them to the application):
    time_step_s:      Δt of the plan
    horizon_s:        τ: walkers avoid collisions this far ahead
    obstacle_horizon_s: τ_o for static obstacles
    neighbours:       each walker avoids at most this many nearest others at a time
    margin_m:         the plan keeps walkers this much further apart than their radii (the steps
                      follow the plan to a few centimetres)
    speed_up:         a walker may go this many times its own speed to avoid (catching up)
    return_s:         a walker pushed off its curve returns to it over about this time
    """

    personal_radius_m: float = 0.3
    variation: float = 0.0
    seed: int = 0
    greet: bool = False
    greet_distance_m: float = 2.0
    obstacles: tuple[Footprint, ...] = ()
    handshake: HandshakeParams = field(default_factory=HandshakeParams)
    time_step_s: float = 0.1
    horizon_s: float = 4.0
    obstacle_horizon_s: float = 1.0
    neighbours: int = 10
    margin_m: float = 0.15
    speed_up: float = 1.2
    return_s: float = 1.5

    def validate(self) -> CrowdParams:
        """Refuse a value outside its limit (:data:`LIMITS`) with a message naming the setting."""
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in LIMITS:
                LIMITS[f.name].check(value)
            elif not isinstance(value, (bool, tuple, HandshakeParams)):
                raise InputError(f"Crowd setting '{f.name}' has no documented limit.")
        if not all(isinstance(o, Footprint) for o in self.obstacles):
            raise InputError("Crowd obstacles must be footprints (procanim_addon.crowd.footprint).")
        self.handshake.validate()
        return self


#: The range in which each setting means something (the engine refuses values outside it) and the
#: sidebar's slider range: the crowd's table of :data:`..limits.LIMITS` (docs/limits.md).
LIMITS: dict[str, Limit] = ALL_LIMITS["CrowdParams"]


def check_walkers(walkers: list[Walker]) -> tuple[list[float], float]:
    """(each walker's scale (metres per armature unit), the crowd's fps). Raises
    :class:`InputError` for no walkers, a name given twice, a world matrix that is not a uniform
    scale, or walkers timed at different frame rates or starting on different frames."""
    if not walkers:
        raise InputError("The crowd has no walkers.")
    names = [w.name for w in walkers]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise InputError(f"'{twice[0]}' is named twice in the crowd; each walker walks once.")
    scales = [uniform_scale(np.asarray(w.world, float), f"'{w.name}'")[0] for w in walkers]
    fps = {float(w.params.fps) for w in walkers}
    if len(fps) > 1:
        raise InputError("The crowd's walkers must share one frame rate.")
    starts = {int(w.params.frame_start) for w in walkers}
    if len(starts) > 1:
        raise InputError("The crowd's walkers must start on the same frame.")
    return scales, fps.pop()
