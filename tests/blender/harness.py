"""Helpers for the Blender tests: build, install and enable the extension; read baked animation.

Runs under the ``bpy`` wheels (4.2, 4.5, 5.0; Python 3.11) and inside a real Blender binary
(Python 3.13, numpy 2, no venv), so it imports only the stdlib, ``bpy``, ``numpy`` and ``pytest``.

The Blender-version branch in :func:`fcurves_of` is for the tests only: it reads actions the way
each Blender version stores them, independently of the add-on's own (single) branch.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import bpy
import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[2]
EXTENSION_ID = "procanim"
TEST_REPO_MODULE = "procanim_tests"


# --------------------------------------------------------------------------------------------
# Build


def _load_build_tool():
    """``tools/build.py`` as a module (``tools/`` is not a package and is not shipped)."""
    path = REPO_ROOT / "tools" / "build.py"
    spec = importlib.util.spec_from_file_location("procanim_build_tool", path)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def build_zip(out_dir: Path) -> Path:
    """Build and validate the extension zip with the running Blender's own builder."""
    scripts_dir = Path(bpy.utils.system_resource("SCRIPTS"))
    return _load_build_tool().build(out_dir=out_dir, scripts_dir=scripts_dir)


# --------------------------------------------------------------------------------------------
# Install / enable


@dataclass
class InstalledExtension:
    """Where the extension under test lives once installed."""

    zip_path: Path
    repo_dir: Path
    repo_module: str

    @property
    def module(self) -> str:
        """The Python module of the installed add-on, e.g. ``bl_ext.procanim_tests.procanim``."""
        return f"bl_ext.{self.repo_module}.{EXTENSION_ID}"


def reset_scene() -> None:
    """An empty factory scene. Unlike ``wm.read_factory_settings`` it keeps the preferences,
    so the installed extension stays enabled."""
    result = bpy.ops.wm.read_homefile(use_factory_startup=True, use_empty=True)
    assert result == {"FINISHED"}, f"read_homefile returned {result}"


def append_object(blend: Path, object_name: str, name: str | None = None, location=(0.0, 0.0, 0.0)):
    """Append a copy of the object ``object_name`` of the file ``blend`` into the current scene, as the
    active object, renamed ``name`` (when given) and placed at ``location`` (world units)."""
    with bpy.data.libraries.load(str(blend), link=False) as (_src, dst):
        dst.objects = [object_name]
    obj = dst.objects[0]
    if name:
        obj.name = name
    obj.location = location
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    bpy.context.view_layer.update()
    return obj


def _remove_repo(repo_module: str) -> None:
    repos = bpy.context.preferences.extensions.repos
    for repo in list(repos):
        if repo.module == repo_module:
            repos.remove(repo)


def install_extension(zip_path: Path, repo_dir: Path, repo_module: str = TEST_REPO_MODULE) -> InstalledExtension:
    """Install ``zip_path`` into a new local repository and enable it, as Install from Disk does."""
    prefs = bpy.context.preferences
    # The tests must not leave a repository pointing at a deleted temp dir in the user's prefs.
    prefs.use_preferences_save = False
    _remove_repo(repo_module)
    repo_dir.mkdir(parents=True, exist_ok=True)
    prefs.extensions.repos.new(name="ProcAnim tests", module=repo_module, custom_directory=str(repo_dir))
    result = bpy.ops.extensions.package_install_files(
        filepath=str(zip_path), repo=repo_module, enable_on_install=True
    )
    assert result == {"FINISHED"}, f"package_install_files returned {result}"
    installed = InstalledExtension(zip_path=zip_path, repo_dir=repo_dir, repo_module=repo_module)
    assert (repo_dir / EXTENSION_ID / "blender_manifest.toml").is_file(), (
        f"the zip was not unpacked into {repo_dir / EXTENSION_ID}"
    )
    return installed


def uninstall_extension(installed: InstalledExtension) -> None:
    """Disable the add-on and forget the test repository (files are left to the temp dir)."""
    if is_enabled(installed.module):
        disable(installed.module)
    _remove_repo(installed.repo_module)


def is_enabled(module: str) -> bool:
    """True if the add-on is enabled in the preferences and its module is loaded."""
    import addon_utils

    default_enabled, loaded = addon_utils.check(module)
    return bool(default_enabled and loaded and module in bpy.context.preferences.addons)


def _raise(exc: BaseException) -> None:
    raise exc


def enable(module: str) -> None:
    """Enable the add-on; any exception raised by its ``register()`` propagates."""
    import addon_utils

    addon_utils.enable(module, default_set=True, handle_error=_raise)
    assert is_enabled(module), f"{module} is not enabled after addon_utils.enable"


def disable(module: str) -> None:
    """Disable the add-on; any exception raised by its ``unregister()`` propagates."""
    import addon_utils

    addon_utils.disable(module, default_set=True, handle_error=_raise)
    assert not is_enabled(module), f"{module} is still enabled after addon_utils.disable"


def procanim_operator_names() -> list[str]:
    """Names of the registered ``bpy.ops.procanim.*`` operators (``["add_human", ...]``)."""
    return sorted(name for name in dir(bpy.ops.procanim) if not name.startswith("_"))


# --------------------------------------------------------------------------------------------
# Reading animation back


def evaluated_pose(obj, frame: int, space: str = "ARMATURE") -> dict[str, np.ndarray]:
    """``{bone name: (4, 4) matrix}`` of the evaluated pose at ``frame``.

    ``space`` is ``"ARMATURE"`` (``pose_bone.matrix``) or ``"WORLD"`` (``matrix_world @ matrix``).
    Uses ``scene.frame_set``: fine in tests, never in the add-on.
    """
    if space not in ("ARMATURE", "WORLD"):
        raise ValueError(f"space must be 'ARMATURE' or 'WORLD', not {space!r}")
    scene = bpy.context.scene
    scene.frame_set(int(frame))
    depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = obj.evaluated_get(depsgraph)
    world = np.array(evaluated.matrix_world, dtype=np.float64)
    pose = {}
    for pose_bone in evaluated.pose.bones:
        matrix = np.array(pose_bone.matrix, dtype=np.float64)
        pose[pose_bone.name] = world @ matrix if space == "WORLD" else matrix
    return pose


def deform_points(obj, frames) -> np.ndarray:
    """World positions ``(F, 2D, 3)`` of the heads and tails of ``obj``'s deform bones on each frame,
    as Blender evaluates them (``frame_set``: fine in a test)."""
    bones = [b for b in obj.data.bones if b.use_deform]
    index = {pb.name: i for i, pb in enumerate(obj.pose.bones)}
    rows = [index[b.name] for b in bones]
    tip = np.array([[0.0, b.length, 0.0, 1.0] for b in bones])
    flat = np.empty(len(index) * 16, dtype=np.float32)
    out = np.empty((len(frames), 2 * len(bones), 3))
    scene = bpy.context.scene
    for k, f in enumerate(frames):
        scene.frame_set(int(f))
        evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
        evaluated.pose.bones.foreach_get("matrix", flat)
        mats = np.array(evaluated.matrix_world) @ flat.reshape(-1, 4, 4).transpose(0, 2, 1)[rows].astype(float)
        out[k, 0::2] = mats[:, :3, 3]
        out[k, 1::2] = np.einsum("bij,bj->bi", mats, tip)[:, :3]
    return out


def foot_columns(obj, prefix: str = "") -> list[int]:
    """Columns of :func:`deform_points` that are the heads and tails of foot and toe bones (whose
    names start with ``prefix``, any case)."""
    names = [b.name.lower() for b in obj.data.bones if b.use_deform]
    feet = [i for i, n in enumerate(names) if ("foot" in n or "toe" in n) and n.startswith(prefix.lower())]
    return [c for i in feet for c in (2 * i, 2 * i + 1)]


def held_skate_cm_s(points: np.ndarray, still: np.ndarray, fps: float) -> float:
    """Mean horizontal speed (cm/s) of the foot points ``(F, P, 3)`` over the frame pairs ``still``
    ``(F-1, P)`` (where the dense bake holds them)."""
    step = np.linalg.norm(np.diff(points[:, :, :2], axis=0), axis=-1) * fps
    return float(step[still].mean() * 100.0) if still.any() else 0.0


def _slot_of(action, obj):
    """The action slot that ``obj`` animates ``action`` with (Blender 4.4+): as its active action, else
    in an NLA strip; None when it does not use it."""
    anim = getattr(obj, "animation_data", None) if obj is not None else None
    if anim is None:
        return None
    if anim.action == action:
        return anim.action_slot
    return next((s.action_slot for t in anim.nla_tracks for s in t.strips if s.action == action), None)


def fcurves_of(action, obj=None) -> list:
    """The F-curves of ``action`` that animate ``obj``, on every supported Blender version.

    - 4.2/4.3: ``action.fcurves`` (``obj`` is not needed).
    - 4.4/4.5: the channelbag of ``obj``'s slot in ``action.layers[0].strips[0]``.
    - 5.0+: the same channelbag (``Action.fcurves`` no longer exists).

    On 4.4+ an action that ``obj`` does not use, or uses with no slot assigned, yields ``[]``:
    that is exactly the "keys written but the object does not move" bug tests must catch.
    """
    if bpy.app.version < (4, 4, 0):
        return list(action.fcurves)
    slot = _slot_of(action, obj)
    if slot is None or len(action.layers) == 0 or len(action.layers[0].strips) == 0:
        return []
    channelbag = action.layers[0].strips[0].channelbag(slot)
    return [] if channelbag is None else list(channelbag.fcurves)


def fcurve_map(action, obj=None) -> dict[tuple[str, int], object]:
    """``{(data_path, array_index): fcurve}`` from :func:`fcurves_of`."""
    return {(fc.data_path, fc.array_index): fc for fc in fcurves_of(action, obj)}


def keyframes(fcurve) -> np.ndarray:
    """``(n, 2)`` array of ``(frame, value)`` keyframe coordinates."""
    n = len(fcurve.keyframe_points)
    co = np.empty(2 * n, dtype=np.float32)
    fcurve.keyframe_points.foreach_get("co", co)
    return co.reshape(n, 2).astype(np.float64)


# --------------------------------------------------------------------------------------------
# Drawing panels without a window


class RecordingLayout:
    """Stands in for a UILayout (there is no window here): records what a draw() asks for, and
    checks that every property and operator argument it names exists (a typo would otherwise only
    print in Blender's console). Log entries: ``("prop", name)``, ``("label", text)``,
    ``("operator", idname, text)``, ``("arg", idname, name, value)``, ``("menu", idname)``."""

    def __init__(self, log):
        self.log = log
        self.enabled = True

    def __getattr__(self, name):  # row, column, box, grid_flow, split … return sub-layouts
        return lambda *a, **k: RecordingLayout(self.log)

    def prop(self, data, name, **_kw):
        assert name in data.bl_rna.properties, f"a panel draws a missing property {name!r} of {data}"
        self.log.append(("prop", name))

    def prop_search(self, data, name, *_a, **_kw):
        self.prop(data, name)

    def label(self, text="", **_kw):
        self.log.append(("label", text))

    def menu(self, idname, **_kw):
        self.log.append(("menu", idname))

    def operator(self, idname, text="", **_kw):
        module, name = idname.split(".")
        names = getattr(getattr(bpy.ops, module), name).get_rna_type().properties.keys()
        log = self.log

        class Args:
            def __setattr__(self, key, value):
                assert key in names, f"{idname} has no argument {key!r}"
                log.append(("arg", idname, key, value))
                object.__setattr__(self, key, value)

        log.append(("operator", idname, text))
        return Args()


class _Drawer:
    """Stands in for a panel or menu instance: its layout records, other attributes are the class's."""

    def __init__(self, layout, owner):
        self.layout, self._owner = layout, owner

    def __getattr__(self, name):
        if self._owner is None and name == "bl_rna":
            return None
        return getattr(self._owner, name)


def draw_log(draw, owner=None) -> list:
    """What ``draw(self, context)`` (a panel's or menu's draw, or the panel or menu class itself)
    asks of its layout."""
    if isinstance(draw, type):
        owner, draw = draw, draw.draw
    log: list = []
    draw(_Drawer(RecordingLayout(log), owner), bpy.context)
    return log


def button_args(log, idname: str) -> dict:
    """The arguments a drawn button of operator ``idname`` carries (the last such button)."""
    starts = [i for i, e in enumerate(log) if e[0] == "operator" and e[1] == idname]
    assert starts, f"no {idname} button was drawn"
    args = {}
    for entry in log[starts[-1] + 1 :]:
        if entry[0] != "arg" or entry[1] != idname:
            break
        args[entry[2]] = entry[3]
    return args


def baked_action(obj):
    """The action of ``obj``'s bake: the active action, or with none (a bake onto an NLA strip) the
    action of the strip on the newest track."""
    ad = obj.animation_data
    if ad.action is not None:
        return ad.action
    strips = [s for t in ad.nla_tracks for s in t.strips if s.action is not None]
    assert strips, f"{obj.name}: no active action and no NLA strip"
    return strips[-1].action


def baked_metrics(obj) -> dict:
    """The figures the last bake stored on its action (:func:`baked_action`, ``procanim.metrics_json``)."""
    return json.loads(baked_action(obj).procanim.metrics_json)


def baked_frames(obj) -> np.ndarray:
    """Every frame number the bake on ``obj``'s action covers, its first to its last."""
    m = baked_metrics(obj)
    return np.arange(int(m["frame_start"]), int(m["frame_end"]) + 1)


def keyed_paths(obj) -> set[str]:
    """The data paths of the F-curves ``obj``'s action keys for ``obj``."""
    return {fc.data_path for fc in fcurves_of(obj.animation_data.action, obj)}


def keyed_bones(obj) -> set[str]:
    """The names of the pose bones ``obj``'s action keys."""
    return {p[len('pose.bones["') :].split('"]', 1)[0] for p in keyed_paths(obj) if p.startswith('pose.bones["')}


def bake_recording_clips(extension, operator, **arguments) -> list:
    """Run ``operator(**arguments)`` (a ProcAnim bake, which must finish) and return the Clips it
    baked, ``[(armature name, Clip)]`` in order: what the engine meant, to rebuild the intended pose
    independently of what Blender shows."""
    base = addon_module(extension, "operators.base")
    seen, original = [], base.prepare_bake

    def prepare_bake(obj, clip, *args, **kwargs):
        seen.append((obj.name, clip))
        return original(obj, clip, *args, **kwargs)

    base.prepare_bake = prepare_bake
    try:
        assert operator(**arguments) == {"FINISHED"}
    finally:
        base.prepare_bake = original
    return seen


def addon_module(extension, name: str):
    """A module of the installed add-on, e.g. ``addon_module(ext, "procanim_addon.registry")``."""
    import importlib

    return importlib.import_module(f"{extension.module}.{name}")
