"""Every key a set of dense bakes writes, dumped to a file, and two dumps compared: a refactoring of
the baker must write the same keys.

    <venv-bpy>/bin/python tools/dump_bake_keys.py dump OUT.npz [--root CHECKOUT]
    <venv-bpy>/bin/python tools/dump_bake_keys.py compare BEFORE.npz AFTER.npz

``dump`` builds and installs the extension of ``--root`` (default: this checkout) and bakes, each in
a fresh scene: ProcAnim's human walking an S-curve (root motion on the bone, then on the object),
the duck walk, and a generated Rigify human walking the same curve onto its IK, then its FK
controls. For every F-curve of each bake it stores the keys' coordinates, handles, handle types,
interpolation and key types, and the bake's metrics (timings left out). ``compare`` prints, per
bake, the F-curves that differ and the largest difference, and exits 1 when any does.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

ATTRS = ("co", "handle_left", "handle_right")
ENUMS = ("interpolation", "handle_left_type", "handle_right_type", "type")


def _install(root: Path) -> None:
    spec = importlib.util.spec_from_file_location("procanim_install", root / "tools" / "blender_install.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.install_extension("keys")


def _curve(name: str, length: float):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    from path_walk_blender import add_curve, s_curve

    return add_curve(name, s_curve(length))


def _fcurves(obj):
    import bpy

    action = obj.animation_data.action
    if bpy.app.version < (4, 4, 0):
        return list(action.fcurves)
    slot = obj.animation_data.action_slot
    return [fc for ly in action.layers for st in ly.strips for bag in st.channelbags if bag.slot == slot
            for fc in bag.fcurves]


def _record(label: str, obj, out: dict) -> None:
    for fc in _fcurves(obj):
        points = fc.keyframe_points
        n = len(points)
        key = f"{label}|{fc.data_path}|{fc.array_index}|{fc.group.name if fc.group else ''}"
        for attr in ATTRS:
            arr = np.empty(2 * n, dtype=np.float32)
            points.foreach_get(attr, arr)
            out[f"{key}|{attr}"] = arr
        for attr in ENUMS:
            out[f"{key}|{attr}"] = np.array([getattr(p, attr) for p in points])
    metrics = json.loads(obj.animation_data.action.procanim.metrics_json)
    metrics = {k: v for k, v in metrics.items() if not k.endswith("_ms")}
    out[f"{label}|metrics"] = np.array(json.dumps(metrics, sort_keys=True))


def _rigify_library(folder: Path) -> Path:
    import addon_utils
    import bpy

    addon_utils.enable("rigify", default_set=True)
    bpy.ops.wm.read_homefile(use_factory_startup=True, use_empty=True)
    bpy.ops.object.armature_human_metarig_add()
    assert bpy.ops.pose.rigify_generate() == {"FINISHED"}
    rig = bpy.context.active_object
    rig.name = "RigifyHuman"
    path = folder / "human.blend"
    bpy.data.libraries.write(str(path), {rig}, fake_user=True)
    return path


def _append_rigify(path: Path):
    import bpy

    with bpy.data.libraries.load(str(path), link=False) as (_, dst):
        dst.objects = ["RigifyHuman"]
    obj = dst.objects[0]
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.update()
    return obj


def dump(out_path: Path, root: Path) -> None:
    import bpy

    bpy.ops.wm.read_homefile(use_factory_startup=True, use_empty=True)
    _install(root)
    out: dict = {}
    for label, root_motion in (("human_bone", "BONE"), ("human_object", "OBJECT")):
        bpy.ops.wm.read_homefile(use_factory_startup=True, use_empty=True)
        assert bpy.ops.procanim.add_human(name="Hero") == {"FINISHED"}
        _curve("Path", 12.0)
        assert bpy.ops.procanim.path_walk(armature="Hero", path="Path", root_motion=root_motion) == {"FINISHED"}
        _record(label, bpy.data.objects["Hero"], out)
    bpy.ops.wm.read_homefile(use_factory_startup=True, use_empty=True)
    assert bpy.ops.procanim.add_duck(name="Duck") == {"FINISHED"}
    assert bpy.ops.procanim.duck_walk(armature="Duck") == {"FINISHED"}
    _record("duck", bpy.data.objects["Duck"], out)
    library = _rigify_library(Path(tempfile.mkdtemp(prefix="procanim-keys-")))
    for target in ("IK_CONTROLS", "FK_CONTROLS"):
        bpy.ops.wm.read_homefile(use_factory_startup=True, use_empty=True)
        rig = _append_rigify(library)
        _curve("Path", 12.0)
        assert bpy.ops.procanim.path_walk(armature=rig.name, path="Path", key_target=target) == {"FINISHED"}
        _record(f"rigify_{target}", rig, out)
    np.savez(out_path, **out)
    print(f"Blender {bpy.app.version_string}: {len(out)} arrays written to {out_path}")


def compare(before_path: Path, after_path: Path) -> int:
    before, after = np.load(before_path), np.load(after_path)
    keys_b, keys_a = set(before.files), set(after.files)
    status = 0
    for missing, where in ((keys_b - keys_a, "after"), (keys_a - keys_b, "before")):
        for k in sorted(missing):
            print(f"only in {'before' if where == 'after' else 'after'}: {k}")
            status = 1
    labels = sorted({k.split("|")[0] for k in keys_b & keys_a})
    for label in labels:
        names = sorted(k for k in keys_b & keys_a if k.startswith(label + "|"))
        differ, worst, ulps, keys = [], 0.0, 0, 0
        for k in names:
            b, a = before[k], after[k]
            if k.endswith("|co"):
                keys += len(b) // 2
            if b.shape != a.shape or b.dtype != a.dtype:
                differ.append(k)
                continue
            if b.dtype.kind == "f":
                if not np.array_equal(b, a):
                    differ.append(k)
                    worst = max(worst, float(np.max(np.abs(b - a))))
                    ulps = max(ulps, int(np.max(np.abs(b.view(np.int32).astype(np.int64) - a.view(np.int32)))))
            elif not np.array_equal(b, a):
                differ.append(k)
        curves = len([k for k in names if k.endswith("|co")])
        verdict = "bit-identical" if not differ else f"{len(differ)} arrays differ, max |d| {worst:.3g}, {ulps} ulp"
        print(f"{label:24s} {curves:4d} F-curves {keys:7d} keys: {verdict}")
        for k in differ[:10]:
            print(f"    {k}")
        status |= bool(differ)
    return status


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("out", type=Path)
    d.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    c = sub.add_parser("compare")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    args = ap.parse_args(argv)
    if args.cmd == "dump":
        import bpy

        dump(args.out.resolve(), args.root.resolve())
        if bpy.app.binary_path == "":  # the bpy 4.5 wheel can hang on exit once a .blend was saved
            sys.stdout.flush()
            os._exit(0)
        return 0
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main(sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else sys.argv[1:]))
