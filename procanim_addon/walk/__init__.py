"""Path walk (METHODS.md §M3, Tsutsuguchi et al. 2000): a humanoid walks a path from ground reaction forces.

Modules, in the order the method uses them: ``path`` (arc length, corners, ground), ``steps``
(path division), ``timing`` (T, T_ds), ``forces`` (reaction-force model), ``com`` (COM by
shooting), ``feet`` (stance roll, swing orbit), ``turning`` (Ψ = ψ1 + ψ2), ``arms`` (driven
pendulum), ``gait`` (assembly into a Clip), ``metrics``.
"""

from .gait import generate_path_walk
from .params import ForceCoefficients, PathWalkParams

__all__ = ["generate_path_walk", "PathWalkParams", "ForceCoefficients"]
