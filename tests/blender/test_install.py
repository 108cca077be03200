"""The extension installs from its zip like a user's Install from Disk, enables, registers its
operators, and survives being disabled and enabled again."""

from __future__ import annotations

import sys

import bpy

import harness

# The scripting contract of DESIGN.md ("Public operators").
PUBLIC_OPERATORS = {
    "add_human",
    "add_duck",
    "detect_rig",
    "duck_walk",
    "path_walk",
    "handshake",
    "adapt_terrain",
}


def test_extension_is_installed_into_the_repository_and_enabled(procanim_extension):
    package_dir = procanim_extension.repo_dir / harness.EXTENSION_ID
    assert (package_dir / "__init__.py").is_file()
    # Nothing that the manifest excludes was shipped.
    for excluded in ("tests", "tools", "bench", "docs"):
        assert not (package_dir / excluded).exists(), f"{excluded}/ was shipped in the zip"
    assert harness.is_enabled(procanim_extension.module)
    assert procanim_extension.module in sys.modules


def test_public_operators_are_registered(procanim_extension):
    registered = set(harness.procanim_operator_names())
    missing = PUBLIC_OPERATORS - registered
    assert not missing, f"operators not registered: {sorted(missing)} (registered: {sorted(registered)})"
    for name in PUBLIC_OPERATORS:
        # A registered operator has RNA; an unregistered name would raise here.
        assert getattr(bpy.ops.procanim, name).get_rna_type().identifier


def test_disable_and_enable_again(procanim_extension):
    module = procanim_extension.module
    before = set(harness.procanim_operator_names())
    assert before, "no procanim operators before disabling"

    harness.disable(module)
    assert module not in bpy.context.preferences.addons
    assert harness.procanim_operator_names() == [], "operators left registered after disabling"

    harness.enable(module)
    assert set(harness.procanim_operator_names()) == before
    # A second cycle catches classes that unregister() forgot and register() then refuses.
    harness.disable(module)
    harness.enable(module)
    assert set(harness.procanim_operator_names()) == before
