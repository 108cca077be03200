"""Inverse kinematics solvers (numpy, batched over frames where the method allows)."""
