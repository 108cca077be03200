"""What the engine declares about one generator: :class:`GeneratorSpec`.

Each generator's engine package exports one ``SPEC`` (``duck.SPEC``, ``handshake/spec.py``,
``walk/spec.py``, ``terrain/spec.py``, ``motions.SPEC``, ``crowd/spec.py``, ``fix_feet/spec.py``), and
:mod:`.registry` lists them. Everything here is plain Python and numpy: the Blender side
(``operators/<id>.py``) reads the scene into the inputs of :attr:`GeneratorSpec.call`, and the
panel, the batch report and scripts show :attr:`GeneratorSpec.metrics`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .clip import Clip
from .ghost import NO_OVERLAYS, Overlays
from .metric_table import COMMON, Metric


@dataclass(frozen=True)
class GeneratorSpec:
    """One generator, as the engine knows it.

    * ``id`` — ``Clip.generator``, ``action.procanim.generator``, the operator ``procanim.<id>`` and
      the Blender module ``operators/<id>.py``;
    * ``label``, ``description`` — how the sidebar, the menus and the operator name it;
    * ``params`` — the parameter dataclass (``validate()`` raises :class:`~.errors.InputError`);
    * ``engine`` — the method itself: ``engine(..., params, progress=no_progress)`` (see
      :mod:`.progress`); the golden Clips and the engine fuzz test call it;
    * ``call`` — what a bake runs: ``call(*inputs, progress=...)`` → one Clip per armature baked,
      in order (the engine and whatever the engine does to its Clips after: metrics, root motion).
      Its inputs are plain data, so it runs in any thread;
    * ``metrics`` — the figures the sidebar shows after a bake, in order (:data:`.metric_table.COMMON`
      follow them);
    * ``overlays`` — what the live preview's ghost marks beyond bones, pelvis path and foot plants.
    """

    id: str
    label: str
    description: str
    params: type
    engine: Callable
    call: Callable[..., list[Clip]]
    metrics: tuple[Metric, ...] = ()
    overlays: Overlays = NO_OVERLAYS

    @property
    def operator(self) -> str:
        """The operator's ``bl_idname`` (``bpy.ops.procanim.<id>``)."""
        return f"procanim.{self.id}"

    def rows(self) -> tuple[Metric, ...]:
        """The rows a panel shows: the generator's own, then the common ones."""
        return self.metrics + COMMON

    def metric(self, key: str) -> Metric | None:
        """The row of ``key`` (None when it is not shown)."""
        return next((m for m in self.rows() if m.key == key), None)
