"""Demo scenes, one module per generator; ``tools/demo.py`` builds each into its own Scene of
``out/demo.blend``, renders its contact sheet to ``docs/<name>_contact_sheet.png`` and its looping
animation to ``docs/<name>_animation.webp``.

A module defines ``NAME`` (file-name stem), ``GENERATORS`` (the ids of the generators whose
operators it shows: every generator with a panel of its own is shown by one, see
``tests/blender/test_panels.py``), ``ORDER`` (int), ``SHEET_FRAMES`` (frames of the contact sheet) and
``build(scene)`` which fills the given empty scene through ProcAnim's public operators (as a pipeline
script would), sets ``scene.camera`` and returns a dict of figures to print.

Optional, for the animation (each may also be a function of the built scene returning the value):

* ``ANIMATION_FRAMES = (start, end, step)``: frames ``start, start + step, … < end``, played at
  ``fps / step`` (``end`` is excluded: for a walk, make ``end - start`` whole gait cycles so that the
  loop has no seam). Default: the scene's frame range at step 2 (12 fps).
* ``ANIMATION_TILES = {"characters": ((armature, label), …), "size": (w, h), "offset": (x, y, z),
  "lens": mm, "lift": m}``: instead of the scene camera, one tile per character, side by side, each
  showing that character alone from a camera at ``offset`` (m) from its body centre (raised by
  ``lift``), riding along at the character's mean velocity over the frames.
* ``unavailable()``: a reason to leave the scene out (e.g. an operator argument it needs does not
  exist yet), or None.
"""
