"""The engine entry points answer every parameter value with a finite Clip or an InputError — never
another exception, never NaN (Hypothesis over every field of every parameter dataclass).

Each field draws from: its documented limits and slider range, just outside them, NaN and the
infinities, huge magnitudes, and anything in its slider range; text fields from their known values
and a made-up one. ``PROCANIM_FUZZ_EXAMPLES`` (default 25 per generator) sets the number of draws.
"""

from __future__ import annotations

import dataclasses
import math
import os

import numpy as np
import pytest

from procanim_addon import motions, registry
from procanim_addon.crowd import Walker
from procanim_addon.errors import InputError
from procanim_addon.fix_feet.footskate import add_footskate
from procanim_addon.ground import FlatGround
from procanim_addon.limits import LIMITS
from procanim_addon.rigs import duck_skeleton, human_skeleton
from procanim_addon.terrain.shapes import body_heights, zigzag

hypothesis = pytest.importorskip("hypothesis")
st = pytest.importorskip("hypothesis.strategies")

EXAMPLES = int(os.environ.get("PROCANIM_FUZZ_EXAMPLES", "25"))
TEXT_VALUES = {
    "gait": ["PLANTED", "ARTICLE"],
    "solver_initiator": ["JACOBIAN_TRANSPOSE", "CCD", "FABRIK", "DLS", "FUZZY"],
    "solver_partner": ["JACOBIAN_TRANSPOSE", "CCD", "FABRIK", "DLS", "FUZZY"],
    "root_motion": ["BONE", "OBJECT"],
    "kind": ["WALK", "JUMP", "TUMBLE"],
}


def field_strategy(cls, f):
    default = f.default if f.default is not dataclasses.MISSING else None
    lim = LIMITS.get(cls.__name__, {}).get(f.name)
    if isinstance(default, bool):
        return st.booleans()
    if isinstance(default, str):
        return st.sampled_from(TEXT_VALUES.get(f.name, [default]) + ["BOGUS"])
    if lim is None:
        return st.just(f.default if f.default is not dataclasses.MISSING else f.default_factory())
    lo, hi = lim.slider
    # the limits and just beyond, the slider's ends, and what a script could pass by mistake
    edges = [lim.lo, lim.hi, lo, hi, lim.lo - 1, lim.hi + 1, 0, math.nan, math.inf, -math.inf, 1e300, -1e300]
    inside = st.integers(int(lo), int(hi)) if isinstance(default, int) else st.floats(lo, hi)
    one = st.one_of(st.sampled_from(edges), inside)
    return st.tuples(one, one, one) if isinstance(default, tuple) else one


def params_strategy(cls):
    fields = [f for f in dataclasses.fields(cls) if f.init and f.name != "forces"]
    return st.builds(cls, **{f.name: field_strategy(cls, f) for f in fields})


def _placed(x, y, yaw_deg):
    a = math.radians(yaw_deg)
    m = np.eye(4)
    m[:3, :3] = [[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1]]
    m[:3, 3] = (x, y, 0.0)
    return m


@pytest.fixture(scope="module")
def inputs():
    human = human_skeleton()
    duck = duck_skeleton()
    sk, rm = human
    terrain = zigzag(body_heights(sk, rm)["ankle"], start_xy=(0.0, -0.3), direction_xy=(0.0, -1.0),
                     cell_length=0.8, ground_z=float(np.min(sk.heads[:, 2])), name="zigzag")
    source = motions.walk(sk, rm, motions.WalkParams(steps=2))
    path = np.array([[0.0, 0.0, 0.0], [0.0, -3.0, 0.0]])
    return {
        "duck_walk": lambda p: [registry.get("duck_walk").engine(*duck, p)],
        "handshake": lambda p: list(registry.get("handshake").engine(
            (*human, _placed(0, 0, 0)), (*human_skeleton(1.6), _placed(0, -0.9, 180)), p)[:2]),
        "path_walk": lambda p: [registry.get("path_walk").engine(sk, rm, path, FlatGround(), p)],
        "adapt_terrain": lambda p: [registry.get("adapt_terrain").engine(sk, rm, source, None, terrain, p)],
        "source_motion": lambda p: [registry.get("source_motion").engine(sk, rm, p)],
        # two walkers head-on on one line (avoidance, variation, a meeting where their curves end)
        "crowd_walk": lambda p: registry.get("crowd_walk").call(
            [Walker("A", sk, rm, path, FlatGround()), Walker("B", sk, rm, path[::-1] + [0.0, 0.0, 0.0], FlatGround())],
            p, [(np.eye(4), 1.0)] * 2),
        "fix_feet": lambda p: [registry.get("fix_feet").engine(sk, rm, add_footskate(sk, rm, source), terrain, None,
                                                               p)],
    }


@pytest.mark.parametrize("generator", [g.id for g in registry.GENERATORS])
def test_every_field_of_every_parameter_dataclass(inputs, generator):
    entry = registry.get(generator)

    @hypothesis.settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                         suppress_health_check=list(hypothesis.HealthCheck))
    @hypothesis.given(params=params_strategy(entry.params))
    def check(params):
        try:
            clips = inputs[generator](params)
        except InputError as err:
            assert str(err), "an InputError without a message"
            return
        for clip in clips:
            assert clip.is_finite(), f"{generator}: NaN/inf in the clip for {params}"

    check()


@pytest.mark.parametrize("cls", [motions.WalkParams, motions.JumpParams, motions.TumbleParams],
                         ids=lambda c: c.__name__)
def test_every_field_of_the_source_motions(inputs, cls):
    sk, rm = human_skeleton()
    make = {motions.WalkParams: motions.walk, motions.JumpParams: motions.jump, motions.TumbleParams: motions.tumble}

    @hypothesis.settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                         suppress_health_check=list(hypothesis.HealthCheck))
    @hypothesis.given(params=params_strategy(cls))
    def check(params):
        try:
            clip = make[cls](sk, rm, params)
        except InputError:
            return
        assert clip.is_finite()

    check()
