"""Live preview: while a generator's Preview is on, changing its settings regenerates the motion in
a background thread and every 3D view shows it — a ghost of the deform skeleton at the current
frame, the foot plants, the pelvis path, the generator's overlays (the handshake's grip points) and
a status line — without writing anything to the file. Generate then bakes the Clips the preview
showed when nothing changed since (the preview leaves them in ``operators/previewed.py``).

Modules: :mod:`.properties` (the Preview toggle and the update callback every setting carries),
:mod:`.session` (one generator's preview: change → cancel → regenerate → result), :mod:`.runtime`
(the running previews, the timer and handlers they hold), :mod:`.draw` (gpu/blf), :mod:`.reads`
(scene reads kept between regenerations). The key of a generator's inputs is
``operators/inputs.py``; what is drawn is computed by ``procanim_addon/ghost.py``. See
``docs/preview.md``.
"""

from __future__ import annotations

from . import runtime
from .properties import notify_preview, preview_property

__all__ = ["notify_preview", "preview_property", "runtime", "unregister"]


def unregister() -> None:
    """Every preview off and every hook out (nothing is hooked until a Preview is turned on)."""
    runtime.stop_all()
