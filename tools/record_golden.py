"""Record engine calls and their Clips as the golden fixture of ``tests/engine/test_golden_clips.py``.

    python tools/record_golden.py engine           # engine scenes (plain Python + numpy)
    <bpy venv>/bin/python tools/record_golden.py demo    # every call the demo scenes make
    python tools/record_golden.py rerun CASE…       # named cases, from their stored inputs

The fixture (``tests/golden/*.npz``) pins what the generators produce, so that a refactor can prove
it changed nothing (the test replays each stored call on the current engine and compares within
1e-9). Re-record only when a change of the output is intended, and say why in the commit.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tools"))

from golden_io import GOLDEN_DIR, save_case  # noqa: E402


def record_engine() -> list[Path]:
    """A few engine scenes of every generator, of other sizes than the demo's."""
    from procanim_addon import duck, motions
    from procanim_addon.ground import FlatGround, StairsGround
    from procanim_addon.handshake import HandshakeParams, generate_handshake
    from procanim_addon.rigs import duck_skeleton, human_skeleton
    from procanim_addon.terrain.adapt import AdaptParams, adapt_to_terrain
    from procanim_addon.terrain.shapes import body_heights, zigzag
    from procanim_addon.walk import PathWalkParams, generate_path_walk

    saved = []

    def keep(name, generator, fn, *args, **kwargs):
        result = fn(*args, **kwargs)
        path = GOLDEN_DIR / f"engine_{name}.npz"
        save_case(path, generator, args, kwargs, result)
        saved.append(path)
        return result

    sk, rm = duck_skeleton(0.6)
    keep("duck_neutral", "duck_walk", duck.generate_duck_walk, sk, rm, duck.DuckParams(frame_end=96))
    keep("duck_article_heavy", "duck_walk", duck.generate_duck_walk, sk, rm,
         duck.DuckParams(frame_end=72, key_interval=1, weight=9, direction=7, gait="ARTICLE"))

    hk, hm = human_skeleton(1.68)
    s_curve = np.stack([1.2 * np.sin(np.linspace(0, 2 * np.pi, 160)), np.linspace(0, -8, 160),
                        np.zeros(160)], -1)
    keep("path_s_curve", "path_walk", generate_path_walk, hk, hm, s_curve, FlatGround(), PathWalkParams())
    stairs = StairsGround(start=1.2, tread=0.28, riser=0.17, steps_up=4, landing=0.9, steps_down=4)
    straight = np.array([[0.0, 0.0, 0.0], [0.0, -6.5, 0.0]])
    keep("path_stairs", "path_walk", generate_path_walk, hk, hm, straight, stairs, PathWalkParams(cadence_spm=112))

    def placed(x, y, yaw_deg):
        a = np.radians(yaw_deg)
        m = np.eye(4)
        m[:3, :3] = [[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]]
        m[:3, 3] = (x, y, 0.0)
        return m

    sk2, rm2 = human_skeleton(1.6)
    quick = dict(neutral_frames=3, dummy_frames=6, response_frames=3, approach_frames=10, shake_frames=12,
                 secondary_shakes=1, secondary_frames=8, retreat_frames=10, hold_frames=2)
    for a_solver, b_solver in (("JACOBIAN_TRANSPOSE", "CCD"), ("FABRIK", "DLS"), ("FUZZY", "CCD")):
        keep(f"handshake_{a_solver.lower()}_{b_solver.lower()}", "handshake", generate_handshake,
             (hk, hm, placed(0, 0, 0)), (sk2, rm2, placed(0.05, -0.95, 180)),
             HandshakeParams(solver_initiator=a_solver, solver_partner=b_solver, dominance_initiator=0.7, **quick))

    sources = {
        "walk": keep("source_walk", "source_walk", motions.walk, hk, hm, motions.WalkParams(steps=5)),
        "jump": keep("source_jump", "source_jump", motions.jump, hk, hm, motions.JumpParams()),
        "tumble": keep("source_tumble", "source_tumble", motions.tumble, hk, hm, motions.TumbleParams()),
    }
    sole_z = float(np.min(hk.heads[:, 2]))
    for kind, level in (("walk", "knee"), ("jump", "ankle"), ("tumble", "knee")):
        terrain = zigzag(body_heights(hk, hm)[level], start_xy=(0.0, -0.3), direction_xy=(0.0, -1.0),
                         cell_length=0.8, ground_z=sole_z, name=f"zigzag {level}")
        keep(f"terrain_{kind}_{level}", "adapt_terrain", adapt_to_terrain, hk, hm, sources[kind], None, terrain,
             AdaptParams(refuse_infeasible=False))
    return saved


# The engine calls the demo's operators make: (generator id, module holding the name, name) — the
# engine entry points as each generator's bake call (its spec's ``call``) finds them.
DEMO_CALLS = (
    ("duck_walk", "procanim_addon.duck", "generate_duck_walk"),
    ("path_walk", "procanim_addon.walk.spec", "generate_path_walk"),
    ("handshake", "procanim_addon.handshake.spec", "generate_handshake"),
    ("adapt_terrain", "procanim_addon.terrain.spec", "adapt_to_terrain"),
    ("source_walk", "procanim_addon.motions", "walk"),
    ("source_jump", "procanim_addon.motions", "jump"),
    ("source_tumble", "procanim_addon.motions", "tumble"),
)


def record_demo() -> list[Path]:
    """Every engine call of the demo scenes (tools/demos/), recorded inside Blender."""
    import importlib

    import bpy
    from blender_install import install_extension
    from demo import demo_modules

    bpy.ops.wm.read_homefile(use_factory_startup=True, use_empty=True)
    package = install_extension("golden")
    bpy.ops.wm.read_homefile(use_factory_startup=True, use_empty=True)
    saved: list[Path] = []
    counts: dict[str, int] = {}

    def wrap(generator, fn):
        def recorded(*args, **kwargs):
            result = fn(*args, **kwargs)
            counts[generator] = counts.get(generator, 0) + 1
            path = GOLDEN_DIR / f"demo_{generator}_{counts[generator]}.npz"
            # the operator's Progress (Esc, the progress bar) is not part of the call's meaning
            stored = {k: v for k, v in kwargs.items() if k != "progress"}
            save_case(path, generator, args, stored, result)
            saved.append(path)
            return result

        return recorded

    for generator, module, name in DEMO_CALLS:
        mod = importlib.import_module(f"{package}.{module}")
        setattr(mod, name, wrap(generator, getattr(mod, name)))
    first = bpy.context.scene
    for k, mod in enumerate(demo_modules([])):
        scene = first if k == 0 else bpy.data.scenes.new(mod.NAME)
        scene.name = mod.NAME
        if bpy.context.window:
            bpy.context.window.scene = scene
        with bpy.context.temp_override(scene=scene, view_layer=scene.view_layers[0]):
            mod.build(scene)
    return saved


def rerun(names) -> list[Path]:
    """Re-record stored cases from their stored inputs on the current engine (a change of the
    output that is intended, for the named cases only: ``demo_handshake_1`` …)."""
    sys.path.insert(0, str(ROOT / "tests" / "engine"))
    from golden_io import load_case
    from test_golden_clips import engine_function

    saved = []
    for name in names:
        path = GOLDEN_DIR / f"{name}.npz"
        generator, args, kwargs, _ = load_case(path)
        save_case(path, generator, args, kwargs, engine_function(generator)(*args, **kwargs))
        saved.append(path)
    return saved


def main(argv) -> int:
    what = argv[0] if argv else "engine"
    if what == "rerun":
        for path in rerun(argv[1:]):
            print(f"re-recorded {path.relative_to(ROOT)} from its stored inputs")
        return 0
    for old in GOLDEN_DIR.glob(f"{what}_*.npz"):
        old.unlink()
    saved = record_engine() if what == "engine" else record_demo()
    for path in saved:
        print(f"recorded {path.relative_to(ROOT)} ({path.stat().st_size // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else sys.argv[1:]))
