"""Fix Feet: find the contacts of any motion and hold its feet (the fifth generator's engine).

Contacts after Ikemoto, Arikan & Forsyth, "Knowing when to put your foot down" (I3D 2006); holding
after Kovar, Schreiner & Gleicher, "Footskate cleanup for motion capture editing" (SCA 2002). The
project's notes: ``docs/fix_feet.md``.

Entry point: :func:`fix_feet` ``(skeleton, rigmap, source Clip, ground | None, overrides | None,
params, progress) -> FixFeetResult`` (:func:`generate_fix_feet` returns its Clip only).

Modules, in the order the method uses them: ``params`` (settings and limits), ``feet`` (legs,
heel and ball points, sole heights), ``floor`` (the ground or the motion's own floor), ``contacts``
(detection), ``markers`` (the user's contacts), ``plants`` (where a held foot goes, roll and
blends), ``reach`` (pelvis drop, shortened contacts), ``legs`` (two-bone re-solve with the source's
swivel), ``report`` (figures and their rows), ``overlay`` (what the preview draws), ``generate``
(the entry point); ``footskate`` adds known skate to a clean motion for tests and benches.
"""

from .generate import FixFeetResult, fix_feet, generate_fix_feet
from .markers import ContactOverrides, overrides_from_markers
from .params import LIMITS, FixFeetParams
from .report import METRICS

__all__ = ["FixFeetParams", "FixFeetResult", "ContactOverrides", "LIMITS", "METRICS", "fix_feet",
           "generate_fix_feet", "overrides_from_markers"]
