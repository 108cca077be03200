"""The generator contract on the Blender side: every registry entry has its operator, panel, shared
settings, demo scene and bench; the panels draw, their Generate button carries the sidebar's
settings, the figures of a bake read in words; a new generator needs one registry entry; the menus."""

from __future__ import annotations

import types

import bpy
import pytest
from harness import REPO_ROOT, addon_module, button_args, draw_log
from scenes import SCENE_SETUP, add_human, pick_adapt, pick_duck, pick_pair, pick_walker


def plain(value):
    """A property value as plain Python (arrays as tuples, enums and strings as they are)."""
    if isinstance(value, str) or not hasattr(value, "__len__"):
        return value
    return tuple(value)


@pytest.fixture
def registry(procanim_extension):
    return addon_module(procanim_extension, "procanim_addon.registry")


def test_every_generator_has_its_operator_panel_settings_demo_and_bench(procanim_extension, registry):
    ops = addon_module(procanim_extension, "operators")
    assert len(registry.GENERATORS) == 5
    for entry in registry.GENERATORS:
        module = ops.generator_module(entry)
        op_props = getattr(bpy.ops.procanim, entry.id).get_rna_type().properties
        panel = getattr(bpy.types, entry.panel)
        assert panel.bl_category == "ProcAnim" and panel.bl_label == entry.label
        settings = getattr(bpy.context.scene.procanim, entry.settings)
        shared = module.settings(ui=False)
        assert shared, entry.id
        for name in [*shared, "key_target"]:
            assert name in op_props and name in settings.bl_rna.properties, (entry.id, name)
            default = op_props[name].default if not getattr(op_props[name], "is_array", False) else None
            if default is not None and op_props[name].type in ("INT", "FLOAT", "BOOLEAN", "ENUM"):
                assert getattr(settings, name) == pytest.approx(default), (entry.id, name)
        for arg in module.OBJECTS:
            assert op_props[arg.name].type == "STRING", (entry.id, arg.name)
        demo = REPO_ROOT / "tools" / "demos" / f"{entry.demo}.py"
        assert demo.is_file() and "def build(" in demo.read_text(), entry.demo
        assert (REPO_ROOT / "bench" / f"{entry.bench}.py").is_file(), entry.bench


@pytest.mark.parametrize("generator", list(SCENE_SETUP))
def test_panel_generate_carries_the_sidebar_settings_and_bakes(procanim_extension, registry, generator):
    entry = registry.get(generator)
    module = addon_module(procanim_extension, "operators").generator_module(entry)
    scene = bpy.context.scene
    SCENE_SETUP[generator](scene)
    settings = getattr(scene.procanim, entry.settings)
    settings.key_target = "DEFORM"
    panel = getattr(bpy.types, entry.panel)
    args = button_args(draw_log(panel.draw), entry.operator)
    assert args["key_target"] == "DEFORM"
    for name in module.settings(ui=False):
        if name in args:
            assert plain(args[name]) == pytest.approx(plain(getattr(settings, name))), name
    for arg in module.OBJECTS:
        picked = scene.procanim.armature if arg.shared else getattr(settings, arg.name)
        assert args.get(arg.name, "") == (picked.name if picked is not None else ""), arg.name
    # the same values, run as the button would: the bake's figures appear in the panel, in words
    assert getattr(bpy.ops.procanim, entry.id)(**args) == {"FINISHED"}
    log = draw_log(panel.draw)
    figures = [e[2] for e in log if e[0] == "operator" and e[1] == "procanim.metric_info"]
    metric_table = addon_module(procanim_extension, "procanim_addon.metric_table")
    labels = {m.label for m in metric_table.metrics_for(entry.id)}
    assert figures and set(figures) <= labels, figures
    assert "Bake time" in figures and not any("_" in text for text in figures)


def test_duck_figures_read_with_units_and_tooltips(procanim_extension):
    pick_duck(bpy.context.scene)
    assert bpy.ops.procanim.duck_walk(armature="Duck") == {"FINISHED"}
    log = draw_log(bpy.types.PROCANIM_PT_duck_walk.draw)
    rows = [(log[i][2], log[i + 3][1]) for i, e in enumerate(log)
            if e[0] == "operator" and e[1] == "procanim.metric_info"]
    shown = dict(rows)
    assert shown["Foot skate"].endswith(" cm/s") and shown["Stride"].endswith(" m")
    info = bpy.ops.procanim.metric_info.get_rna_type()
    assert info is not None
    generator = addon_module(procanim_extension, "panels.generator")
    props = types.SimpleNamespace(generator="duck_walk", key="skate_mean_cm_s")
    assert "slide" in generator.PROCANIM_OT_metric_info.description(bpy.context, props)


def test_terrain_whole_action_leaves_the_range_to_the_action(procanim_extension):
    pick_adapt(bpy.context.scene)
    st = bpy.context.scene.procanim.terrain
    assert st.use_action_range
    args = button_args(draw_log(bpy.types.PROCANIM_PT_adapt_terrain.draw), "procanim.adapt_terrain")
    assert "frame_start" not in args and "frame_end" not in args and args["terrain"] == "Zigzag"
    st.use_action_range, st.frame_start, st.frame_end = False, 3, 20
    args = button_args(draw_log(bpy.types.PROCANIM_PT_adapt_terrain.draw), "procanim.adapt_terrain")
    assert (args["frame_start"], args["frame_end"]) == (3, 20)
    log = draw_log(bpy.types.PROCANIM_PT_adapt_terrain_advanced.draw)
    assert [e[1] for e in log if e[0] == "prop"] == ["damping", "tolerance", "key_interval", "refuse_infeasible"]


def test_handshake_panel_shows_each_characters_settings_and_table_3(procanim_extension):
    scene = bpy.context.scene
    pick_pair(scene)
    hs = scene.procanim.handshake
    a, b = hs.initiator, hs.partner
    b.procanim_character.solver = "FABRIK"
    hs.show_timings = True
    log = draw_log(bpy.types.PROCANIM_PT_handshake.draw)
    props = [e[1] for e in log if e[0] == "prop"]
    assert props.count("solver") == 2 and props.count("dominance") == 2 and "shake_frames" in props
    args = button_args(log, "procanim.handshake")
    assert "solver_partner" not in args  # read from each character by the operator
    assert bpy.ops.procanim.handshake(**args) == {"FINISHED"}
    m = addon_module(procanim_extension, "operators.bake").read_metrics(a.animation_data.action)
    assert m["solver_partner"] == "FABRIK"
    labels = [e[1] for e in draw_log(bpy.types.PROCANIM_PT_handshake.draw) if e[0] == "label"]
    assert any(t.startswith("both hands:") and f"{m['both_mean_cm']:.3f}" in t for t in labels), labels


def test_path_walk_panel_asks_for_a_path(procanim_extension):
    bpy.context.scene.procanim.armature = add_human()
    log = draw_log(bpy.types.PROCANIM_PT_path_walk.draw)
    assert ("label", "Pick: Path") in log
    log = draw_log(bpy.types.PROCANIM_PT_path_walk_advanced.draw)
    assert {"delta_x", "delta_y", "delta_z", "armpit_angle"} <= {e[1] for e in log if e[0] == "prop"}


def test_a_new_generator_needs_one_registry_entry(procanim_extension, registry):
    """A made-up generator (a module-like namespace per layer, one entry): its operator bakes and
    its panel draws, with nothing else written for it."""
    ops_base = addon_module(procanim_extension, "operators.base")
    objects = addon_module(procanim_extension, "operators.objects")
    bridge = addon_module(procanim_extension, "operators.bridge")
    panels = addon_module(procanim_extension, "panels.generator")
    clip_mod = addon_module(procanim_extension, "procanim_addon.clip")

    def prepare(args, context):
        obj = objects.ARMATURE.resolve(args, context, "fake_pose")
        skeleton = bridge.read_skeleton(obj)

        def compute(progress):
            frames = list(range(1, args.length + 1))
            for k in range(len(frames)):
                progress(k / len(frames))
            clip = clip_mod.Clip.rest(skeleton.names, frames, 24.0, generator="fake_pose")
            clip.locations[:, 0, 2] = [0.01 * f for f in frames]
            return [clip]

        return ops_base.Job([obj], compute)

    op_module = types.SimpleNamespace(
        OBJECTS=(objects.ARMATURE,),
        settings=lambda ui: {"length": bpy.props.IntProperty(name="Length", description="Frames", default=12,
                                                             min=2)},
        prepare=prepare,
    )
    panel_module = types.SimpleNamespace(draw=lambda layout, settings, _c: layout.prop(settings, "length"), classes=())
    entry = registry.Generator("fake_pose", "Fake Pose", "Raises the root", engine=None, params=None,
                               settings="fake_pose", demo="", bench="")
    group = panels.settings_class(entry, op_module, panel_module)
    classes = [group, ops_base.operator_class(entry, op_module), panels.panel_class(entry, op_module, panel_module)]
    for cls in classes:
        bpy.utils.register_class(cls)
    bpy.types.Scene.fake_pose = bpy.props.PointerProperty(type=group)
    try:
        human = add_human()
        assert bpy.ops.procanim.fake_pose(armature=human.name, length=30) == {"FINISHED"}
        action = human.animation_data.action
        assert action.procanim.generator == "fake_pose" and action.frame_range[1] == 30
        assert hasattr(bpy.types, "PROCANIM_PT_fake_pose")
    finally:
        del bpy.types.Scene.fake_pose
        for cls in reversed(classes):
            bpy.utils.unregister_class(cls)


def test_menus_list_the_characters_and_every_generator(procanim_extension, registry):
    menus = addon_module(procanim_extension, "panels.menus")
    log = draw_log(menus.draw_add_armature)
    assert [e[1] for e in log if e[0] == "operator"] == ["procanim.add_human", "procanim.add_duck"]
    log = draw_log(bpy.types.PROCANIM_MT_generators.draw)
    listed = [e[1] for e in log if e[0] == "operator"]
    assert [g.operator for g in registry.GENERATORS] == listed[: len(registry.GENERATORS)]
    assert ("menu", "PROCANIM_MT_generators") in draw_log(menus.draw_object_animation)
    hooks = [getattr(bpy.types, menu).draw._draw_funcs for menu, _ in menus.MENU_HOOKS]
    assert all(any(getattr(f, "__name__", "") == hook.__name__ for f in funcs)
               for funcs, (_m, hook) in zip(hooks, menus.MENU_HOOKS))


def test_terrain_frames_not_cleared_are_reported_and_shown(procanim_extension, capfd):
    """A walk into waist-high blocks (beyond a step, adapted anyway): the frames still cutting the
    terrain are named in a warning and shown as a figure."""
    scene = bpy.context.scene
    human = add_human()
    scene.procanim.armature = human
    assert bpy.ops.procanim.source_motion(armature=human.name, kind="WALK", steps=4) == {"FINISHED"}
    assert bpy.ops.procanim.add_zigzag(armature=human.name, level="WAIST") == {"FINISHED"}
    assert bpy.ops.procanim.adapt_terrain(armature=human.name, terrain="Zigzag", refuse_infeasible=False) == {
        "FINISHED"
    }
    m = addon_module(procanim_extension, "operators.bake").read_metrics(human.animation_data.action)
    unfixed = m["unfixed_frames"]
    assert unfixed, "waist-high blocks leave frames the walk cannot clear"
    assert f"{len(unfixed)} frames still cut the terrain" in capfd.readouterr().out
    log = draw_log(bpy.types.PROCANIM_PT_adapt_terrain.draw)
    at = next(i for i, e in enumerate(log) if e[0] == "operator" and e[2] == "Frames not cleared")
    assert log[at + 3] == ("label", f"{len(unfixed)}: " + ", ".join(str(f) for f in unfixed[:4])
                           + (" …" if len(unfixed) > 4 else ""))


def test_path_walk_style_emotions_in_the_sidebar_and_as_an_argument(procanim_extension):
    scene = bpy.context.scene
    pick_walker(scene)
    walk = scene.procanim.path_walk
    assert bpy.ops.procanim.path_walk_style(preset="SAD") == {"FINISHED"}
    assert (walk.style_amplitude, walk.style_weight, walk.style_direction) == (3.0, 9.0, 0.0)
    props = [e[1] for e in draw_log(bpy.types.PROCANIM_PT_path_walk.draw) if e[0] == "prop"]
    assert {"style_amplitude", "style_weight", "style_direction"} <= set(props)
    bake = addon_module(procanim_extension, "operators.bake")
    human = scene.procanim.armature
    cadence = {}
    for style in ("NEUTRAL", "SAD", "JOY"):
        assert bpy.ops.procanim.path_walk(style=style, style_weight=0.0) == {"FINISHED"}  # the preset wins
        cadence[style] = bake.read_metrics(human.animation_data.action)["cadence_spm"]
    assert cadence["SAD"] < cadence["NEUTRAL"] < cadence["JOY"], cadence
