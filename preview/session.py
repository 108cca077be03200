"""One generator's live preview: notice a change, regenerate in a worker thread, keep the result.

:class:`Session` is driven by :meth:`Session.tick` (the preview's timer, or a test calling it):

1. the key of the sidebar's settings (``operators/inputs.py``: ``inputs_key``) is compared with the last one;
   a new key cancels a running worker through the progress contract (the engine raises
   :class:`~procanim_addon.progress.Cancelled` at its next report);
2. once no worker runs and the key has been stable for ``debounce_s``, ``prepare`` reads the
   scene on the main thread — what it read from objects that have not changed since is reused
   (:class:`.reads.Reads`) — and a :class:`Worker` thread runs only ``Job.compute`` and the ghost
   (numpy);
3. a finished worker's Clips and ghosts become the :class:`Result` drawn and offered to Generate
   (``operators/previewed.py``); an error becomes the status line, and the last good ghost stays.

Nothing here writes to the file: no action, key, pose or transform, no undo step.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import numpy as np

from ..operators import inputs, previewed
from ..operators.base import check_key_target
from ..operators.bridge import read_rigmap, read_skeleton
from ..operators.generator import Generator
from ..operators.objects import SettingsArgs
from ..procanim_addon.errors import InputError
from ..procanim_addon.ghost import NO_OVERLAYS, Body, Ghost, Overlays, build_ghosts
from ..procanim_addon.progress import Cancelled, Progress
from .reads import Reads

DEBOUNCE_S = 0.0  # a key must be this old before it is generated (the cancel does the debouncing)
SHOW_BUSY_S = 0.5  # a regeneration running this long redraws the status line as "generating…"
NAN_MESSAGE = "The generator produced invalid (NaN) values. Try less extreme settings."


def read_body(obj) -> Body:
    """What the ghost needs of an armature object (main thread)."""
    world = np.array(obj.matrix_world, dtype=float)
    basis = np.array(obj.matrix_basis, dtype=float)
    parent_world = world @ np.linalg.inv(basis) if abs(np.linalg.det(basis)) > 1e-12 else None
    skeleton = read_skeleton(obj, upright=False)  # the Clips come back in the armature's own terms
    return Body(
        name=obj.name,
        skeleton=skeleton,
        rigmap=read_rigmap(obj),
        world=world,
        parent_world=parent_world,
        object_scale=np.array(obj.matrix_basis.to_scale(), dtype=float),
        drawn=tuple(b.name for b in obj.data.bones if b.use_deform),
        rotation_modes={pb.name: pb.rotation_mode for pb in obj.pose.bones},
        object_rotation_mode=obj.rotation_mode,
    )


def failure_text(err: BaseException) -> str:
    """An exception as the status line says it."""
    return str(err) if isinstance(err, InputError) else f"ProcAnim failed: {type(err).__name__}: {err}"


@dataclass
class Result:
    """A finished regeneration: its key, Clips (Generate may bake them) and ghosts (drawn)."""

    key: tuple
    clips: list
    ghosts: list[Ghost]
    compute_ms: float  # the worker: engine and ghosts
    engine_ms: float  # the engine alone
    engine_cpu_ms: float  # the engine's CPU time in the worker thread (wall time less waits for the CPU)
    change_to_ghost_ms: float
    changed_wall: float  # time.time() when the change was seen (for the test log)
    ready_wall: float
    worker_done_wall: float = 0.0
    drawn: bool = False


class Worker:
    """``job.compute`` and the ghosts (with the generator's ``overlays``) in a daemon thread; the
    main thread polls :attr:`done`."""

    def __init__(self, key: tuple, job, bodies: list[Body], overlays: Overlays = NO_OVERLAYS):
        self.key = key
        self.job = job
        self.bodies = bodies
        self.overlays = overlays
        self.progress = Progress()
        self.clips: list | None = None
        self.ghosts: list[Ghost] | None = None
        self.error = ""
        self.cancelled = False
        self.seconds = 0.0  # compute and ghosts
        self.engine_seconds = 0.0  # compute alone
        self.engine_cpu_seconds = 0.0  # compute alone, CPU time of this thread
        self.done_wall = 0.0  # time.time() when the thread finished
        self._thread = threading.Thread(target=self._run, name="procanim-preview", daemon=True)

    def start(self) -> Worker:
        self._thread.start()
        return self

    @property
    def done(self) -> bool:
        return not self._thread.is_alive()

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    def _run(self) -> None:
        t0, cpu0 = time.perf_counter(), time.thread_time()
        try:
            clips = self.job.compute(self.progress)
            self.engine_seconds = time.perf_counter() - t0
            self.engine_cpu_seconds = time.thread_time() - cpu0
            if not all(clip.is_finite() for clip in clips):
                raise InputError(NAN_MESSAGE)
            self.ghosts = build_ghosts(clips, self.bodies, self.overlays)
            self.clips = clips
        except Cancelled:
            self.cancelled = True
        except Exception as err:  # InputError or a bug: shown in the status line, never raised
            self.error = failure_text(err)
        self.seconds = time.perf_counter() - t0
        self.done_wall = time.time()


@dataclass
class Session:
    """The live preview of one generator."""

    generator: Generator
    debounce_s: float = DEBOUNCE_S
    wanted: tuple | None = None  # the key of the settings now
    changed_at: float = 0.0  # perf_counter() when ``wanted`` was first seen
    changed_wall: float = 0.0
    attempted: tuple | None = None  # the key of the last regeneration started (or refused)
    worker: Worker | None = None
    started_at: float = 0.0  # perf_counter() when the worker started
    result: Result | None = None
    error: str = ""
    objects: set = field(default_factory=set)  # names of the objects the settings resolve to
    cancels: int = 0
    starts: int = 0  # workers started
    shown_busy: bool = False  # the status line has been redrawn as "generating…" for this worker
    events: list = field(default_factory=list)  # (name, detail) for the test log, drained by the runtime
    reads: Reads = field(default_factory=Reads)  # what prepare read from the scene, kept while unchanged
    _explicit: dict = field(default_factory=dict)  # button_skip set → the arguments the button sets
    _bodies: dict = field(default_factory=dict)  # armature name → (its state, its Body)

    # ------------------------------------------------------------------ reading the settings
    def args(self, context) -> SettingsArgs:
        """The sidebar's settings as the operator's arguments: what Generate would pass
        (``Generator.button_arguments``, made once per skip set), with this preview's kept scene
        reads."""
        gen = self.generator
        settings = getattr(context.scene.procanim, gen.settings_name)
        skip = frozenset(gen.button_skip(settings))
        explicit = self._explicit.get(skip)
        if explicit is None:
            explicit = self._explicit[skip] = gen.button_arguments(settings)
        self.reads.bind(gen, context)
        return gen.sidebar_args(settings, explicit, reads=self.reads)

    def _key(self, context) -> tuple:
        """The inputs' key, or ``("error", message)`` when an object cannot be resolved."""
        args = self.args(context)
        try:
            objects = inputs.resolved_objects(self.generator, args, context)
            self.objects = {obj.name for obj in objects if obj is not None}
            check_key_target(objects, args.key_target)  # what Generate would refuse
            return inputs.inputs_key(self.generator, args, context, objects=objects)
        except Exception as err:  # InputError (a missing pick …) or a bug: the status line says it
            return ("error", failure_text(err))

    # ------------------------------------------------------------------ the state machine
    def tick(self, context, now: float | None = None, source: str = "timer") -> bool:
        """One step (main thread; ``source``: who called it, for the test log); True when what is
        drawn changed."""
        now = time.perf_counter() if now is None else now
        key = self._key(context)
        if key != self.wanted:
            self.wanted, self.changed_at, self.changed_wall = key, now, time.time()
        changed = self.take_finished(now)
        worker = self.worker
        if worker is not None and worker.key != self.wanted and not worker.progress.cancelled:
            worker.progress.cancel()
            self.cancels += 1
        if worker is None and self.wanted != self.attempted and now - self.changed_at >= self.debounce_s:
            self._start(context, now, source)
            changed = self.worker is None  # an error to show; a start is shown once it takes a while
        elif self.worker is not None and not self.shown_busy and now - self.started_at >= SHOW_BUSY_S:
            self.shown_busy = changed = True  # "generating…" for a regeneration that takes a while
        return changed

    def take_finished(self, now: float | None = None) -> bool:
        """Take the worker's result if it has ended (main thread: the timer, or the 3D view's draw
        handler, so that a result that ends while Blender redraws is drawn in that redraw); True
        when one was taken."""
        worker = self.worker
        if worker is None or not worker.done:
            return False
        self._harvest(worker, time.perf_counter() if now is None else now)
        self.worker = None
        return True

    def _body(self, obj, context) -> Body:
        """:func:`read_body`, kept while the armature's state (matrices, bones, roles) is unchanged."""
        state = inputs.object_state(obj, self.generator, context)
        kept = self._bodies.get(obj.name)
        if kept is not None and kept[0] == state:
            return kept[1]
        body = read_body(obj)
        self._bodies[obj.name] = (state, body)
        return body

    def _start(self, context, now: float, source: str = "timer") -> None:
        key = self.wanted
        self.attempted = key
        if key is None or key[0] == "error":
            self.error = key[1] if key else "Nothing to preview."
            return
        try:
            job = self.generator.prepare(self.args(context), context)
            bodies = [self._body(obj, context) for obj in job.targets]
        except Exception as err:  # InputError from prepare, or a bug: status line
            self.error = failure_text(err)
            return
        self.error = ""
        self.worker = Worker(key, job, bodies, self.generator.spec.overlays).start()
        self.started_at = time.perf_counter()
        self.shown_busy = False
        self.starts += 1
        self.events.append(("started", {"prepare_ms": (time.perf_counter() - now) * 1000.0, "by": source}))

    def _harvest(self, worker: Worker, now: float) -> None:
        if worker.cancelled:
            self.events.append(("cancelled", {}))
            return
        if worker.error:
            self.error = worker.error
            self.events.append(("error", {"message": worker.error}))
            return
        self.error = ""
        self.result = Result(
            key=worker.key,
            clips=worker.clips or [],
            ghosts=worker.ghosts or [],
            compute_ms=worker.seconds * 1000.0,
            engine_ms=worker.engine_seconds * 1000.0,
            engine_cpu_ms=worker.engine_cpu_seconds * 1000.0,
            change_to_ghost_ms=(now - self.changed_at) * 1000.0 if worker.key == self.wanted else float("nan"),
            changed_wall=self.changed_wall,
            ready_wall=time.time(),
            worker_done_wall=worker.done_wall,
        )
        previewed.offer(self.generator.id, self.result.key, self.result.clips, self.result.compute_ms)
        self.events.append(("ready", {}))

    def stop(self) -> None:
        """Cancel a running worker (it ends at its next progress report) and forget it."""
        if self.worker is not None:
            self.worker.progress.cancel()
            self.worker = None

    # ------------------------------------------------------------------ what the status line says
    @property
    def busy(self) -> bool:
        return self.worker is not None

    def status(self) -> tuple[str, str]:
        """``(kind, text)``: kind ``BUSY``, ``ERROR`` or ``READY`` (or ``IDLE``)."""
        label = f"{self.generator.spec.label} preview"
        if self.worker is not None:
            return "BUSY", f"{label}: generating… {int(self.worker.progress.fraction * 100)} %"
        if self.error:
            return "ERROR", f"{label}: {self.error}"
        if self.result is not None:
            r = self.result
            frames = len(r.ghosts[0].frames) if r.ghosts else 0
            shown = r.change_to_ghost_ms if np.isfinite(r.change_to_ghost_ms) else r.compute_ms
            return "READY", f"{label}: ready in {shown:.0f} ms ({frames} frames)"
        return "IDLE", f"{label}: waiting"
