"""procanim.crowd_walk: many armatures, each on its own curve, in one call — the same bake as one
procanim.path_walk per character, pairs found by nearness, all or nothing on bad input."""

from __future__ import annotations

import bpy
import numpy as np
import pytest
from harness import fcurves_of, keyframes
from scenes import add_curve, add_human

SPACING_M = 1.5


def _crowd(n=3, length=2.0):
    """``n`` humans side by side along x and ``n`` straight curves starting at their feet, made in
    reverse order and named so that neither creation order nor name order pairs them."""
    humans = [add_human(f"Walker.{i}", location=(SPACING_M * i, 0.0, 0.0)) for i in range(n)]
    curves = {}
    for i in reversed(range(n)):
        x = SPACING_M * i
        curves[i] = add_curve(f"Path.{chr(ord('Z') - i)}", [(x, 0.0, 0.0), (x + 0.3 * i, -length, 0.0)])
    bpy.context.view_layer.update()
    return humans, [curves[i] for i in range(n)]


def _select(objs):
    for obj in bpy.context.view_layer.objects:
        obj.select_set(obj in objs)


def _keys(obj) -> dict:
    return {(fc.data_path, fc.array_index): keyframes(fc) for fc in fcurves_of(obj.animation_data.action, obj)}


def _actions() -> set:
    return {a.name for a in bpy.data.actions}


def test_selected_armatures_walk_their_nearest_curves_as_path_walk_would(procanim_extension):
    humans, curves = _crowd()
    _select(humans + curves)
    assert bpy.ops.procanim.crowd_walk(cadence=110.0) == {"FINISHED"}
    crowd = {h.name: _keys(h) for h in humans}
    for h, c in zip(humans, curves):
        assert h.animation_data.action.procanim.generator == "crowd_walk"
        # the same character baked alone along the curve it should have been given
        assert bpy.ops.procanim.path_walk(armature=h.name, path=c.name, cadence=110.0) == {"FINISHED"}
        alone = _keys(h)
        assert alone.keys() == crowd[h.name].keys()
        for channel, keys in alone.items():
            np.testing.assert_allclose(crowd[h.name][channel], keys, atol=1e-6, err_msg=f"{h.name} {channel}")


def test_named_pairs_follow_the_given_order(procanim_extension):
    humans, curves = _crowd(2)
    _select([])
    swapped = ",".join(c.name for c in reversed(curves))
    assert bpy.ops.procanim.crowd_walk(armatures=",".join(h.name for h in humans), paths=swapped) == {"FINISHED"}
    crowd = _keys(humans[0])
    assert bpy.ops.procanim.path_walk(armature=humans[0].name, path=curves[1].name) == {"FINISHED"}
    alone = _keys(humans[0])
    for channel, keys in alone.items():
        np.testing.assert_allclose(crowd[channel], keys, atol=1e-6)


@pytest.mark.parametrize("case, message", [
    ("nothing selected", "Select the armatures"),
    ("fewer curves", "2 armatures and 1 curves selected"),
    ("counts differ", "2 armatures and 1 paths"),
    ("not an armature", "not an armature"),
    ("named twice", "named twice"),
    ("a curve without length", "Walker.1 on 'Dot'.*no length"),
    ("a negative radius", "Personal radius must be between 0 and 5 m"),
    ("variation above 1", "Variation must be between 0 and 1"),
    ("no such collection", "No collection named 'Nowhere'"),
    ("a collection without meshes", "'Empties' holds no mesh objects"),
])
def test_bad_input_cancels_the_whole_crowd_and_writes_nothing(procanim_extension, case, message):
    humans, curves = _crowd(2)
    dot = add_curve("Dot", [(SPACING_M, 0.0, 0.0), (SPACING_M, 0.0, 0.0)])
    names = ",".join(h.name for h in humans)
    calls = {
        "nothing selected": dict(),
        "fewer curves": dict(armatures=names),
        "counts differ": dict(armatures=names, paths=curves[0].name),
        "not an armature": dict(armatures=f"{humans[0].name},{curves[0].name}", paths=names),
        "named twice": dict(armatures=f"{humans[0].name},{humans[0].name}"),
        "a curve without length": dict(armatures=names, paths=f"{curves[0].name},{dot.name}"),
        "a negative radius": dict(armatures=names, personal_radius=-0.1),
        "variation above 1": dict(armatures=names, variation=1.5),
        "no such collection": dict(armatures=names, obstacles="Nowhere"),
        "a collection without meshes": dict(armatures=names, obstacles="Empties"),
    }
    empties = bpy.data.collections.new("Empties")
    empties.objects.link(bpy.data.objects.new("Marker", None))
    _select(curves[:1] if case == "fewer curves" else curves if names in calls[case].get("armatures", "") else [])
    before = _actions()
    with pytest.raises(RuntimeError, match=message) as err:
        bpy.ops.procanim.crowd_walk(**calls[case])
    assert "Traceback" not in str(err.value)
    assert _actions() == before
    assert all(h.animation_data is None or h.animation_data.action is None for h in humans)


def test_the_sidebar_button_walks_the_selection_with_the_panels_settings(procanim_extension):
    """The Walk Crowd panel (under Path Walk): the crowd's settings and the Path Walk panel's go on
    its Generate button; what it bakes is the path walk alone of each (nothing to avoid)."""
    from harness import button_args, draw_log

    humans, curves = _crowd(2)
    settings = bpy.context.scene.procanim.path_walk
    settings.cadence, settings.stride = 112.0, 0.6
    crowd_settings = bpy.context.scene.procanim.crowd_walk
    crowd_settings.personal_radius, crowd_settings.seed = 0.25, 4
    _select(humans + curves[:1])
    log = draw_log(bpy.types.PROCANIM_PT_crowd_walk)
    assert ("label", "Selected: 2 armatures, 1 curves") in log and ("label", "Select one curve per armature") in log
    _select(humans + curves)
    log = draw_log(bpy.types.PROCANIM_PT_crowd_walk)
    args = button_args(log, "procanim.crowd_walk")
    assert args["cadence"] == pytest.approx(112.0) and args["stride"] == pytest.approx(0.6)
    assert args["personal_radius"] == pytest.approx(0.25) and args["seed"] == 4 and args["obstacles"] == ""
    assert args["ground"] == "" and "armatures" not in args and "paths" not in args and "path" not in args
    assert bpy.ops.procanim.crowd_walk(**args) == {"FINISHED"}
    crowd = _keys(humans[1])
    assert bpy.ops.procanim.path_walk(armature=humans[1].name, path=curves[1].name, cadence=112.0,
                                      stride=0.6) == {"FINISHED"}
    for channel, keys in _keys(humans[1]).items():
        np.testing.assert_allclose(crowd[channel], keys, atol=1e-6)
