"""Phases of the handshake: per-character FSM and the arbiter (invitation, answer, synchronised A→S)."""

import pytest

from procanim_addon.handshake.phases import Arbiter, CharacterFSM, Phase, PhaseError


def pair(accept=True, response=5):
    i, p = CharacterFSM("initiator", True), CharacterFSM("partner", False)
    return i, p, Arbiter(i, p, accept, response)


def test_the_initiator_goes_through_every_phase_in_order():
    i, p, arb = pair()
    arb.invite(3)
    assert i.phase is Phase.DUMMY
    i.go(Phase.APPROACH, 10)
    p.go(Phase.APPROACH, 8)
    assert arb.try_shake(20, True, True)
    i.go(Phase.RETREAT, 40)
    i.go(Phase.NEUTRAL, 50)
    assert i.sequence() == "NDASRN"


@pytest.mark.parametrize("start, bad", [
    (Phase.NEUTRAL, Phase.SHAKE), (Phase.NEUTRAL, Phase.RETREAT), (Phase.APPROACH, Phase.RETREAT),
    (Phase.SHAKE, Phase.APPROACH), (Phase.RETREAT, Phase.SHAKE),
])
def test_skipping_a_phase_is_refused(start, bad):
    fsm = CharacterFSM("x", True, phase=start)
    with pytest.raises(PhaseError):
        fsm.go(bad, 1)


def test_only_the_initiator_invites():
    with pytest.raises(PhaseError):
        CharacterFSM("partner", False).go(Phase.DUMMY, 0)


def test_the_arbiter_answers_after_the_reaction_time():
    i, p, arb = pair(accept=True, response=5)
    assert arb.poll(0) is None
    arb.invite(2)
    assert arb.poll(6) is None
    assert arb.poll(7) is True and arb.answered_at == 7


def test_refusal_sends_the_initiator_from_dummy_to_retreat():
    i, p, arb = pair(accept=False, response=2)
    arb.invite(0)
    assert arb.poll(2) is False
    i.go(Phase.RETREAT, 4)
    i.go(Phase.NEUTRAL, 10)
    assert i.sequence() == "NDRN" and p.sequence() == "N"


def test_approach_to_shake_waits_for_both():
    i, p, arb = pair()
    arb.invite(0)
    i.go(Phase.APPROACH, 5)
    p.go(Phase.APPROACH, 3)
    assert not arb.try_shake(10, True, False)
    assert not arb.try_shake(11, False, True)
    assert i.phase is p.phase is Phase.APPROACH
    assert arb.try_shake(12, True, True)
    assert i.history[-1] == (12, Phase.SHAKE) and p.history[-1] == (12, Phase.SHAKE)


def test_poses_are_shared_with_the_other_character():
    i, p, arb = pair()
    arb.share("initiator", "pose-i")
    arb.share("partner", "pose-p")
    assert arb.pose_of_other("initiator") == "pose-p" and arb.pose_of_other("partner") == "pose-i"
