"""Runtime handles: the embedder is warmed up and everything loaded is frozen out of the cycle collector."""

from __future__ import annotations

import gc
from pathlib import Path

from akm.runtime import Runtime
from akm.settings import load_settings


def test_loading_the_embedder_freezes_what_is_loaded(tmp_path: Path) -> None:
    gc.unfreeze()
    try:
        runtime = Runtime.from_settings(load_settings(data_dir=tmp_path, embedding_model="hashing"))
        assert gc.get_freeze_count() == 0
        embedder = runtime.embedder
        assert embedder is not None
        assert gc.get_freeze_count() > 0
        assert runtime.embedder is embedder
    finally:
        gc.unfreeze()


def test_an_unloadable_embedder_is_left_for_the_semantic_lane_to_report(tmp_path: Path) -> None:
    missing = tmp_path / "no-model"
    missing.mkdir()
    settings = load_settings(data_dir=tmp_path, embedding_model=str(missing))
    try:
        embedder = Runtime.from_settings(settings).embedder
    finally:
        gc.unfreeze()
    assert embedder is not None
