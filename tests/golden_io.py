"""Save and load engine calls (inputs and the Clips they returned) as plain arrays + JSON.

Used by ``tools/record_golden.py`` (which records the calls the demo scenes and a few engine scenes
make) and by ``tests/engine/test_golden_clips.py`` (which replays them on the current engine and
asserts the Clips are unchanged). Objects are stored by their data, never pickled, so a refactor of
a class does not make the fixture unreadable: Skeleton, RigMap, Clip, TerrainMesh and the analytic
grounds are rebuilt from their fields; parameter dataclasses from their field values.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
from pathlib import Path

import numpy as np

GOLDEN_DIR = Path(__file__).resolve().parent / "golden"


class _Writer:
    def __init__(self):
        self.arrays: dict[str, np.ndarray] = {}

    def array(self, a) -> dict:
        key = f"a{len(self.arrays)}"
        self.arrays[key] = np.asarray(a)
        return {"__array__": key}

    def encode(self, x):  # noqa: PLR0911 - one branch per stored type
        # Classes are recognised by name, so calls recorded inside Blender (where the engine is
        # ``bl_ext.<repo>.procanim.procanim_addon``) store the same records as plain imports.
        kind = type(x).__name__ if _engine_module(type(x)) else ""
        if x is None or isinstance(x, (bool, int, float, str)):
            return x
        if isinstance(x, (np.floating, np.integer, np.bool_)):
            return x.item()
        if isinstance(x, np.ndarray):
            return self.array(x)
        if isinstance(x, tuple):
            return {"__tuple__": [self.encode(v) for v in x]}
        if isinstance(x, list):
            return [self.encode(v) for v in x]
        if isinstance(x, dict):
            return {"__dict__": [[self.encode(k), self.encode(v)] for k, v in x.items()]}
        if kind == "Skeleton":
            return {
                "__skeleton__": {
                    "names": list(x.names),
                    "parents": self.array(x.parents),
                    "matrix_local": self.array(x.matrix_local),
                    "lengths": self.array(x.lengths),
                    "inherit_rotation": list(map(bool, x.inherit_rotation)),
                    "inherit_scale": list(x.inherit_scale),
                    "local_location": list(map(bool, x.local_location)),
                    "connected": list(map(bool, x.connected)),
                }
            }
        if kind == "RigMap":
            return {"__rigmap__": {"roles": dict(x.roles), "family": x.family,
                                   "spine_bones": list(x.spine_bones), "rig_name": x.rig_name}}
        if kind == "TerrainMesh":
            return {"__terrain__": {"vertices": self.array(x.vertices), "triangles": self.array(x.triangles),
                                    "name": x.name}}
        if kind == "Clip":
            return {"__clip__": {k: self.encode(getattr(x, k)) for k in _CLIP_FIELDS}}
        if kind and dataclasses.is_dataclass(x):
            cls = type(x)
            fields = {f.name: self.encode(getattr(x, f.name)) for f in dataclasses.fields(x) if f.init}
            return {"__dataclass__": f"{_engine_module(cls)}:{cls.__qualname__}", "fields": fields}
        raise TypeError(f"golden_io cannot store {type(x).__name__}")


def _engine_module(cls) -> str:
    """``procanim_addon.x.y`` for an engine class (whatever package holds the engine), else ''."""
    module = cls.__module__
    at = module.find("procanim_addon")
    return module[at:] if at >= 0 else ""


_CLIP_FIELDS = ("bone_names", "frames", "fps", "locations", "rotations", "scales", "key_location", "key_rotation",
                "object_locations", "object_rotations", "generator", "metrics")


def _decode(x, arrays):  # noqa: PLR0911
    from procanim_addon.clip import Clip
    from procanim_addon.rig_roles import RigMap
    from procanim_addon.skeleton import Skeleton
    from procanim_addon.terrain.mesh import TerrainMesh

    if isinstance(x, list):
        return [_decode(v, arrays) for v in x]
    if not isinstance(x, dict):
        return x
    if "__array__" in x:
        return arrays[x["__array__"]]
    if "__tuple__" in x:
        return tuple(_decode(v, arrays) for v in x["__tuple__"])
    if "__dict__" in x:
        return {_decode(k, arrays): _decode(v, arrays) for k, v in x["__dict__"]}
    if "__skeleton__" in x:
        return Skeleton(**{k: _decode(v, arrays) for k, v in x["__skeleton__"].items()})
    if "__rigmap__" in x:
        return RigMap(**x["__rigmap__"])
    if "__terrain__" in x:
        d = x["__terrain__"]
        return TerrainMesh(_decode(d["vertices"], arrays), _decode(d["triangles"], arrays), name=d["name"])
    if "__clip__" in x:
        return Clip(**{k: _decode(v, arrays) for k, v in x["__clip__"].items()})
    if "__dataclass__" in x:
        module, name = x["__dataclass__"].split(":")
        cls = importlib.import_module(module)
        for part in name.split("."):
            cls = getattr(cls, part)
        return cls(**{k: _decode(v, arrays) for k, v in x["fields"].items()})
    raise TypeError(f"golden_io: unknown record {list(x)[:3]}")


def save_case(path: Path, generator: str, args: tuple, kwargs: dict, result) -> None:
    """Store one engine call: ``generator`` names the registry entry that replays it."""
    w = _Writer()
    record = {"generator": generator, "args": w.encode(tuple(args)), "kwargs": w.encode(dict(kwargs)),
              "result": w.encode(result)}
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, __record__=np.array(json.dumps(record)), **w.arrays)


def load_case(path: Path):
    """``(generator, args, kwargs, result)`` of a stored call."""
    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files if k != "__record__"}
        record = json.loads(str(data["__record__"]))
    return (record["generator"], _decode(record["args"], arrays), _decode(record["kwargs"], arrays),
            _decode(record["result"], arrays))
