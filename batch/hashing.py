"""The content hash of a shot, and whether its outputs already hold that hash (resume).

The hash (SHA-256, hex) covers what decides the bake: the bytes of the input files (the .blend,
the imported BVH/FBX), the generator and its validated settings, the importer's settings, the
extension's version, Blender's version, and whether the shot's own scripts were trusted (a trusted
bake may differ: what the scripts did is in it). The shot's name and its output paths are not in it.
Files that the .blend itself references (linked libraries, textures) are not read.

A shot is *done* for a hash when every output exists and its metrics JSON (written last, after
the .blend and the FBX, each by an atomic rename) records that hash.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from pathlib import Path

from .jobfile import Shot

HASH_FORMAT = 1
_CHUNK = 1 << 20


def extension_version() -> str:
    """The extension's version from its manifest (next to this package in the repository and in
    the installed extension)."""
    manifest = Path(__file__).resolve().parent.parent / "blender_manifest.toml"
    with open(manifest, "rb") as fh:
        return str(tomllib.load(fh)["version"])


def file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def shot_hash(
    shot: Shot, blender_version: str, digests: dict[Path, str] | None = None, trust_scripts: bool = False
) -> str:
    """The shot's content hash. ``digests`` caches file digests (shots often share a .blend)."""
    digests = {} if digests is None else digests
    files = []
    for path in shot.inputs():
        if path not in digests:
            digests[path] = file_digest(path)
        files.append(digests[path])
    imported = None
    if shot.imported is not None:
        imported = {"operator": shot.imported.operator, "name": shot.imported.name, "options": shot.imported.options}
    content = {
        "format": HASH_FORMAT,
        "extension": extension_version(),
        "blender": blender_version,
        "generator": shot.generator,
        "settings": shot.settings,
        "import": imported,
        "files": files,
    }
    if trust_scripts:  # only when set: an untrusted bake's hash does not depend on this option
        content["trust_scripts"] = True
    return hashlib.sha256(json.dumps(content, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def recorded_hash(metrics_path: Path) -> str | None:
    """The hash a previous bake wrote into its metrics JSON (None when absent or unreadable)."""
    try:
        with open(metrics_path, encoding="utf-8") as fh:
            value = json.load(fh).get("input_hash")
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None


def is_done(shot: Shot, input_hash: str) -> bool:
    """True when the shot's outputs exist and were made from the same inputs and settings."""
    return all(p.is_file() for p in shot.outputs()) and recorded_hash(shot.metrics) == input_hash
