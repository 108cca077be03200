"""Demo scenes, one module per generator; ``tools/demo.py`` builds each into its own Scene of
``out/demo.blend`` and renders its contact sheet to ``docs/<name>_contact_sheet.png``.

A module defines ``NAME`` (file-name stem), ``ORDER`` (int), ``SHEET_FRAMES`` (frames of the contact
sheet) and ``build(scene)`` which fills the given empty scene through ProcAnim's public operators
(as a pipeline script would), sets ``scene.camera`` and returns a dict of figures to print.
"""
