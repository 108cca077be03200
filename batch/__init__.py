"""Batch baking: the ``procanim`` command-line command (``blender -b -c procanim bake jobs.toml``).

A TOML job file lists shots (an input .blend or an imported BVH/FBX, a generator and its operator
arguments, the outputs); the command checks the whole file, then bakes the shots in this process,
on a pool of worker processes or on a Dask cluster, skipping those whose outputs were already made
from the same inputs, and writes a report. See docs/batch.md.

The package is imported both inside Blender and outside it (the pipeline runner before its Blender
is up, Dask workers, which never start one), so its modules are of two kinds, and importing this
package imports neither:

* **inside Blender** (``import bpy`` at the top): ``command`` (the command registered in a Blender
  binary; what the command runs in Blender), ``checks`` (a job against the operators' RNA),
  ``shot`` (bake one shot), ``serve`` (a worker process's loop);
* **never Blender** (stdlib, the engine's registry; dask where it is there): ``cli`` (the command:
  arguments, plan, modes, report), ``jobfile``, ``hashing``, ``scripts`` (the trust rule),
  ``outputs`` (atomic files), ``report``, ``processes``, ``worker`` and ``local`` (worker processes
  and the local pool), ``dask_client``, ``dask_worker`` and ``dask_plugin`` (``--scheduler``).

Only the entry points import the first kind: the extension's ``register()`` (``command``),
``tools/batch.py`` once its Blender is up (``command``, ``serve``), and ``command`` itself.
"""
