"""Handshake between two characters (M2: Deglorie et al., GRAPP 2015): model, phases, generator."""

from .generate import generate_handshake
from .params import HandshakeParams

__all__ = ["generate_handshake", "HandshakeParams"]
