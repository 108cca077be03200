"""Bake one shot inside a running Blender (a batch worker, or the command's own process).

:func:`bake` takes the plain spec of :meth:`jobfile.Shot.spec` and: opens the input .blend
(``wm.open_mainfile``, its scripts off unless the spec trusts them, see :mod:`.scripts`; an
empty scene when the shot only imports), imports the motion file with
Blender's importer onto a new armature when asked, runs the generator operator with the shot's
settings, saves the scene to the output .blend, exports the FBX and the glTF when asked
(``operators/export.py``, the settings ``procanim.export`` uses), and writes the metrics
JSON. Each file is written to a temporary name in the output folder and moved into place
(:mod:`.outputs`); the metrics JSON comes last, so a shot is complete exactly when its JSON is there
with the shot's content hash (see :mod:`.hashing`).

Never raises for a shot's own problem: the result is ``{"status": "failed", "message": ...}``
(the operator's own message for bad input), and nothing is written for a failed shot.

Runs on the main thread of a process that has ``bpy`` with the extension enabled (Blender crashes
when ``wm.open_mainfile`` runs on another thread, which is why Dask workers keep Blender in a
child process).
"""

from __future__ import annotations

import json
import os
import socket
import time
import traceback
from pathlib import Path

import bpy

from ..operators.export import export_character
from ..operators.objects import last_bake
from .hashing import extension_version
from .outputs import partial, sweep, write_json
from .scripts import ANIMATED_DATA, refusal_message

# ------------------------------------------------------------------ the .blend's own scripts (scripts.py)


def open_blend(path: str, trusted: bool) -> None:
    """Open ``path`` as the current file; its scripts run only when ``trusted``."""
    bpy.ops.wm.open_mainfile(filepath=path, load_ui=False, use_scripts=trusted)


def refused_drivers() -> list[str]:
    """The drivers of the open file that Blender refused to run (``owner: path[index] = expression``).

    Evaluates the scene once: Blender decides per driver, when it first evaluates it."""
    bpy.context.view_layer.update()
    if not bpy.app.autoexec_fail:  # set when Blender skipped a script of this file
        return []
    found = []
    for collection in ANIMATED_DATA:
        for owner in getattr(bpy.data, collection):
            animation = getattr(owner, "animation_data", None)
            for fcurve in animation.drivers if animation is not None else ():
                driver = fcurve.driver
                if driver.type == "SCRIPTED" and not driver.is_valid and not driver.is_simple_expression:
                    found.append(f"{owner.name}: {fcurve.data_path}[{fcurve.array_index}] = {driver.expression}")
    return found


def registered_texts() -> list[str]:
    """The text blocks of the open file registered as modules (run at load only when trusted)."""
    return sorted(text.name for text in bpy.data.texts if text.use_module)


# ------------------------------------------------------------------ the shot


def _bake_of(obj, generator: str):
    """The armature's bake of ``generator``: its active action, or its own NLA strip's (``bake_to``)."""
    return last_bake(obj, generator, strips=True)


def _armature_state(generator: str) -> dict:
    state = {}
    for obj in bpy.data.objects:
        if obj.type == "ARMATURE":
            action = _bake_of(obj, generator)
            state[obj.name] = (action.name if action else None, action.procanim.metrics_json if action else None)
    return state


def _baked_targets(generator: str, before: dict) -> list:
    """The armatures the bake wrote: their bake of the generator (the active action or its own NLA
    strip's) is new or rewritten."""
    targets = []
    for obj in bpy.data.objects:
        action = _bake_of(obj, generator) if obj.type == "ARMATURE" else None
        if action is None or action.procanim.owner != obj.name:
            continue
        if before.get(obj.name) != (action.name, action.procanim.metrics_json):
            targets.append(obj)
    return targets


def _open(spec: dict) -> None:
    """Open the shot's scene; raises when it needs Python drivers the run does not trust."""
    trusted = bool(spec.get("trust_scripts"))
    if spec["blend"]:
        open_blend(spec["blend"], trusted)
        refused = [] if trusted else refused_drivers()
        if refused:
            raise RuntimeError(refusal_message(refused))
    else:
        bpy.ops.wm.read_homefile(use_factory_startup=True, use_empty=True)


def _import(spec: dict) -> str:
    """Import the shot's motion file; the new armature gets the shot's name. Returns that name."""
    imp = spec["import"]
    before = set(bpy.data.objects)
    category, name = imp["operator"].split(".")
    getattr(getattr(bpy.ops, category), name)(filepath=imp["file"], **imp["options"])
    new = [o for o in bpy.data.objects if o not in before and o.type == "ARMATURE"]
    if not new:
        raise ValueError(f"importing {Path(imp['file']).name} made no armature")
    new[0].name = imp["name"]
    if new[0].name != imp["name"]:
        raise ValueError(f"the imported armature cannot be named '{imp['name']}': an object of that name exists")
    return new[0].name


def _save_blend(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    sweep(path)
    tmp = partial(path, ".blend")
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp), copy=True, check_existing=False)
    os.replace(tmp, path)
    sweep(path)  # again: a worker killed while saving this shot may have ended only meanwhile


def _export(path: Path, targets: list, fmt: str, generator: str) -> None:
    """Each baked armature, its meshes and its bake (``operators/export.py``, as ``procanim.export``
    writes them) to ``path``, one file per armature (the second and later: ``<stem>.<armature>``).
    FBX and .glb go through a temporary file; a .gltf is written in place (its .bin beside it
    carries the name the .gltf refers to)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    sweep(path)
    for k, obj in enumerate(targets):
        final = path if k == 0 else path.with_name(f"{path.stem}.{obj.name}{path.suffix}")
        if fmt == "GLTF":
            export_character(obj, final, fmt, generator)
            continue
        tmp = partial(final, final.suffix)
        export_character(obj, tmp, fmt, generator)
        os.replace(tmp, final)


def _message(err: BaseException) -> str:
    """An operator's error report without Blender's ``Error: `` prefix and trailing newline."""
    text = str(err).strip()
    return text[len("Error: ") :] if text.startswith("Error: ") else text


def bake(spec: dict) -> dict:
    """Bake the shot ``spec``; returns its result (status ``done`` or ``failed``, timings in seconds)."""
    t = {"start": time.perf_counter()}
    cpu0 = time.process_time()
    trusted = bool(spec.get("trust_scripts"))
    result = {"shot": spec["name"], "status": "failed", "pid": os.getpid(), "host": socket.gethostname()}
    result["trust_scripts"] = trusted
    stage = "open"
    try:
        _open(spec)
        not_run = [] if trusted else registered_texts()
        t["open"] = time.perf_counter()
        stage = "import"
        if spec["import"]:
            _import(spec)
        t["import"] = time.perf_counter()
        stage = "bake"
        before = _armature_state(spec["generator"])
        category, name = spec["operator"].split(".")
        outcome = getattr(getattr(bpy.ops, category), name)(**spec["settings"])
        t["bake"] = time.perf_counter()
        if outcome != {"FINISHED"}:
            raise RuntimeError(f"{spec['operator']} returned {sorted(outcome)}")
        targets = _baked_targets(spec["generator"], before)
        if not targets:
            raise RuntimeError(f"{spec['operator']} finished but no armature holds a new {spec['generator']} action")
        stage = "save"
        _save_blend(Path(spec["output"]))
        t["save"] = time.perf_counter()
        stage = "fbx"
        if spec["fbx"]:
            _export(Path(spec["fbx"]), targets, "FBX", spec["generator"])
        stage = "gltf"
        if spec.get("gltf"):
            gltf = Path(spec["gltf"])
            _export(gltf, targets, "GLTF" if gltf.suffix.lower() == ".gltf" else "GLB", spec["generator"])
        t["fbx"] = time.perf_counter()
    except Exception as err:  # the shot fails alone; the worker goes on with the next one
        result["message"] = f"{stage}: {_message(err)}"
        if not isinstance(err, RuntimeError):
            result["traceback"] = traceback.format_exc()
        result["seconds"] = {"total": time.perf_counter() - t["start"]}
        return result
    seconds = {
        "open": t["open"] - t["start"],
        "import": t["import"] - t["open"],
        "bake": t["bake"] - t["import"],
        "save": t["save"] - t["bake"],
        "fbx": t["fbx"] - t["save"],
    }
    armatures = [
        {
            "armature": obj.name,
            "action": action.name,
            "metrics": json.loads(action.procanim.metrics_json or "{}"),
        }
        for obj, action in ((o, _bake_of(o, spec["generator"])) for o in targets)
    ]
    metrics = {
        "shot": spec["name"],
        "generator": spec["generator"],
        "input_hash": spec["input_hash"],
        "settings": spec["settings"],
        "inputs": {"blend": spec["blend"], "import": spec["import"]},
        "outputs": {"blend": spec["output"], "fbx": spec["fbx"], "gltf": spec.get("gltf"), "metrics": spec["metrics"]},
        "armatures": armatures,
        "blender": bpy.app.version_string,
        "extension": extension_version(),
        "worker": {"host": result["host"], "pid": result["pid"]},
        "trust_scripts": trusted,
        "scripts_not_run": not_run,  # the .blend's registered text blocks (drivers: see scripts.py)
        "seconds": seconds,
    }
    write_json(Path(spec["metrics"]), metrics)
    seconds["metrics"] = time.perf_counter() - t["fbx"]
    seconds["total"] = time.perf_counter() - t["start"]
    seconds["cpu"] = time.process_time() - cpu0  # this process's CPU time for the whole shot
    result.update(status="done", armatures=[a["armature"] for a in armatures], seconds=seconds)
    return result
