"""Sidebar (3D View ▸ N ▸ ProcAnim): property groups, panels, presets."""

from . import character, duck_walk, path_walk, properties

classes = (*properties.classes, *character.classes, *duck_walk.classes, *path_walk.classes)
