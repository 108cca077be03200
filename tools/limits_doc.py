"""Write docs/limits.md from the documented limits (procanim_addon/limits.py): every parameter of
every generator, its meaningful range and its slider range. ``tests/engine/test_limits.py`` checks
that the page is up to date, so the page and the checks can never disagree.

    python tools/limits_doc.py          # rewrite docs/limits.md
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PAGE = ROOT / "docs" / "limits.md"
SECTIONS = (
    ("Duck walk (`procanim.duck_walk`)", "DuckParams"),
    ("Handshake (`procanim.handshake`)", "HandshakeParams"),
    ("Path walk (`procanim.path_walk`)", "PathWalkParams"),
    ("Terrain adaptation (`procanim.adapt_terrain`)", "AdaptParams"),
    ("Source motion (`procanim.source_motion`)", "SourceMotionParams"),
    ("… its walk", "WalkParams"),
    ("… its jump", "JumpParams"),
    ("… its roll", "TumbleParams"),
    ("Fix Feet (`procanim.fix_feet`)", "FixFeetParams"),
    ("Crowd (`procanim.crowd_walk`; its walkers' settings are the path walk's)", "CrowdParams"),
    ("Every generator's bake (`key_tolerance` of every operator, sidebar panel and batch shot)", "BakeSettings"),
)


def render() -> str:
    from procanim_addon import limits
    from procanim_addon.limits import fmt

    lines = [
        "# Limits of every setting",
        "",
        "<!-- written by tools/limits_doc.py from procanim_addon/limits.py; do not edit by hand -->",
        "",
        "Every numeric setting has a range where it means something. A value outside it (or NaN, or an",
        "infinity) is refused with a message naming the setting, its range and the value — by the engine,",
        "whoever called it: the sidebar (whose fields cannot leave the range), a script or the redo panel",
        "(operators take the slider range as soft limits and leave the refusal to the engine, so nothing",
        "is clamped silently), the batch command. Operator arguments carry the same names as the sidebar's",
        "fields; messages use the labels below.",
        "",
        "A bake is also refused, before anything is allocated, when it would hold more than",
        f"{limits.MAX_FRAMES:,} frames or {limits.MAX_FRAME_BONES:,} frame × bone samples. Frames lie in "
        f"Blender's range ±{limits.MAX_FRAME:,}; frames per second in 1–{fmt(limits.MAX_FPS)}.",
        "",
    ]
    for title, cls in SECTIONS:
        lines += [f"## {title}", "", "| parameter | label in messages | range | slider | unit |"]
        lines.append("|---|---|---|---|---|")
        for field, lim in limits.LIMITS[cls].items():
            lo, hi = lim.slider
            rng, slider = f"{fmt(lim.lo)} – {fmt(lim.hi)}", f"{fmt(lo)} – {fmt(hi)}"
            lines.append(f"| `{field}` | {lim.label} | {rng} | {slider} | {lim.unit} |")
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    PAGE.write_text(render(), encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
