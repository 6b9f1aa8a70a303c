"""timm's position-embedding modules, imported without torchvision.

timm's package ``__init__`` imports torchvision (``timm.layers.create_norm``),
and torchvision's PyPI wheels are CUDA builds that fail to load beside the
CPU build of torch, so the tests install timm with ``--no-deps``
(requirements-timm.txt) and import only the modules they check against:
``timm/layers/pos_embed.py`` and ``timm/layers/pos_embed_sincos.py``, plain
PyTorch, run exactly as shipped. The packages ``timm`` and ``timm.layers``
are registered empty (their ``__init__`` files not run), and torchvision is
marked absent for that import, which ``timm/layers/_fx.py`` allows for.

A missing timm fails the importing test (never skips it).
"""

import importlib
import importlib.util
import os
import sys
import types

__all__ = ["pos_embed", "pos_embed_sincos", "TIMM_VERSION"]


def _load():
    spec = importlib.util.find_spec("timm")
    if spec is None or spec.origin is None:
        raise ImportError(
            "timm is not installed: pip install --no-deps -r requirements-timm.txt")
    root = os.path.dirname(spec.origin)
    torchvision_absent = "torchvision" not in sys.modules
    try:
        for name, path in (("timm", root),
                           ("timm.layers", os.path.join(root, "layers"))):
            if name not in sys.modules:
                module = types.ModuleType(name)
                module.__path__ = [path]
                sys.modules[name] = module
        if torchvision_absent:
            sys.modules["torchvision"] = None  # its import raises ImportError
        pe = importlib.import_module("timm.layers.pos_embed")
        ps = importlib.import_module("timm.layers.pos_embed_sincos")
    finally:
        if torchvision_absent:
            sys.modules.pop("torchvision", None)
    from importlib.metadata import version
    return pe, ps, version("timm")


pos_embed, pos_embed_sincos, TIMM_VERSION = _load()
