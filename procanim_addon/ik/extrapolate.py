"""Jumping an iterative solver ahead to the limit of its own iterations (the subspace form of
Anderson acceleration / minimal polynomial extrapolation), on plain floats.

CCD sweeps, Jacobian-transpose steps and FABRIK passes converge linearly: the error shrinks by a
roughly constant factor per iteration (0.6–0.97 on an arm), which is why they need 20–80
iterations per frame where DLS needs two. Near the solution an iteration ``θ ← Φ(θ)`` is linear,
``θ_{k+1} − θ* = M (θ_k − θ*)``, and every pose that reaches the target is a fixed point of it, so
``M − I = −X J`` (``J``: the effector's Jacobian): the steps ``Δ_k = θ_{k+1} − θ_k`` lie in one
subspace E of at most three dimensions (the target's), and the limit the iterations go to is the
pose along E where the effector error ``e = p − t`` vanishes. With ``V`` the last ``K`` steps
(columns)::

    θ* ≈ θ_k − V c,      (J V) c = e        (least squares, K = 2 or 3)

— the point the method itself converges to, to second order in the correction left. So the jump is
taken only while that correction is small (no angle moves more than ``max_jump`` rad: further out
the linear model does not hold and the jump would land on another pose of the solution set than the
iterations go to) and only when it brings the effector closer; then the method iterates on.
How close the jumps land to each method's own converged pose is measured on the bench handshake
(docs/performance.md, Handshake and IK). (Anderson 1965, "Iterative procedures for nonlinear
integral equations"; the secant form below needs no Jacobian.)
"""

from __future__ import annotations

from ._effector import distance2

# Per method: steps kept (K), first steps skipped (the first move of a frame is not in the linear
# regime), largest angle change of a jump (rad). Measured on the bench handshake (docs/performance.md).
SETTINGS = {"CCD": (2, 1, 0.01), "JACOBIAN_TRANSPOSE": (3, 2, 0.007), "FABRIK": (2, 1, 0.003)}
# Right after a jump the solve stops only within this fraction of its tolerance, else it iterates on:
# a jump lands anywhere within the tolerance, the iterations approach the target along the motion
# (so the two hands' errors agree, and the grip-to-grip error of the paper's Table 3 stays small).
STOP_AFTER_JUMP = 0.5
# Tikhonov weight of the small normal equations, relative to their trace (nearly parallel steps).
RIDGE = 1e-12


class Extrapolator:
    """The last steps of one solve of the first ``count`` joints of a chain (``kern``:
    :class:`~.kernel.Kernel`) — the angles' and the effector's — and the jump they propose.

    ``J V`` is taken from the steps themselves (the effector's move over each kept step, the secant
    form of Anderson acceleration): no Jacobian is built, an attempt costs a 2×2 or 3×3 solve."""

    def __init__(self, kern, count: int, method: str):
        self.kern, self.count = kern, count
        self.keep, self.skip, self.max_jump = SETTINGS[method]
        self.n = 3 * count
        self.steps: list[tuple[list, tuple]] = []  # (Δθ, Δp)
        self.seen = 0
        self.last = None  # (θ, p) before the iteration under way
        self.stop2 = 1.0  # the squared tolerance's factor for the next convergence test

    def next(self, th, p, target, g0, h0):
        """Call at the top of every iteration, the effector at ``p`` for the flat angles ``th``: the
        step under way ends here; returns the angles to go on from after a jump (see :meth:`jump`),
        or None — then the caller iterates from ``th`` as usual."""
        if self.last is not None:
            th0, p0 = self.last
            self.seen += 1
            if self.seen > self.skip:
                self.steps.append(([a - b for a, b in zip(th[:self.n], th0)],
                                   (p[0] - p0[0], p[1] - p0[1], p[2] - p0[2])))
                if len(self.steps) > self.keep:
                    del self.steps[0]
        jumped = self.jump(p, target, th, g0, h0)
        self.last = None if jumped else (th[:self.n], p)
        self.stop2 = STOP_AFTER_JUMP ** 2 if jumped else 1.0
        return jumped

    def jump(self, p, target, th, g0, h0):
        """The extrapolated flat angles (clamped into the limits) if the jump is small and brings the
        effector closer to ``target`` than ``p`` (the effector at ``th``); otherwise None."""
        steps = self.steps
        if len(steps) < self.keep:
            return None
        e = (p[0] - target[0], p[1] - target[1], p[2] - target[2])
        c = _least_squares([dp for _, dp in steps], e)
        if c is None:
            return None
        if len(c) == 2:
            (v0, _), (v1, _) = steps
            c0, c1 = c
            moved = [c0 * x + c1 * y for x, y in zip(v0, v1)]
        else:
            (v0, _), (v1, _), (v2, _) = steps
            c0, c1, c2 = c
            moved = [c0 * x + c1 * y + c2 * z for x, y, z in zip(v0, v1, v2)]
        big = self.max_jump
        for x in moved:
            if x > big or -x > big:
                return None
        kern = self.kern
        new = kern.clamp([x - d for x, d in zip(th[:self.n], moved)] + list(th[self.n:]))
        if distance2(target, kern.point(g0, h0, new, self.count)[0]) >= distance2(target, p):
            return None
        self.steps = []
        return new


def _least_squares(a, e):
    """``c`` minimising ``|Σ c_k a_k − e|`` for 2 or 3 vectors ``a_k`` (3-tuples), by the normal
    equations with a tiny ridge; None when they are singular."""
    k = len(a)
    n = [[sum(x * y for x, y in zip(a[r], a[s])) for s in range(k)] for r in range(k)]
    b = [sum(x * y for x, y in zip(a[r], e)) for r in range(k)]
    ridge = RIDGE * sum(n[r][r] for r in range(k))
    for r in range(k):
        n[r][r] += ridge
    if k == 2:
        det = n[0][0] * n[1][1] - n[0][1] * n[1][0]
        if det == 0.0:
            return None
        return ((b[0] * n[1][1] - n[0][1] * b[1]) / det, (n[0][0] * b[1] - b[0] * n[1][0]) / det)
    (a00, a01, a02), (a10, a11, a12), (a20, a21, a22) = n
    c00, c01, c02 = a11 * a22 - a12 * a21, a02 * a21 - a01 * a22, a01 * a12 - a02 * a11
    det = a00 * c00 + a10 * c01 + a20 * c02
    if det == 0.0:
        return None
    c10, c11, c12 = a12 * a20 - a10 * a22, a00 * a22 - a02 * a20, a02 * a10 - a00 * a12
    c20, c21, c22 = a10 * a21 - a11 * a20, a01 * a20 - a00 * a21, a00 * a11 - a01 * a10
    return ((c00 * b[0] + c01 * b[1] + c02 * b[2]) / det,
            (c10 * b[0] + c11 * b[1] + c12 * b[2]) / det,
            (c20 * b[0] + c21 * b[1] + c22 * b[2]) / det)
