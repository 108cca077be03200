"""Phases of the handshake (Deglorie et al. 2015, §5–6): one state machine per character and an arbiter.

States: N (neutral), D (dummy: the initiator's invitation), A (approach), S (shake), R (retreat)::

    initiator  N → D → A → S → R → N          partner  N → A → S → R → N
                   D → R (invitation refused)

Every transition is the character's own except A → S, which both take on the same frame once both
have arrived (the one synchronised transition). The :class:`Arbiter` receives the invitation,
answers it (accept or refuse) after the partner's reaction time, shares each character's current
pose with the other, and releases the synchronised A → S.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class Phase(StrEnum):
    NEUTRAL = "N"
    DUMMY = "D"
    APPROACH = "A"
    SHAKE = "S"
    RETREAT = "R"


ALLOWED = {
    Phase.NEUTRAL: {Phase.DUMMY, Phase.APPROACH},
    Phase.DUMMY: {Phase.APPROACH, Phase.RETREAT},
    Phase.APPROACH: {Phase.SHAKE},
    Phase.SHAKE: {Phase.RETREAT},
    Phase.RETREAT: {Phase.NEUTRAL},
}


class PhaseError(RuntimeError):
    """A transition the handshake's state machine does not have (a bug, not a user error)."""


@dataclass
class CharacterFSM:
    """One character's phase and the frames at which it entered each phase."""

    name: str
    initiator: bool
    phase: Phase = Phase.NEUTRAL
    history: list = field(default_factory=lambda: [(0, Phase.NEUTRAL)])

    def go(self, phase: Phase, frame: int) -> None:
        if phase not in ALLOWED[self.phase]:
            raise PhaseError(f"{self.name}: no transition {self.phase.value} → {phase.value}")
        if phase is Phase.DUMMY and not self.initiator:
            raise PhaseError(f"{self.name}: only the initiator invites (N → D)")
        self.phase = phase
        self.history.append((frame, phase))

    def sequence(self) -> str:
        """The phases visited, e.g. 'NDASRN'."""
        return "".join(p.value for _, p in self.history)


@dataclass
class Arbiter:
    """Mediates between two characters: invitation, answer, shared poses, the synchronised A → S.

    accept:          the partner's answer
    response_frames: frames between the invitation and the answer
    """

    initiator: CharacterFSM
    partner: CharacterFSM
    accept: bool = True
    response_frames: int = 8
    invited_at: int | None = None
    answer: bool | None = None
    answered_at: int | None = None
    poses: dict = field(default_factory=dict)

    def invite(self, frame: int) -> None:
        """The initiator starts the dummy phase: the invitation is out."""
        self.initiator.go(Phase.DUMMY, frame)
        self.invited_at = frame

    def poll(self, frame: int) -> bool | None:
        """The partner's answer once its reaction time has passed (None before)."""
        if self.invited_at is None:
            return None
        if self.answer is None and frame >= self.invited_at + self.response_frames:
            self.answer = bool(self.accept)
            self.answered_at = frame
        return self.answer

    def share(self, name: str, pose) -> None:
        """Publish a character's current pose (world-space data) for the other to read."""
        self.poses[name] = pose

    def pose_of_other(self, name: str):
        other = self.partner.name if name == self.initiator.name else self.initiator.name
        return self.poses.get(other)

    def try_shake(self, frame: int, initiator_arrived: bool, partner_arrived: bool) -> bool:
        """A → S for both on the same frame, only when both have arrived."""
        if (self.initiator.phase is Phase.APPROACH and self.partner.phase is Phase.APPROACH
                and initiator_arrived and partner_arrived):
            self.initiator.go(Phase.SHAKE, frame)
            self.partner.go(Phase.SHAKE, frame)
            return True
        return False
