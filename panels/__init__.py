"""Sidebar (3D View ▸ N ▸ ProcAnim): property groups, panels, presets."""

from . import character, duck_walk, handshake, path_walk, properties, terrain

classes = (
    *properties.classes,
    *character.classes,
    *duck_walk.classes,
    *handshake.classes,
    *path_walk.classes,
    *terrain.classes,
)
