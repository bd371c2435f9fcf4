"""Injected by the tessera cluster agent into command jobs (it puts this directory first on
PYTHONPATH). Python imports sitecustomize at start-up; this one arranges for the
interposition layer (tessera_interpose) to be installed the moment the job imports torch, and
costs nothing for programs that never do. See docs/cluster.md, "The interposition layer".
"""
import importlib.abc
import importlib.util
import os
import sys


def _run_shadowed_sitecustomize():
    # This file hides the interpreter's own sitecustomize (Debian's installs apport's hook):
    # run the next one on sys.path, so putting the layer first changes nothing else.
    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        if not entry or os.path.abspath(entry) == here:
            continue
        candidate = os.path.join(entry, "sitecustomize.py")
        if os.path.isfile(candidate):
            spec = importlib.util.spec_from_file_location("_shadowed_sitecustomize", candidate)
            module = importlib.util.module_from_spec(spec)
            try:
                spec.loader.exec_module(module)
            except Exception:  # noqa: BLE001 - never let it break the job
                pass
            return


class _InstallAfterTorch(importlib.abc.MetaPathFinder):
    """Finds `torch` through the normal finders and installs the layer once it is imported."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec("torch")
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_then_install(module):
            exec_module(module)
            from tessera_interpose import layer

            layer.install()

        spec.loader.exec_module = exec_then_install
        return spec


_run_shadowed_sitecustomize()
if os.environ.get("TESSERA_RUN_DIR") and os.environ.get("TESSERA_INTERPOSE", "1") != "0":
    if "torch" in sys.modules:
        from tessera_interpose import layer

        layer.install()
    else:
        sys.meta_path.insert(0, _InstallAfterTorch())
