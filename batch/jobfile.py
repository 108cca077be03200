"""The job file: a TOML list of shots, read and checked for shape before anything runs.

A job file (paths are relative to the file itself)::

    [defaults]                       # every shot starts from these
    output_dir = "baked"             # <output_dir>/<shot>.blend, .json (metrics), .fbx and .glb
    fbx = false                      # also export an FBX of the baked armatures
    gltf = false                     # also export a glTF binary (.glb; a file name ending .gltf: separate)
    blend = "scenes/street.blend"    # a default input scene
    generator = "path_walk"

    [defaults.path_walk]             # settings every path_walk shot starts from
    cadence = 105.0

    [shots.walk_01]
    settings = { armature = "Human", path = "Street", speed = 1.3 }

    [shots.mocap_on_hills]
    blend = "scenes/hills.blend"     # the scene the motion is imported into (optional)
    generator = "adapt_terrain"
    import = { file = "mocap/walk.bvh", name = "Walker", global_scale = 0.01 }
    settings = { armature = "Walker", terrain = "Hills" }

This module is stdlib only (no bpy): it reads the TOML, merges the defaults and checks the shape
(known keys, types, files and names). The settings are checked against the operators' own limits
by :mod:`.checks`, with Blender. Every problem is collected and reported together, each message
naming the shot and the key.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

SHOT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
SHOT_KEYS = ("generator", "blend", "import", "settings", "output", "metrics", "fbx", "gltf", "output_dir")
DEFAULT_KEYS = ("generator", "blend", "output_dir", "fbx", "gltf")
IMPORTERS = {".bvh": "import_anim.bvh", ".fbx": "import_scene.fbx"}
DEFAULT_OUTPUT_DIR = "baked"


class JobFileError(Exception):
    """The job file cannot run; ``messages`` lists every problem (each names the shot and key)."""

    def __init__(self, messages: list[str]):
        super().__init__("\n".join(messages))
        self.messages = messages


@dataclass
class Import:
    """A motion file imported onto a new armature with Blender's importer before the bake."""

    file: Path
    name: str  # the new armature object's name
    operator: str  # "import_anim.bvh" or "import_scene.fbx"
    options: dict = field(default_factory=dict)  # the importer's own arguments


@dataclass
class Shot:
    """One bake: an input scene, a generator with its settings, and where the results go."""

    name: str
    generator: str
    blend: Path | None
    settings: dict
    output: Path
    metrics: Path
    fbx: Path | None = None
    imported: Import | None = None
    gltf: Path | None = None

    @property
    def operator(self) -> str:
        """The operator id (``procanim.<generator>``)."""
        return f"procanim.{self.generator}"

    def inputs(self) -> list[Path]:
        """The files whose bytes make the shot's content hash (the scene, the imported motion)."""
        return [p for p in (self.blend, self.imported.file if self.imported else None) if p is not None]

    def outputs(self) -> list[Path]:
        """Every file the shot writes; the metrics JSON (written last) comes last."""
        return [p for p in (self.output, self.fbx, self.gltf) if p is not None] + [self.metrics]

    def spec(self, input_hash: str) -> dict:
        """What a worker needs to bake the shot: plain JSON (absolute paths)."""
        imported = None
        if self.imported is not None:
            imported = {
                "file": str(self.imported.file),
                "name": self.imported.name,
                "operator": self.imported.operator,
                "options": self.imported.options,
            }
        return {
            "name": self.name,
            "generator": self.generator,
            "operator": self.operator,
            "blend": str(self.blend) if self.blend else None,
            "import": imported,
            "settings": self.settings,
            "output": str(self.output),
            "metrics": str(self.metrics),
            "fbx": str(self.fbx) if self.fbx else None,
            "gltf": str(self.gltf) if self.gltf else None,
            "input_hash": input_hash,
        }


@dataclass
class JobFile:
    path: Path
    shots: list[Shot]  # the shots whose shape is right
    output_dir: Path  # the job's output folder (the report and the workers' logs go there)
    problems: list[str] = field(default_factory=list)  # every shape problem (the file cannot run)


def parse_toml(path: Path) -> dict:
    """The TOML document at ``path``; JobFileError naming the line and column when it is malformed."""
    try:
        text = path.read_bytes()
    except OSError as err:
        raise JobFileError([f"{path}: cannot read the job file ({err.strerror or err})"]) from None
    try:
        return tomllib.loads(text.decode("utf-8"))
    except UnicodeDecodeError as err:
        raise JobFileError([f"{path}: not UTF-8 text ({err.reason} at byte {err.start})"]) from None
    except tomllib.TOMLDecodeError as err:
        raise JobFileError([f"{path}: malformed TOML: {err}"]) from None


def load(path: Path, generators: tuple[str, ...], output_dir: Path | None = None) -> JobFile:
    """Read and shape-check the job file at ``path``.

    ``generators`` are the known generator ids (the registry's); ``output_dir`` overrides the file's
    ``defaults.output_dir``. Raises :class:`JobFileError` when the file cannot be read as TOML;
    other problems are listed in ``JobFile.problems`` (the shots without problems are kept, so that
    the Blender-side checks can still report theirs: every problem is listed in one go).
    """
    path = Path(path).resolve()
    doc = parse_toml(path)
    errors: list[str] = []
    where = path.name
    for key in doc:
        if key not in ("defaults", "shots"):
            errors.append(f"{where}: unknown top-level key '{key}' (known: defaults, shots)")
    defaults = _table(doc, "defaults", where, errors)
    per_generator = {}
    for key in defaults:
        if key in generators:
            per_generator[key] = _table(defaults, key, f"{where}: defaults", errors)
        elif key not in DEFAULT_KEYS:
            errors.append(
                f"{where}: defaults.{key}: unknown key (known: {', '.join(DEFAULT_KEYS)}, "
                f"or a generator id for its settings: {', '.join(generators)})"
            )
    shots_table = _table(doc, "shots", where, errors)
    if not shots_table and not errors:
        errors.append(f"{where}: no shots: add tables [shots.<name>]")
    shots = []
    for name, raw in shots_table.items():
        shot = _shot(path, name, raw, defaults, per_generator, generators, output_dir, errors)
        if shot is not None:
            shots.append(shot)
    _check_unique_outputs(shots, errors)
    job_dir = output_dir if output_dir is not None else defaults.get("output_dir", DEFAULT_OUTPUT_DIR)
    if not isinstance(job_dir, (str, Path)):
        job_dir = DEFAULT_OUTPUT_DIR
    return JobFile(path, shots, (path.parent / job_dir).resolve(), errors)


def _table(doc: dict, key: str, where: str, errors: list[str]) -> dict:
    value = doc.get(key, {})
    if not isinstance(value, dict):
        errors.append(f"{where}: {key}: must be a table, got {_kind(value)}")
        return {}
    return value


def _kind(value) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "an array"}.get(
        type(value), type(value).__name__
    )


def _shot(path, name, raw, defaults, per_generator, generators, output_dir, errors) -> Shot | None:
    where = f"{path.name}: shot '{name}'"
    n_errors = len(errors)
    if not SHOT_NAME.match(name):
        errors.append(f"{where}: the shot name must be letters, digits, '_', '.' or '-' (it names the output files)")
    if not isinstance(raw, dict):
        errors.append(f"{where}: must be a table, got {_kind(raw)}")
        return None
    for key in raw:
        if key not in SHOT_KEYS:
            errors.append(f"{where}: {key}: unknown key (known: {', '.join(SHOT_KEYS)})")
    merged = {k: v for k, v in defaults.items() if k in DEFAULT_KEYS}
    merged.update({k: v for k, v in raw.items() if k in SHOT_KEYS})

    generator = merged.get("generator")
    if generator is None:
        errors.append(f"{where}: generator: missing (one of {', '.join(generators)})")
    elif not isinstance(generator, str) or generator not in generators:
        errors.append(f"{where}: generator: unknown generator {generator!r} (known: {', '.join(generators)})")
    settings = dict(per_generator.get(generator, {})) if isinstance(generator, str) else {}
    own = merged.get("settings", {})
    if not isinstance(own, dict):
        errors.append(f"{where}: settings: must be a table of operator arguments, got {_kind(own)}")
        own = {}
    settings.update(own)

    base = path.parent
    blend = _input_file(base, merged.get("blend"), f"{where}: blend", errors, (".blend",))
    imported = _import(base, merged.get("import"), name, where, errors)
    if blend is None and imported is None and "blend" not in merged and "import" not in merged:
        errors.append(f"{where}: blend: missing (an input .blend, or an import = {{ file = ... }} table, or both)")

    out_dir = output_dir if output_dir is not None else merged.get("output_dir", DEFAULT_OUTPUT_DIR)
    if not isinstance(out_dir, (str, Path)):
        errors.append(f"{where}: output_dir: must be a string, got {_kind(out_dir)}")
        out_dir = DEFAULT_OUTPUT_DIR
    out_dir = (base / out_dir).resolve()
    output = _output(base, merged.get("output"), out_dir / f"{name}.blend", ".blend", f"{where}: output", errors)
    metrics = _output(base, merged.get("metrics"), output.with_suffix(".json"), ".json", f"{where}: metrics", errors)
    fbx = _export(base, merged.get("fbx", False), output, (".fbx",), f"{where}: fbx", errors)
    gltf = _export(base, merged.get("gltf", False), output, (".glb", ".gltf"), f"{where}: gltf", errors)
    if len(errors) > n_errors or not isinstance(generator, str):
        return None
    return Shot(name, generator, blend, settings, output, metrics, fbx, imported, gltf)


def _export(base: Path, value, output: Path, suffixes: tuple[str, ...], where: str, errors: list[str]) -> Path | None:
    """An export's file: ``true`` → beside the output .blend with the first of ``suffixes``, a name
    ending in one of them, ``false`` → None."""
    if isinstance(value, bool):
        return output.with_suffix(suffixes[0]) if value else None
    if isinstance(value, str) and value:
        file = (base / value).resolve()
        if file.suffix.lower() not in suffixes:
            errors.append(f"{where}: '{value}' must end in {' or '.join(suffixes)}")
        return file
    errors.append(f"{where}: must be true, false or a file name, got {_kind(value)}")
    return None


def _input_file(base: Path, value, where: str, errors: list[str], suffixes: tuple[str, ...]) -> Path | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        errors.append(f"{where}: must be a file name, got {_kind(value)}")
        return None
    file = (base / value).resolve()
    if file.suffix.lower() not in suffixes:
        errors.append(f"{where}: '{value}' is not a {' or '.join(suffixes)} file")
    elif not file.is_file():
        errors.append(f"{where}: file not found: {file}")
    else:
        return file
    return None


def _import(base: Path, value, shot_name: str, where: str, errors: list[str]) -> Import | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        errors.append(f"{where}: import: must be a table {{ file = ..., name = ... }}, got {_kind(value)}")
        return None
    options = {k: v for k, v in value.items() if k not in ("file", "name")}
    if "filepath" in options:
        errors.append(f"{where}: import.filepath: use import.file (relative to the job file)")
        return None
    file = _input_file(base, value.get("file"), f"{where}: import.file", errors, tuple(IMPORTERS))
    if "file" not in value:
        errors.append(f"{where}: import.file: missing (a .bvh or .fbx file)")
    name = value.get("name", None)
    if name is not None and (not isinstance(name, str) or not name):
        errors.append(f"{where}: import.name: must be the new armature's name, got {_kind(name)}")
        return None
    if file is None:
        return None
    return Import(file, name or file.stem, IMPORTERS[file.suffix.lower()], options)


def _output(base: Path, value, default: Path, suffix: str, where: str, errors: list[str]) -> Path:
    if value is None:
        return default
    if not isinstance(value, str) or not value:
        errors.append(f"{where}: must be a file name, got {_kind(value)}")
        return default
    file = (base / value).resolve()
    if file.suffix.lower() != suffix:
        errors.append(f"{where}: '{value}' must end in {suffix}")
    return file


def _check_unique_outputs(shots: list[Shot], errors: list[str]) -> None:
    owner: dict[Path, str] = {}
    for shot in shots:
        for out in shot.outputs():
            if out in owner:
                errors.append(f"shot '{shot.name}': writes {out}, which shot '{owner[out]}' writes too")
            owner[out] = shot.name
            if out in shot.inputs():
                errors.append(f"shot '{shot.name}': the output {out} is one of its inputs")
