"""The figures of a bake as the sidebar shows them: words, units, precision, tooltips."""

import math

import pytest

from procanim_addon import registry
from procanim_addon.metric_table import COMMON

# a generator whose panel shows another's figures (the crowd bakes path walks)
NO_PANEL_OF_ITS_OWN = {"crowd_walk"}


def find(generator: str, key: str):
    return registry.get(generator).metric(key)


def test_every_generator_has_its_rows_each_with_a_label_and_a_tooltip():
    for entry in registry.GENERATORS:
        rows = entry.rows()
        keys = [m.key for m in rows]
        assert (entry.metrics or entry.id in NO_PANEL_OF_ITS_OWN) and len(keys) == len(set(keys)), entry.id
        for m in rows:
            assert m.label and "_" not in m.label and len(m.tooltip) > 20, m.key
            assert find(entry.id, m.key) is m
    assert find("duck_walk", "no_such_figure") is None and COMMON[-1].key == "generate_ms"


@pytest.mark.parametrize(
    ("key", "value", "shown"),
    [
        ("skate_mean_cm_s", 0.000139, "0.0001 cm/s"),
        ("stride_m", 0.16234, "0.162 m"),
        ("keys", 41, "41"),
        ("generate_ms", 123.6, "124 ms"),
        ("skate_mean_cm_s", math.nan, "–"),
        ("skate_mean_cm_s", None, "–"),
        ("control_bake_approximate", True, "yes"),
        ("control_residual_bone", "DEF-shin.L", "DEF-shin.L"),
    ],
)
def test_values_read_with_their_units(key, value, shown):
    assert find("duck_walk", key).format(value) == shown


def test_a_list_shows_its_length_and_first_frames():
    frames = find("adapt_terrain", "unfixed_frames")
    assert frames.format([]) == "none"
    assert frames.format([3, 4]) == "2: 3, 4"
    assert frames.format(list(range(10, 20))) == "10: 10, 11, 12, 13 …"
