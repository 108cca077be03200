"""The generator contract on the Blender side: every generator has its operator, and (unless it
shares another's) its panel and shared settings, a demo scene and a bench; the panels draw, their
Generate button carries the sidebar's settings, the figures of a bake read in words; the menus.
A generator defined elsewhere and registered at run time: ``test_new_generator.py``."""

from __future__ import annotations

import ast
import types

import bpy
import pytest
from harness import REPO_ROOT, addon_module, button_args, draw_log
from scenes import SCENE_SETUP, add_human, pick_adapt, pick_duck, pick_pair, pick_walker


def plain(value):
    """A property value as plain Python (arrays as tuples, enums and strings as they are, a data-block
    as its name, as a button passes it)."""
    if value is None or isinstance(value, bpy.types.ID):
        return "" if value is None else value.name
    if isinstance(value, str) or not hasattr(value, "__len__"):
        return value
    return tuple(value)


@pytest.fixture
def registry(procanim_extension):
    return addon_module(procanim_extension, "procanim_addon.registry")


@pytest.fixture
def generators(procanim_extension):
    return addon_module(procanim_extension, "operators.generators")


def declared_generators(folder: str) -> dict[str, set[str]]:
    """``GENERATORS = (...)`` of each script in ``folder`` (tools/demos, bench): script → ids."""
    out = {}
    for path in sorted((REPO_ROOT / folder).glob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "GENERATORS" for t in node.targets):
                out[path.stem] = set(ast.literal_eval(node.value))
    return out


def test_every_generator_has_its_operator_panel_settings_demo_and_bench(procanim_extension, registry, generators):
    assert [g.id for g in generators.every()] == [s.id for s in registry.GENERATORS]
    assert len(registry.GENERATORS) == 7
    demos = set().union(*declared_generators("tools/demos").values())
    benches = set().union(*declared_generators("bench").values())
    for gen in generators.every():
        op_props = getattr(bpy.ops.procanim, gen.id).get_rna_type().properties
        for arg in gen.objects:
            assert op_props[arg.name].type == "STRING", (gen.id, arg.name)
        assert gen.id in benches, f"no bench/ script declares GENERATORS with {gen.id}"
        if not gen.has_panel:
            continue
        assert gen.id in demos, f"no tools/demos/ scene declares GENERATORS with {gen.id}"
        panel = getattr(bpy.types, f"PROCANIM_PT_{gen.id}")
        assert panel.bl_category == "ProcAnim" and panel.bl_label == gen.spec.label
        settings = getattr(bpy.context.scene.procanim, gen.settings_name)
        shared = gen.settings(ui=False)
        assert shared, gen.id
        for name in [*shared, "key_target", "key_tolerance"]:
            assert name in op_props and name in settings.bl_rna.properties, (gen.id, name)
            default = op_props[name].default if not getattr(op_props[name], "is_array", False) else None
            if default is not None and op_props[name].type in ("INT", "FLOAT", "BOOLEAN", "ENUM"):
                assert getattr(settings, name) == pytest.approx(default), (gen.id, name)


@pytest.mark.parametrize("generator", list(SCENE_SETUP))
def test_panel_generate_carries_the_sidebar_settings_and_bakes(procanim_extension, generators, generator):
    gen = generators.get(generator)
    scene = bpy.context.scene
    SCENE_SETUP[generator](scene)
    settings = getattr(scene.procanim, gen.settings_name)
    settings.key_target = "DEFORM"
    settings.key_tolerance = 0.002
    panel = getattr(bpy.types, f"PROCANIM_PT_{generator}")
    args = button_args(draw_log(panel), gen.spec.operator)
    assert args["key_target"] == "DEFORM"
    assert args["key_tolerance"] == pytest.approx(0.002)
    for name in gen.settings(ui=False):
        if name in args:
            assert plain(args[name]) == pytest.approx(plain(getattr(settings, name))), name
    for arg in gen.objects:
        picked = scene.procanim.armature if arg.shared else getattr(settings, arg.name)
        assert args.get(arg.name, "") == (picked.name if picked is not None else ""), arg.name
    # the same values, run as the button would: the bake's figures appear in the panel, in words
    assert getattr(bpy.ops.procanim, generator)(**args) == {"FINISHED"}
    log = draw_log(panel)
    figures = [e[2] for e in log if e[0] == "operator" and e[1] == "procanim.metric_info"]
    labels = {m.label for m in gen.spec.rows()}
    assert figures and set(figures) <= labels, figures
    assert "Bake time" in figures and not any("_" in text for text in figures)
    assert {"Keys written", "Keys of a dense bake", "Largest key error", "Contacts kept"} <= set(figures)


def test_duck_figures_read_with_units_and_tooltips(procanim_extension):
    pick_duck(bpy.context.scene)
    assert bpy.ops.procanim.duck_walk(armature="Duck") == {"FINISHED"}
    log = draw_log(bpy.types.PROCANIM_PT_duck_walk)
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
    args = button_args(draw_log(bpy.types.PROCANIM_PT_adapt_terrain), "procanim.adapt_terrain")
    assert "frame_start" not in args and "frame_end" not in args and args["terrain"] == "Zigzag"
    st.use_action_range, st.frame_start, st.frame_end = False, 3, 20
    args = button_args(draw_log(bpy.types.PROCANIM_PT_adapt_terrain), "procanim.adapt_terrain")
    assert (args["frame_start"], args["frame_end"]) == (3, 20)
    log = draw_log(bpy.types.PROCANIM_PT_adapt_terrain_advanced)
    assert [e[1] for e in log if e[0] == "prop"] == ["damping", "tolerance", "key_interval", "refuse_infeasible"]


def test_handshake_panel_shows_each_characters_settings_and_table_3(procanim_extension):
    scene = bpy.context.scene
    pick_pair(scene)
    hs = scene.procanim.handshake
    a, b = hs.initiator, hs.partner
    b.procanim_character.solver = "FABRIK"
    hs.show_timings = True
    log = draw_log(bpy.types.PROCANIM_PT_handshake)
    props = [e[1] for e in log if e[0] == "prop"]
    assert props.count("solver") == 2 and props.count("dominance") == 2 and "shake_frames" in props
    args = button_args(log, "procanim.handshake")
    assert "solver_partner" not in args  # read from each character by the operator
    assert bpy.ops.procanim.handshake(**args) == {"FINISHED"}
    m = addon_module(procanim_extension, "operators.bake").read_metrics(a.animation_data.action)
    assert m["solver_partner"] == "FABRIK"
    labels = [e[1] for e in draw_log(bpy.types.PROCANIM_PT_handshake) if e[0] == "label"]
    assert any(t.startswith("both hands:") and f"{m['both_mean_cm']:.3f}" in t for t in labels), labels


def test_path_walk_panel_asks_for_a_path(procanim_extension):
    bpy.context.scene.procanim.armature = add_human()
    log = draw_log(bpy.types.PROCANIM_PT_path_walk)
    assert ("label", "Pick: Path") in log
    log = draw_log(bpy.types.PROCANIM_PT_path_walk_advanced)
    assert {"delta_x", "delta_y", "delta_z", "armpit_angle"} <= {e[1] for e in log if e[0] == "prop"}


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
    log = draw_log(bpy.types.PROCANIM_PT_adapt_terrain)
    at = next(i for i, e in enumerate(log) if e[0] == "operator" and e[2] == "Frames not cleared")
    assert log[at + 3] == ("label", f"{len(unfixed)}: " + ", ".join(str(f) for f in unfixed[:4])
                           + (" …" if len(unfixed) > 4 else ""))


def test_path_walk_style_emotions_in_the_sidebar_and_as_an_argument(procanim_extension):
    scene = bpy.context.scene
    pick_walker(scene)
    walk = scene.procanim.path_walk
    assert bpy.ops.procanim.path_walk_style(preset="SAD") == {"FINISHED"}
    assert (walk.style_amplitude, walk.style_weight, walk.style_direction) == (3.0, 9.0, 0.0)
    props = [e[1] for e in draw_log(bpy.types.PROCANIM_PT_path_walk) if e[0] == "prop"]
    assert {"style_amplitude", "style_weight", "style_direction"} <= set(props)
    bake = addon_module(procanim_extension, "operators.bake")
    human = scene.procanim.armature
    cadence = {}
    for style in ("NEUTRAL", "SAD", "JOY"):
        assert bpy.ops.procanim.path_walk(style=style, style_weight=0.0) == {"FINISHED"}  # the preset wins
        cadence[style] = bake.read_metrics(human.animation_data.action)["cadence_spm"]
    assert cadence["SAD"] < cadence["NEUTRAL"] < cadence["JOY"], cadence
