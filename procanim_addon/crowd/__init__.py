"""Crowds that avoid, vary and greet: many path walkers composed with reciprocal collision
avoidance (ORCA: van den Berg, Guy, Lin & Manocha, "Reciprocal n-body collision avoidance", ISRR
2009 / STAR 70, 2011) and the handshake (Deglorie et al. 2015). The project's notes:
``docs/path_walk.md`` (Crowds).

Entry point: :func:`generate_crowd` ``(walkers, params, progress) -> CrowdResult`` — each walker a
:class:`Walker` (what the path walk takes, plus its armature's world matrix), the crowd's settings
a :class:`CrowdParams`; the result holds one Clip per walker, what the preview's ghosts show per
walker (:class:`CrowdWalker`) and the crowd's figures.

Modules, in the order the method uses them: ``params`` (walkers, settings, limits), ``variation``
(seeded differences), ``greet`` (meetings and handshakes), ``routes`` (a walker's walk alone as a
route with a schedule), ``plan`` (the crowd's plan on the floor), ``orca`` (its half-planes and
linear programs), ``grid`` (nearby pairs), ``obstacles`` (footprints), ``retime`` (a trace
walked by the path walk), ``measure`` (pelvises on the clips), ``engine`` (the entry point).
"""

from .engine import CrowdResult, CrowdWalker, generate_crowd
from .obstacles import Footprint, footprint
from .params import LIMITS, CrowdParams, Walker

__all__ = ["generate_crowd", "CrowdParams", "CrowdResult", "CrowdWalker", "Walker", "Footprint", "footprint",
           "LIMITS"]
