"""Every parameter has documented limits, checked at the engine boundary with a message that names
the setting, its range and the value given."""

from __future__ import annotations

import dataclasses
import math

import pytest

from procanim_addon import keys, motions, registry
from procanim_addon.bake_settings import BakeSettings
from procanim_addon.errors import InputError
from procanim_addon.limits import LIMITS, MAX_FRAME_BONES, MAX_FRAMES, check_bake_size, check_limits

PARAM_CLASSES = [g.params for g in registry.GENERATORS] + [motions.WalkParams, motions.JumpParams,
                                                              motions.TumbleParams, BakeSettings]


def numeric_fields(cls):
    out = []
    for f in dataclasses.fields(cls):
        default = f.default if f.default is not dataclasses.MISSING else None
        if isinstance(default, bool) or f.name == "forces":
            continue
        if isinstance(default, (int, float)) or (isinstance(default, tuple) and default and
                                                  all(isinstance(v, (int, float)) for v in default)):
            out.append(f)
    return out


@pytest.mark.parametrize("cls", PARAM_CLASSES, ids=lambda c: c.__name__)
def test_every_numeric_field_has_a_limit_that_holds_its_default(cls):
    table = LIMITS[cls.__name__]
    fields = {f.name: f for f in numeric_fields(cls)}
    assert set(fields) == set(table), (set(fields) ^ set(table))
    for name, f in fields.items():
        values = f.default if isinstance(f.default, tuple) else (f.default,)
        for v in values:
            assert table[name].lo <= v <= table[name].hi, name
        lo, hi = table[name].slider
        assert table[name].lo <= lo < hi <= table[name].hi, name
    check_limits(cls())  # the defaults pass


@pytest.mark.parametrize("cls", PARAM_CLASSES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, 1e300, -1e300])
def test_out_of_range_or_not_a_number_is_refused_by_validate_naming_the_setting(cls, bad):
    for f in numeric_fields(cls):
        value = tuple(bad for _ in f.default) if isinstance(f.default, tuple) else bad
        params = dataclasses.replace(cls(), **{f.name: value})
        with pytest.raises(InputError) as err:
            params.validate()
        assert str(err.value), f.name


def test_the_message_names_the_setting_its_range_and_the_value():
    params = dataclasses.replace(registry.get("duck_walk").params(), fps=7922.99)
    with pytest.raises(InputError, match=r"Frames per second must be between 1 and 1000 fps \(got 7922.99\)"):
        check_limits(params)
    params = dataclasses.replace(registry.get("path_walk").params(), delta_y=(0.0, math.nan, 0.0))
    with pytest.raises(InputError, match=r"δ vertical \[2\] must be between -1 and 1 \(got nan\)"):
        check_limits(params)


def test_the_key_tolerance_limits_are_the_key_planners():
    lim = LIMITS["BakeSettings"]["key_tolerance"]
    assert (lim.lo, lim.hi) == (0.0, keys.MAX_TOLERANCE_M)
    assert BakeSettings().key_tolerance == keys.DEFAULT_TOLERANCE_M
    for ok in (0.0, keys.DEFAULT_TOLERANCE_M, keys.MAX_TOLERANCE_M):
        keys.validate_tolerance(BakeSettings(ok).validate().key_tolerance)
    with pytest.raises(InputError, match=r"Key tolerance must be between 0 and 0.05 m \(got 0.06\)"):
        BakeSettings(0.06).validate()


def test_a_bake_too_large_is_refused_naming_the_limit():
    check_bake_size(MAX_FRAMES, MAX_FRAME_BONES // MAX_FRAMES)
    with pytest.raises(InputError, match=f"at most {MAX_FRAMES:,} frames"):
        check_bake_size(MAX_FRAMES + 1, 1)
    with pytest.raises(InputError, match=f"at most {MAX_FRAME_BONES:,} frame × bone"):
        check_bake_size(20_000, 706)
    with pytest.raises(InputError):
        check_bake_size(math.inf, 1)


def test_the_limits_page_is_up_to_date():
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("limits_doc", root / "tools" / "limits_doc.py")
    doc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(doc)
    assert (root / "docs" / "limits.md").read_text(encoding="utf-8") == doc.render(), (
        "docs/limits.md is stale: run python tools/limits_doc.py"
    )


def test_a_path_walk_too_long_to_bake_is_refused_before_the_path_is_resampled(monkeypatch):
    """A 2,000 km curve: at 100 steps/min it is weeks of walking. Refused by the size check, and
    before build_path would allocate its 2e8 samples (build_path made to fail if it is reached)."""
    import numpy as np

    from procanim_addon.rigs import human_skeleton
    from procanim_addon.walk import gait

    skeleton, rigmap = human_skeleton()
    monkeypatch.setattr(gait, "build_path", lambda *a, **k: pytest.fail("the path was resampled"))
    points = np.array([[0.0, 0.0, 0.0], [2.0e6, 0.0, 0.0]])
    with pytest.raises(InputError, match=r"The path walk would have [\d,]+ frames; ProcAnim bakes at most"):
        gait.generate_path_walk(skeleton, rigmap, points, None, registry.get("path_walk").params())
