"""The semantic lane's query embedding runs on one torch thread and leaves the setting as it was."""

from __future__ import annotations

import pytest

from akm.retrieval.lanes import single_intra_op_thread

torch = pytest.importorskip("torch", reason="torch is not installed")


@pytest.mark.parametrize("configured", [1, 2, 3], ids=["one", "two", "three"])
def test_single_thread_inside_and_restored_after(configured: int) -> None:
    previous = torch.get_num_threads()
    torch.set_num_threads(configured)
    try:
        with single_intra_op_thread():
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == configured
    finally:
        torch.set_num_threads(previous)


def test_restored_when_the_work_fails() -> None:
    previous = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with pytest.raises(RuntimeError, match="embedding failed"), single_intra_op_thread():
            raise RuntimeError("embedding failed")
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(previous)
