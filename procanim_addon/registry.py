"""The generators, listed once.

Every layer that needs "all generators" iterates :data:`GENERATORS`: the add-on's registration
(operators, panels, sidebar settings, menus), the demo, the benches, the batch command and the live
preview. An entry names, for one generator:

* ``id`` — the generator id: ``Clip.generator``, ``action.procanim.generator``, the module name of
  its operator (``operators/<id>.py``) and panel (``panels/<id>.py``), the operator
  (``procanim.<id>``) and the panel (``PROCANIM_PT_<id>``);
* ``settings`` — where the sidebar keeps its settings: ``scene.procanim.<settings>`` (user presets
  store these data paths, so the name stays when an id changes);
* ``parent`` — the id of the generator whose panel holds this one's as a sub-panel ("" = top level);
* ``engine`` — the engine entry point, ``engine(..., params, progress=no_progress)`` (see
  :mod:`.progress`), and ``params``, its parameter dataclass (with ``validate()``);
* ``demo`` and ``bench`` — its scene in ``tools/demos/<demo>.py`` and its benchmark
  ``bench/<bench>.py``;
* ``characters`` — how many armatures one bake writes (the handshake: two).

Adding a generator: write its engine package, ``operators/<id>.py`` and ``panels/<id>.py`` (see
``docs/architecture.md``), then add one line here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from . import duck, motions
from .handshake import HandshakeParams, generate_handshake
from .terrain.adapt import AdaptParams, adapt_to_terrain
from .walk import PathWalkParams, generate_path_walk


@dataclass(frozen=True)
class Generator:
    id: str
    label: str
    description: str
    engine: Callable
    params: type
    settings: str
    demo: str
    bench: str
    characters: int = 1
    parent: str = ""

    @property
    def operator(self) -> str:
        """The operator's ``bl_idname`` (``bpy.ops.procanim.<id>``)."""
        return f"procanim.{self.id}"

    @property
    def panel(self) -> str:
        """The sidebar panel's ``bl_idname``."""
        return f"PROCANIM_PT_{self.id}"


GENERATORS: tuple[Generator, ...] = (
    Generator("duck_walk", "Duck Walk", "Laban-style walk cycle with emotion presets on a bird rig",
              duck.generate_duck_walk, duck.DuckParams, settings="duck", demo="duck", bench="bake_speed"),
    Generator("handshake", "Handshake", "Two humanoids shake hands: invitation, approach, shake, retreat",
              generate_handshake, HandshakeParams, settings="handshake", demo="handshake",
              bench="handshake_blender", characters=2),
    Generator("path_walk", "Path Walk", "A humanoid walks along a curve over stairs and turns",
              generate_path_walk, PathWalkParams, settings="path_walk", demo="path_walk", bench="path_walk_blender"),
    Generator("adapt_terrain", "Terrain", "The armature's action re-fitted to an uneven terrain mesh",
              adapt_to_terrain, AdaptParams, settings="terrain", demo="terrain", bench="terrain_blender"),
    Generator("source_motion", "Source Motion", "A walk, jump or forward roll made on flat ground",
              motions.generate, motions.SourceMotionParams, settings="source_motion", demo="terrain",
              bench="terrain_engine", parent="adapt_terrain"),
)

BY_ID = {g.id: g for g in GENERATORS}


def get(generator_id: str) -> Generator:
    """The registry entry of ``generator_id`` (KeyError naming the known ids otherwise)."""
    try:
        return BY_ID[generator_id]
    except KeyError:
        raise KeyError(f"unknown generator {generator_id!r}; known: {', '.join(BY_ID)}") from None
