"""How slowly a walker walks: the one definition of "stopped" the plan and the walks share.

A walk slows by shorter and slower steps: its step length goes as √speed (the walk ratio, Sekiya
et al. 1997) down to :data:`SHORTEST_STEP` of its stride, and a step takes at most
:data:`SLOW_MAX` times its own time. The slowest walk is therefore :data:`SLOWEST` of the walker's
speed alone (a share f walks steps of √f of the stride in 1/√f of their time, so f ≥ 1/SLOW_MAX²;
SHORTEST_STEP/SLOW_MAX where the shortest step binds first). Progress slower than that is no
walk: the plan (:mod:`.plan`) has the walker stand instead (at least :data:`STAND_S`), and the
walks (:mod:`.retime`) cut its trace into legs where it is that slow, so both stand the walker
still at the same places and times.
"""

from __future__ import annotations

SLOW_MAX = 1.9  # a step takes at most this many times its own time (slower ones look like slow motion)
SHORTEST_STEP = 0.5  # a walker slowing down shortens its steps down to this share of its stride
SLOWEST = max(1.0 / SLOW_MAX ** 2, SHORTEST_STEP / SLOW_MAX)  # × the walker's speed alone: slower is standing
STAND_S = 1.5  # s: a walker that stops stands this long before it walks on (a walk's stop and start take that)
