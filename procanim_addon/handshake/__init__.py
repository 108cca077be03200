"""Handshake between two characters (Deglorie et al., "Procedural Animation of Human
Interaction using Inverse Kinematics and Fuzzy Logic", GRAPP 2015): model, phases, generator."""

from .generate import generate_handshake
from .params import HandshakeParams

__all__ = ["generate_handshake", "HandshakeParams"]
