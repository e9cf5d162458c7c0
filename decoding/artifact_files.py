"""Files the decoder writes for a target (a draft head, an answer store): safetensors with a format
name and version in their metadata, written aside and renamed into place so a reader never sees half
a file."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import torch
from safetensors.torch import save_file


def write_artifact(path: str | Path, tensors: dict[str, torch.Tensor], metadata: dict[str, str]) -> Path:
    """Write `tensors` and `metadata` to `path` atomically (a temporary file beside it, then a rename)."""
    destination = Path(path)
    destination.parent.mkdir(parents=True, exist_ok=True)
    handle, staging = tempfile.mkstemp(prefix=f".{destination.name}.", dir=destination.parent)
    os.close(handle)
    try:
        save_file(tensors, staging, metadata=metadata)
        os.replace(staging, destination)
    finally:
        if os.path.exists(staging):
            os.unlink(staging)
    return destination


def read_artifact_metadata(
    path: str | Path,
    *,
    file_format: str,
    version: int,
    what: str,
    error: type[ValueError],
    missing: str,
) -> dict[str, str]:
    """The metadata of an artifact file, refused with `error` when it is missing (`missing` says how to
    make one), unreadable, another kind of file (`what` names the expected kind) or another version."""
    from safetensors import safe_open

    source = Path(path)
    if not source.is_file():
        raise error(f"no {what} at {source}: {missing}")
    try:
        with safe_open(str(source), framework="pt") as handle:
            metadata = handle.metadata() or {}
    except Exception as failure:  # safetensors raises its own error types for damaged files
        raise error(f"{source} is not a readable safetensors file: {failure}") from failure
    if metadata.get("format") != file_format:
        article = "an" if what[:1] in "aeiou" else "a"
        raise error(f"{source} is not {article} {what} file (format {metadata.get('format')!r})")
    if metadata.get("version") != str(version):
        raise error(
            f"{source} is {what} format version {metadata.get('version')}; this version reads "
            f"{version}: train the head again"
        )
    return metadata
