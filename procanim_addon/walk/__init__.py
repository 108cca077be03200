"""Path walk: a humanoid walks a path from ground reaction forces.

The method: K. Tsutsuguchi, S. Shimada, Y. Suenaga, N. Sonehara, S. Ohtsuka, "Human walking
animation based on foot reaction force in the three-dimensional virtual world", The Journal of
Visualization and Computer Animation 11 (2000) 3–16. Equation and figure numbers in this package
are the paper's; the project's notes are in ``docs/path_walk.md``.

Entry point: :func:`generate_path_walk` ``(skeleton, rigmap, path_points (N, 3), ground, params,
progress) -> Clip``.

Modules, in the order the method uses them: ``path`` (arc length, corners, dropping onto the
ground), ``steps`` (path division into footsteps and step objects S_i), ``timing`` (T, T_ds,
eqs. 1–4), ``forces`` (reaction-force model, eqs. 6–9), ``com`` (COM by shooting, eq. 5;
``shooting``: its least squares, block by block in time), ``feet`` (stance roll, swing orbit),
``support`` (COM and feet solved together within the legs' reach), ``reach`` (leg reach limits),
``turning`` (Ψ = ψ1 + ψ2, eqs. 10–11), ``body`` (pelvis, trunk, head, root over the frames),
``legs`` (two-bone IK), ``arms`` (driven pendulum, eqs. 14–20), ``pose`` (wanted matrices →
channels), ``gait`` (assembly into a Clip), ``metrics`` (quality measured on the clip's FK),
``character`` (what is read from the rig), ``cycle`` (a walk
loop: a straight walk's steadiest gait cycle made seamless, ``PathWalkParams.loop``).

Reconstructions and choices (RECON = the paper's equation was lost in transcription; each is a
parameter of :class:`PathWalkParams` / :class:`ForceCoefficients`):

* RECON F_y = s_y·M·g·Σ a_yk sin kπτ, a_y = (1.3, f_v, 0.4); F_x = s_x·M·g·Σ a_xk sin kπτ with
  a_x = (0, −0.18, 0); F_z uses the paper's a_z. τ runs over a foot's stance (T + T_ds).
* Shooting: the scales of all footsteps are solved together (one least squares with a small pull
  toward nominal scales) so the COM passes every step's boundary position; position and velocity
  are continuous by construction. The first harmonic of F_x (RECON) is solved per footstep too, so
  the walker can start, stop and change speed. Lateral targets: the COM on the path at each heel
  strike; a weight shift before the first step starts the sway.
* Start/stop (not in the paper): standing P_0, P_1 side by side; the COM settles after the last
  heel strike on a cubic with continuous position and velocity.
* RECON turning: I_r·Ψ̈ = r_r·F_r with F_r a step from T_ds to T_0, then an equal opposite step, so
  Ψ̇ = 0 at each step boundary; the size is closed-form. ψ1 (2/5) twists the stance leg (knee
  direction), ψ2 (3/5) turns the pelvis.
* Stance roll as the paper's Figure 10 (KLAW); heel-off starts when C passes the ankle (paper) but
  within 20–80 % of the next step; on stairs the foot lands flat (paper).
* Swing: ankle progress = hip progress + l·sin θ of a free linear pendulum (ω² = 3g/2l, slowed for
  long swings), end speeds matched to the roll; height on two cubics joined at the apex, raised
  for clearance (then a local smooth lift over nosings). On stairs the foot lifts, then travels.
* Legs: two-bone IK (``ik.two_bone``) with the hip–ankle distance kept under ``knee_reach`` of
  the leg; the pelvis is lowered (smoothly) wherever a weight-bearing leg could not reach, so
  planted feet never slide; a swinging foot out of reach is raised.
* The stance knee of measured gait on level ground (``PathWalkParams.norms``, Perry and Burnfield
  2010): heel-strike heights where the landing leg is nearly straight, C corrected kinematically
  (a smooth B-spline offset, the paper's "kinematic calculation which corrects") toward the knee's
  loading-response flexion and near extension in mid and terminal stance; RECON: C's place in the
  step at heel strike from measured vertical travel (Orendurff et al. 2004), the feet's heel-off
  and toe-off angles (and an earlier toe off on long brisk steps) from the pre-swing knee; the foot
  flat at the end of loading response. On stairs the pelvis keeps a margin under the legs' reach.
* Stairs: every sole is checked on the ground (steps crossed at an angle too); one step per tread
  (two when both fit the stride and the height limit), feet centred on treads, steps onto and off
  a flight shorter; the trailing heel is up 25° at the other heel strike, toe off 30°.
* Arm pendulum: Dempster segment masses; Ẍ of the shoulder is taken as 0 (the shoulder rotation σ
  is applied kinematically); elbow β = β_c ± 30 % with the swing.
"""

from .gait import generate_path_walk
from .params import ForceCoefficients, PathWalkParams

__all__ = ["generate_path_walk", "PathWalkParams", "ForceCoefficients"]
