"""Engine tests: plain Python + numpy, no Blender.

The repository root goes on ``sys.path`` so tests import ``procanim_addon`` as a top-level package.
When these tests run on their own (``bash tools/test.sh``'s engine stage, in a venv that *does*
have the bpy wheel), importing bpy, mathutils or bmesh is made to fail, so an engine module that
reaches for Blender fails its tests here instead of passing only because the wheel happens to be
installed. (Inside Blender, or in one pytest run together with tests/blender, bpy is already
loaded and nothing is blocked; tests/test_codebase.py checks the engine's imports statically.)
"""

from __future__ import annotations

import importlib.abc
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

BLENDER_MODULES = ("bpy", "mathutils", "bmesh")


class BlockBlenderModules(importlib.abc.MetaPathFinder):
    """Refuses ``import bpy`` (and mathutils, bmesh) for the duration of the engine tests."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in BLENDER_MODULES:
            raise ImportError(
                f"the engine must not import {fullname}: procanim_addon/ is pure Python + numpy",
                name=fullname,
            )
        return None


if not any(name in sys.modules for name in BLENDER_MODULES):
    sys.meta_path.insert(0, BlockBlenderModules())
