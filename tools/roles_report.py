"""Role detection on every sample skeleton of tests/rig_samples.py and ProcAnim's own rigs, named and
renamed ``Bone.###`` (shuffled), turned to face three ways: family, confidence, roles wrong or
missing. Engine only (no Blender): ``python tools/roles_report.py``."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import rig_samples as rs  # noqa: E402

from procanim_addon import rigs  # noqa: E402
from procanim_addon.rig_roles import ARM_ROLES, LEG_ROLES, detect  # noqa: E402
from procanim_addon.skeleton import Skeleton  # noqa: E402

CORE = LEG_ROLES + ARM_ROLES + ["hips", "spine", "chest", "neck", "head"]


def _template(template, roles):
    bones = [{"name": b.name, "parent": b.parent, "head": b.head, "tail": b.tail} for b in template.bones]
    return bones, {r: r for r in roles}


def samples():
    sided = [f"{r}.{s}" for r in ("clavicle", "upper_arm", "forearm", "hand", "thigh", "shin", "foot", "toe")
             for s in "LR"]
    out = {name: fn for name, fn in rs.SAMPLES.items()}
    out["procanim_human"] = lambda: _template(rigs.human_template(), ["root", "hips", "spine", "chest", "neck",
                                                                       "head", *sided])
    legs = [r for r in sided if r.split(".")[0] in ("thigh", "shin", "foot", "toe")]
    out["procanim_duck"] = lambda: _template(rigs.duck_template(), ["root", "hips", "tail", "neck", "head", *legs])
    out["rigify_generated"] = rs.rigify_generated
    return out


def row(label, bones, truth):
    sk = Skeleton.from_bones(rs.bone_dicts(bones))
    rm = detect(sk.names, {b["name"]: b["parent"] for b in bones}, skeleton=sk)
    wrong = sorted(r for r, b in truth.items() if rm.roles.get(r) != b)
    expected = [r for r in CORE if r in truth]
    print(f"{label:32s} {rm.family:22s} {rm.confidence:5.2f}  {len(expected) - len(rm.missing(expected)):2d}/"
          f"{len(expected):2d}  wrong: {', '.join(wrong) or '-'}")


def main():
    print(f"{'rig':32s} {'family':22s} {'conf.':5s}  core  ")
    for name, make in samples().items():
        for yaw in (0.0, 90.0, 217.0):
            bones, truth = make()
            bones = rs.turned(bones, yaw)
            row(f"{name} (facing {yaw:g}°)", bones, truth)
            if name != "rigify_generated":
                renamed, new = rs.renamed(bones, seed=int(yaw))
                row("  renamed Bone.###", renamed, {r: new[b] for r, b in truth.items()})


if __name__ == "__main__":
    main()
