"""What a control rig's constraints say about its controls, found once per bake.

Nothing here is a table of bone names: limbs are found from their IK/FK switches, IK chains from
their IK constraints, and the control that drives each deform bone by following what it copies.
What is family-specific — the switches' property names and values, which bones are controls and
which form the deform skeleton — comes from the rig's control map (:mod:`.maps`).

* A **limb** is an IK/FK switch (a custom property the map names: Rigify's ``IK_FK`` on any bone,
  CloudRig's ``ik_left_thigh`` on ``Properties``). The deform bones it drives are the owners of the
  Copy Transforms constraints whose influence that property drives; each copies its FK source
  first and its IK source second (the driven one). The active IK constraint that targets one of the
  IK sources gives the IK chain, its target and its pole; the main IK control is the top-most
  control above the IK target (``foot_ik``, ``IK-Foot.L``), below the mechanism bone that switches
  its parent. A limb the map lists with its bones and no switch (an IK-only leg) is found from what
  those bones copy. Controls the map names for a limb (IK control, pole, FK controls) are used as
  named.
* Every other deform bone is driven by the first control found by following, from the bone, what
  it copies (else its parent) — ``ORG-spine`` → ``tweak_spine`` → ``spine_fk``;
  ``ORG-spine.006`` → ``head``.
* The **trunk** is the deform chain from the skeleton's root to where the limbs attach; the torso
  control is the nearest control above the controls that drive it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..skeleton import Skeleton
from .maps import LimbControls, Switch
from .rig import ControlRig

POLE_SWITCH = "pole_vector"


@dataclass
class Limb:
    """One IK/FK limb. Indices are rig bone indices; ``deform`` lists the driven bones in chain order.

    ``switch``: the ``(bone, property)`` of its IK/FK switch (None: no switch, one side only);
    ``ik_value``/``fk_value``: the switch's values for each side; ``fk``/``ik``: per deform bone,
    the bone it copies on each side (-1: none); ``fk_controls``: per deform bone, the FK control
    keyed for it (the FK source itself on Rigify, its control parent on CloudRig)."""

    switch: tuple[str, str] | None
    deform: list[int]
    fk: list[int]
    ik: list[int]
    ik_owner: int = -1
    chain: list[int] = field(default_factory=list)
    ik_target: int = -1
    ik_control: int = -1
    pole: int = -1
    pole_angle: float = 0.0
    ik_value: float = 0.0
    fk_value: float = 1.0
    fk_controls: list[int] = field(default_factory=list)
    role: str = ""

    def value(self, mode: str) -> float:
        """The switch value that puts the limb in ``mode`` ('IK' or 'FK')."""
        return self.ik_value if mode == "IK" else self.fk_value


def _copies(rig: ControlRig, i: int) -> list:
    return [c for c in rig.constraints[i] if c.kind == "COPY_TRANSFORMS" and c.target >= 0]


def switch_holders(rig: ControlRig, switch: Switch) -> list[str]:
    """The bones holding ``switch``'s property (its own bone, or every bone that has it)."""
    if switch.bone:
        return [switch.bone] if switch.prop in rig.properties.get(switch.bone, {}) else []
    return [bone for bone, props in rig.properties.items() if switch.prop in props]


def find_limbs(rig: ControlRig) -> list[Limb]:
    """Every limb whose deform bones a switch of the rig's map blends, and every limb the map lists
    without a switch (rig order of their first bone)."""
    limbs = []
    for switch in rig.family.all_switches:
        for bone in switch_holders(rig, switch):
            limb = _switched_limb(rig, switch, bone)
            if limb is not None:
                limbs.append(limb)
    for spec in rig.family.limbs:
        if spec.switch is None and spec.bones:
            limb = _plain_limb(rig, spec)
            if limb is not None:
                limbs.append(limb)
    for limb in limbs:
        _named_controls(rig, limb)
    return sorted(limbs, key=lambda limb: limb.deform[0])


def _switched_limb(rig: ControlRig, switch: Switch, bone: str) -> Limb | None:
    owners = [
        (i, c)
        for i, cons in enumerate(rig.constraints)
        for c in cons
        if c.driver == (bone, switch.prop) and c.kind == "COPY_TRANSFORMS" and c.target >= 0 and rig.in_skeleton(i)
    ]
    if not owners:
        return None
    limb = Limb(switch=(bone, switch.prop), deform=[], fk=[], ik=[], ik_value=switch.ik, fk_value=switch.fk)
    for i, c in sorted(owners, key=lambda t: t[0]):
        fk = [d.target for d in _copies(rig, i) if d is not c and d.driver is None]
        limb.deform.append(i)
        limb.fk.append(fk[0] if fk else -1)
        limb.ik.append(c.target)
    _find_ik(rig, limb)
    return limb


def _plain_limb(rig: ControlRig, spec: LimbControls) -> Limb | None:
    """A limb the map lists by its bones, with no switch: IK when the map names an IK control, FK
    otherwise; each bone's source is what it copies in full (else the bone itself)."""
    bones = [rig.get(b) for b in spec.bones]
    if not bones or min(bones) < 0:
        return None
    sources = []
    for i in bones:
        full = [c.target for c in _copies(rig, i) if c.influence >= 1.0]
        sources.append(full[-1] if full else i)
    none = [-1] * len(bones)
    if spec.ik_control:
        limb = Limb(switch=None, deform=bones, fk=none, ik=sources)
        _find_ik(rig, limb)
    else:
        limb = Limb(switch=None, deform=bones, fk=sources, ik=list(none))
    return limb


def _named_controls(rig: ControlRig, limb: Limb) -> None:
    """The FK control of each deform bone, and what the map names for the limb."""
    spec = _spec_of(rig, limb)
    limb.fk_controls = [_control_at_or_above(rig, src) for src in limb.fk]
    if spec is None:
        return
    limb.role = spec.role
    if spec.ik_control and rig.get(spec.ik_control) >= 0:
        limb.ik_control = rig.get(spec.ik_control)
    if spec.pole and limb.pole < 0 and rig.get(spec.pole) >= 0:
        limb.pole = rig.get(spec.pole)
    names = [rig.names[i] for i in limb.deform]
    for k, control in enumerate(spec.fk):
        if k < len(spec.bones) and spec.bones[k] in names and rig.get(control) >= 0:
            limb.fk_controls[names.index(spec.bones[k])] = rig.get(control)


def _spec_of(rig: ControlRig, limb: Limb) -> LimbControls | None:
    names = {rig.names[i] for i in limb.deform}
    for spec in rig.family.limbs:
        if limb.switch is not None and spec.switch is not None:
            holder = spec.switch.bone or limb.switch[0]
            if (holder, spec.switch.prop) == limb.switch:
                return spec
        elif names & set(spec.bones):
            return spec
    return None


def _control_at_or_above(rig: ControlRig, i: int, depth: int = 4) -> int:
    """``i`` when it is a control, else its nearest control parent (a few levels at most, never the
    root or a deform skeleton bone); -1 when none."""
    for _ in range(depth):
        if i < 0 or rig.in_skeleton(i) or rig.names[i] == rig.root_name:
            return -1
        if rig.is_control(i):
            return i
        i = int(rig.parents[i])
    return -1


def _find_ik(rig: ControlRig, limb: Limb) -> None:
    sources = set(limb.ik)
    for i, cons in enumerate(rig.constraints):
        for c in cons:
            if c.kind == "IK" and c.target in sources and c.influence > 0:
                limb.ik_owner, limb.ik_target, limb.pole, limb.pole_angle = i, c.target, c.pole, c.pole_angle
                chain, j = [], i
                while j >= 0 and (c.chain_count == 0 or len(chain) < c.chain_count):
                    chain.append(j)
                    j = int(rig.parents[j])
                limb.chain = chain[::-1]
                limb.ik_control = main_control_above(rig, c.target)
                return


def main_control_above(rig: ControlRig, i: int) -> int:
    """The top-most control among ``i``'s ancestors, stopping at a bone that switches parents
    (an Armature constraint) or at the rig's root bone."""
    found, j = -1, i
    while j >= 0 and rig.names[j] != rig.root_name:
        if any(c.kind == "ARMATURE" for c in rig.constraints[j]):
            break
        if rig.is_control(j):
            found = j
        j = int(rig.parents[j])
    return found


def driver_control(rig: ControlRig, i: int, depth: int = 16) -> int:
    """The control that drives deform bone ``i``: follow what it copies in full (else its parent)
    until a control; -1 when another deform skeleton bone (``ORG-``) or the root is reached first.

    A bone aimed by Stretch To takes its direction from the stretch target and its place from its
    head: a control met on the way counts only if turning it moves the head (its own head is
    elsewhere) or moves the stretch target (the bird's tail bones hang from the tail control
    *before* the one they copy)."""
    stretch = [c.target for c in rig.constraints[i] if c.kind == "STRETCH_TO" and c.influence > 0 and c.target >= 0]
    reach = reads_closure(rig, stretch[-1]) if stretch else None
    head = rig.heads[i]
    j = i
    for _ in range(depth):
        copies = [c.target for c in _copies(rig, j) if c.influence >= 1.0]
        j = copies[-1] if copies else int(rig.parents[j])
        if j < 0 or rig.in_skeleton(j):
            return -1
        if rig.is_control(j):
            if reach is None or j in reach or np.linalg.norm(rig.heads[j] - head) > 1e-6 * max(rig.lengths[i], 1e-3):
                return j
    return -1


def reads_closure(rig: ControlRig, i: int, depth: int = 24) -> set[int]:
    """Every bone whose pose bone ``i``'s evaluation reads (parents and constraint targets, an
    Armature constraint's bones with weight)."""
    seen: set[int] = set()
    frontier = [i]
    for _ in range(depth):
        nxt = []
        for b in frontier:
            live = [c for c in rig.constraints[b] if c.influence > 0]
            targets = [c.target for c in live] + [j for c in live for j, w in c.targets if w > 0]
            for r in [int(rig.parents[b]), *targets]:
                if r >= 0 and r not in seen:
                    seen.add(r)
                    nxt.append(r)
        frontier = nxt
    return seen


def trunk(skeleton: Skeleton, limb_roots: list[str], root: str = "root") -> list[str]:
    """Deform bones from the skeleton's root (exclusive of the ``root`` bone itself) to every limb's
    attachment: the chain the torso carries."""
    out: list[str] = []
    for name in limb_roots:
        if not skeleton.has(name):
            continue
        i = skeleton.parents[skeleton.index(name)]
        path = []
        while i >= 0:
            path.append(skeleton.names[i])
            i = skeleton.parents[i]
        for n in path[::-1]:
            if n != root and n not in out:
                out.append(n)
    return out


def common_control(rig: ControlRig, controls: list[int]) -> int:
    """The nearest control that is an ancestor of every one of ``controls`` (-1: none but root)."""
    if not controls:
        return -1

    def ancestors(i: int) -> list[int]:
        out, j = [], int(rig.parents[i])
        while j >= 0:
            out.append(j)
            j = int(rig.parents[j])
        return out

    common = ancestors(controls[0])
    for c in controls[1:]:
        anc = set(ancestors(c))
        common = [j for j in common if j in anc]
    for j in common:
        if rig.is_control(j) and int(rig.parents[j]) >= 0:
            return j
    return -1


def evaluation_order(rig: ControlRig) -> list[int]:
    """Rank of each bone in an order where every bone comes after all the bones it reads (its
    parent and its constraints' targets): the order in which controls are solved."""
    reads: list[set[int]] = [set() for _ in rig.names]
    for i, p in enumerate(rig.parents):
        if p >= 0:
            reads[i].add(int(p))
    for i, cons in enumerate(rig.constraints):
        for c in cons:
            for t in (c.target, c.pole, *(j for j, _ in c.targets)):
                if t is not None and t >= 0 and t != i:
                    reads[i].add(t)
    readers: list[list[int]] = [[] for _ in rig.names]
    for i, rs in enumerate(reads):
        for r in rs:
            readers[r].append(i)
    waiting = [len(rs) for rs in reads]
    ready = [i for i, w in enumerate(waiting) if w == 0]
    rank = [len(rig.names)] * len(rig.names)
    k = 0
    while ready:
        i = ready.pop()
        rank[i] = k
        k += 1
        for j in readers[i]:
            waiting[j] -= 1
            if waiting[j] == 0:
                ready.append(j)
    return rank
