"""The cyclic collector paused around the engine's long numpy sections, and left as it was found."""

from __future__ import annotations

import gc

import pytest

from procanim_addon import collector


@pytest.fixture(autouse=True)
def collector_on():
    gc.enable()
    yield
    gc.enable()


def test_the_collector_is_off_inside_and_on_again_after():
    with collector.paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_an_error_inside_turns_it_on_again():
    with pytest.raises(ValueError), collector.paused():
        raise ValueError("bad input")
    assert gc.isenabled()


def test_a_collector_the_caller_turned_off_stays_off():
    gc.disable()
    with collector.paused():
        pass
    assert not gc.isenabled()


def test_nested_sections_leave_it_as_the_outermost_found_it():
    @collector.paused()
    def inner():
        return gc.isenabled()

    with collector.paused():
        assert inner() is False
        assert not gc.isenabled()  # the inner section does not turn it on under the outer one
    assert gc.isenabled()
