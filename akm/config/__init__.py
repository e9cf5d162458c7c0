"""The bundled defaults: ``settings.yaml`` (default settings) and ``manifest.yaml`` (the default
project retrieval manifest), shipped inside the package and found through importlib.resources.

The default manifest belongs to no project of its own: :func:`akm.manifest.load_manifest` reads
it as if it were ``config/manifest.yaml`` of the working directory, so its ``projectRoot: ".."``
names the working directory and its one source root is the ``docs/`` folder there. Any other
manifest (``--manifest``, ``AKM_MANIFEST_PATH``) resolves ``projectRoot`` against its own folder.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def bundled_file(name: str) -> Path:
    """The path of a file shipped in this package; the package must be installed as files."""
    resource = files(__name__).joinpath(name)
    if not isinstance(resource, Path) or not resource.is_file():
        raise RuntimeError(f"the bundled file {name} is not installed as a file with {__name__}: {resource}")
    return resource


DEFAULT_SETTINGS_FILE = bundled_file("settings.yaml")
DEFAULT_MANIFEST_FILE = bundled_file("manifest.yaml")

__all__ = ["DEFAULT_MANIFEST_FILE", "DEFAULT_SETTINGS_FILE", "bundled_file"]
