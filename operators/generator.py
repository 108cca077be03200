"""The Blender side of a generator: the one interface every generator's module implements.

A generator's Blender module ``operators/<id>.py`` defines a subclass of :class:`Generator` and
exports one instance as ``GENERATOR``; its engine package exports the ``SPEC`` the subclass names
(``procanim_addon/spec.py``). From these two the add-on makes the operator
(``operators/base.py:GeneratorOperator``), the sidebar's settings group and panel
(``panels/generator.py``), the menu entry, the live preview and the batch command's checks — see
``docs/adding-a-generator.md``.

What a subclass must give: :attr:`Generator.spec`, :attr:`Generator.settings_name`,
:attr:`Generator.objects`, :meth:`Generator.settings` and :meth:`Generator.prepare`. Everything else
has a default that does nothing or draws the plain fields — :meth:`Generator.key_marks` (what the
keys of a bake say: contacts, phases) defaults to the feet's contacts on the plane of the rig's rest
soles.

:func:`common_settings` are the arguments every generator has: where the keys go (``key_target``)
and how few keys may follow the motion (``key_tolerance``, :mod:`procanim_addon.bake_settings`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bpy.props import EnumProperty

from ..procanim_addon.bake_settings import BakeSettings
from ..procanim_addon.clip import Clip
from ..procanim_addon.errors import InputError
from ..procanim_addon.key_marks import KeyMarks, contact_marks
from ..procanim_addon.spec import GeneratorSpec
from .bridge import read_rig
from .limits import number
from .objects import ObjectArgument, SettingsArgs

KEY_TARGETS = [
    ("AUTO", "Auto", "The animator's controls on a known control rig (IK for walks), else the deform bones"),
    ("IK_CONTROLS", "IK Controls", "Key the rig's IK controls (feet, hands, knee/elbow direction, torso)"),
    ("FK_CONTROLS", "FK Controls", "Key the rig's FK controls, with the IK/FK switch keyed to FK"),
    ("DEFORM", "Deform Bones", "Key the bones the motion is computed for (plain skeletons, mocap rigs)"),
]
BAKE_TO_ITEMS = [
    ("ACTION", "Action", "Bake into the armature's active action (the action it replaces is kept)"),
    ("NLA_STRIP", "NLA Strip", "Bake into a strip on a new NLA track named after the generator; the active action "
     "and the other tracks are left as they are"),
]
BLEND_TYPE_ITEMS = [
    ("COMBINE", "Combine", "Add locations, multiply rotations and scales onto the tracks below (Blender's Combine)"),
    ("REPLACE", "Replace", "Replace what the tracks below give, by the strip's influence"),
    ("ADD", "Add", "Add the strip's values to what the tracks below give"),
    ("SUBTRACT", "Subtract", "Subtract the strip's values from what the tracks below give"),
    ("MULTIPLY", "Multiply", "Multiply what the tracks below give by the strip's values"),
]


def common_settings(ui: bool = False) -> dict:
    """Arguments every generator has, operator (``ui=False``: soft limits) and sidebar (``ui=True``:
    hard limits) alike: where the keys go and how few keys may follow the motion."""
    return {
        "key_target": EnumProperty(
            name="Key Target",
            description="Which bones receive the keys",
            items=KEY_TARGETS,
            default="AUTO",
        ),
        "key_tolerance": number(
            BakeSettings, "key_tolerance", ui, "Key Tolerance",
            "Fewest keys that keep every deform bone within this distance of the generated motion on every "
            "frame (contacts and phases keyed and marked); 0 keys every generated frame",
            subtype="DISTANCE", unit="LENGTH", precision=4,
        ),
        "bake_to": EnumProperty(name="Bake To", description="Where the bake goes", items=BAKE_TO_ITEMS,
                                default="ACTION"),
        "blend_type": EnumProperty(name="Blend", description="How an NLA strip bake blends with the tracks below "
                                   "it (Bake To 'NLA Strip')", items=BLEND_TYPE_ITEMS, default="COMBINE"),
    }


@dataclass
class Job:
    """Armatures to bake and the engine call that makes one Clip for each (same order);
    ``extra``: what ``summary``/``warnings`` need to say (names read on the main thread) and
    ``notes``, INFO lines for the user."""

    targets: list
    compute: Callable[[Callable[[float], None]], list[Clip]]
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Emotions:
    """Buttons setting a generator's style ``sliders`` to the duck article's emotion presets: the
    operator ``procanim.<idname>`` (``presets``: key → values in the sliders' order)."""

    idname: str
    presets: dict
    sliders: tuple[str, ...]


Draw = Callable[[Any, Any, Any], None]  # (layout, settings, context)


@dataclass(frozen=True)
class SubPanel:
    """A sub-panel ``idname`` (``PROCANIM_PT_…``, closed at first) in the generator's panel, or in
    the panel ``parent`` names; ``draw(layout, settings, context)`` draws it from the generator's
    sidebar settings."""

    idname: str
    label: str
    draw: Draw
    parent: str = ""
    description: str = ""


class Generator(ABC):
    """One generator's Blender side. Class attributes declare it; methods read the scene, say what
    a bake did and draw the sidebar. ``args`` in the methods has the operator's argument names: the
    operator itself, the sidebar's settings seen through :class:`~.objects.SettingsArgs` (Generate's
    button, the live preview) or a batch shot."""

    spec: GeneratorSpec
    """The engine side: id, label, parameters, engine call, figures, ghost overlays."""
    settings_name: str
    """Where the sidebar keeps the settings: ``scene.procanim.<settings_name>`` (user presets store
    this data path, so it stays when an id changes)."""
    objects: tuple[ObjectArgument, ...] = ()
    """The object arguments: a name for scripts, a picker in the sidebar."""
    parent: str = ""
    """The id of the generator whose panel holds this one's as a sub-panel ("" = a panel of its own)."""
    has_panel: bool = True
    """False: no settings group, panel or preview of its own."""
    operator_label: str = ""
    """The operator's name ("" = "Generate <label>")."""
    emotions: Emotions | None = None
    subpanels: tuple[SubPanel, ...] = ()
    """Sub-panels, registered after every generator's own panel."""
    clip_common: tuple[str, ...] = ()
    """Common arguments (:func:`common_settings`) that change this generator's Clip, not only its bake
    (the duck: ``key_tolerance`` decides its frames), so that a preview's Clip is reused only for them."""

    @property
    def id(self) -> str:
        return self.spec.id

    # ------------------------------------------------------------------ the operator
    @abstractmethod
    def settings(self, ui: bool) -> dict:
        """The arguments other than objects as bpy properties, shared by the operator (``ui=False``:
        soft limits only, so a script gets the engine's message) and the sidebar (``ui=True``: hard
        limits) — see ``operators/limits.py``."""

    def operator_settings(self) -> dict:
        """Arguments scripts have and the sidebar does not (e.g. the duck's ``preset``)."""
        return {}

    def operator_arguments(self) -> dict:
        """The operator's bpy properties: object names, the settings, the common ones, the
        operator-only ones."""
        props = {arg.name: arg.string_property() for arg in self.objects}
        props.update(self.settings(ui=False))
        props.update(common_settings())
        props.update(self.operator_settings())
        return props

    @abstractmethod
    def prepare(self, args, context) -> Job:
        """Read the scene (main thread) into engine inputs: the armatures to bake and
        ``compute(progress)``, an :class:`~procanim_addon.jobs.EngineCall` of ``spec.call``. Bad input
        raises :class:`~procanim_addon.errors.InputError` with a message a user can act on."""

    def listed_objects(self, args, context) -> list:
        """Objects ``prepare`` reads beside its object arguments (a crowd's armatures, curves and
        obstacles), in the order it reads them: the inputs' key (the live preview's, Generate's)
        watches them as it watches the object arguments. May raise InputError."""
        return []

    def scene_values(self, args, context) -> tuple:
        """Values ``prepare`` reads from the scene beside its arguments and objects (a crowd's
        greetings: the Handshake panel's settings), for the inputs' key."""
        return ()

    def source_action(self, obj) -> Any:
        """The action of ``obj`` that ``prepare`` reads, for generators that adapt one (None: it
        reads none); may raise InputError. The live preview watches it for changes."""
        return None

    def summary(self, job: Job, clips: list[Clip]) -> str:
        """The INFO line of a bake ("" = "Baked <generator> on <armatures> …")."""
        return ""

    def warnings(self, job: Job, clips: list[Clip]) -> list[str]:
        """The WARNING lines of a bake."""
        return []

    def after_bake(self, job: Job, clips: list[Clip]) -> None:
        """Called once the keys are written (e.g. to print a report for scripts)."""
        return None

    def key_marks(self, job: Job, index: int, clip: Clip) -> KeyMarks:
        """What the keys of the bake of ``clip`` onto ``job.targets[index]`` say: marks (key types,
        pose markers, keys forced on them), the feet's contacts (keyed at both ends, no skate added)
        and the feet they are of (:class:`~procanim_addon.key_marks.KeyMarks`). Default: the feet's
        contacts on the plane of the rig's rest soles (none on a rig without leg roles)."""
        try:
            skeleton, rigmap = read_rig(job.targets[index])
        except InputError:  # no roles: no feet to find
            return KeyMarks()
        return contact_marks(skeleton, rigmap, clip)

    # ------------------------------------------------------------------ the sidebar
    def panel_settings(self) -> dict:
        """Sidebar-only settings (toggles that are not operator arguments)."""
        return {}

    def button_skip(self, settings) -> set[str]:
        """Operator arguments Generate leaves unset with these ``settings`` (the operator decides)."""
        return set()

    def draw(self, layout, settings, context) -> None:
        """The panel's own fields, above Key Target, Preview, Generate and the figures. Default:
        each picker, then each setting."""
        for arg in self.objects:
            if not arg.shared:
                layout.prop(settings, arg.name)
        for name in self.settings(ui=True):
            layout.prop(settings, name)

    def preset_fields(self) -> tuple[str, ...]:
        """The sidebar settings a user preset stores (none: no preset menu)."""
        return ()

    def draw_figures(self, layout, action, metrics: dict) -> None:
        """A view of the last bake's figures of its own, above the common rows (the handshake's Table 3)."""
        return None

    def property_classes(self) -> tuple[type, ...]:
        """Property groups of its own, registered before any settings group."""
        return ()

    def register_properties(self) -> None:
        """Hang its own property groups on Blender types (after the classes are registered)."""
        return None

    def unregister_properties(self) -> None:
        """Undo :meth:`register_properties`."""
        return None

    # ------------------------------------------------------------------ what the sidebar passes
    def button_arguments(self, settings) -> list[str]:
        """The operator arguments the Generate button passes from ``settings``."""
        skip = self.button_skip(settings)
        names = [arg.name for arg in self.objects if not arg.shared]
        names += [*self.settings(ui=False), *common_settings()]
        return [n for n in names if n not in skip]

    def settings_args(self, settings) -> SettingsArgs:
        """The sidebar's ``settings`` as the operator's arguments (what Generate would pass)."""
        return self.sidebar_args(settings, self.button_arguments(settings))

    def sidebar_args(self, settings, explicit, reads=None) -> SettingsArgs:
        """The sidebar's ``settings`` seen as the operator's arguments, ``explicit`` the ones set
        (``reads``: the live preview's kept scene reads)."""
        return SettingsArgs(settings, self.objects, explicit, reads=reads)

    def fill_arguments(self, op, settings, leave=()) -> None:
        """Set a drawn button's operator arguments ``op`` from the sidebar's ``settings`` (picked
        objects as their names), except the names in ``leave``."""
        objects = {arg.name for arg in self.objects}
        for name in self.button_arguments(settings):
            if name in leave:
                continue
            value = getattr(settings, name)
            if name in objects:
                value = value.name if value is not None else ""
            setattr(op, name, value)
