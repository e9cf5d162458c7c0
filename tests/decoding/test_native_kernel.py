"""The native few-row kernel: its products against float64 references, its refusals, and its switch."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from decoding import native_kernel as native
from decoding.native_kernel import PANEL, NativeKernel, native_kernel, unavailable_reason

needs_native = pytest.mark.skipif(
    native_kernel() is None, reason=f"no native few-row kernel here: {unavailable_reason()}"
)


@needs_native
@pytest.mark.parametrize("rows", [1, 2, 3, 4, 5, 7, 8, 9, 13, 17, 64, 65, 130])
@pytest.mark.parametrize(("inputs", "outputs"), [(576, 49), (32, 16), (13, 5), (1536, 96), (7, 3)])
def test_products_equal_a_float64_reference_to_float32_rounding(rows: int, inputs: int, outputs: int) -> None:
    kernel = native_kernel()
    assert kernel is not None
    generator = torch.Generator().manual_seed(rows * 1000 + inputs + outputs)
    x = torch.randn(rows, inputs, generator=generator)
    w = torch.randn(outputs, inputs, generator=generator)
    got = kernel.linear(x, w)
    expected = x.double() @ w.double().T
    assert got.shape == (rows, outputs) and got.dtype == torch.float32
    # Float32 sums of `inputs` products of unit normals: error grows with sqrt(inputs).
    assert torch.allclose(got.double(), expected, rtol=1e-5, atol=2e-6 * inputs**0.5)


@needs_native
def test_each_row_is_the_same_whatever_else_is_in_the_block() -> None:
    kernel = native_kernel()
    assert kernel is not None
    generator = torch.Generator().manual_seed(5)
    x = torch.randn(70, 64, generator=generator)
    w = torch.randn(40, 64, generator=generator)
    whole = kernel.linear(x, w)
    # Rows 8-15 are a second group over a tile's weights, rows 64-69 a second chunk; each row is its
    # own sum either way.
    for row in range(70):
        assert torch.equal(kernel.linear(x[row : row + 1], w)[0], whole[row])


@needs_native
def test_the_unchecked_product_equals_the_checked_one_bit_for_bit() -> None:
    kernel = native_kernel()
    assert kernel is not None
    generator = torch.Generator().manual_seed(6)
    w = torch.randn(40, 64, generator=generator)
    for rows in (1, 3, 9):
        x = torch.randn(rows, 64, generator=generator)
        assert torch.equal(kernel.product(x, kernel.pack(w)), kernel.linear(x, w))
    strided = torch.randn(64, 2, generator=generator).T
    assert torch.equal(kernel.product(strided, kernel.pack(w)), kernel.linear(strided.contiguous(), w))


@needs_native
def test_a_packed_weight_holds_its_outputs_in_panels_of_sixteen() -> None:
    kernel = native_kernel()
    assert kernel is not None
    w = torch.arange(37 * 5, dtype=torch.float32).reshape(37, 5)
    panels = kernel.pack(w)
    assert (panels.outputs, panels.inputs) == (37, 5) and PANEL == 16
    padded = torch.cat((w, torch.zeros(48 - 37, 5)))  # the last panel filled with zeros
    # Panel q, input k: outputs q*16 .. q*16+15 of input k, side by side.
    assert torch.equal(panels.data.view(3, 5, 16), padded.view(3, 16, 5).transpose(1, 2))
    x = torch.randn(3, 5, generator=torch.Generator().manual_seed(7))
    assert torch.equal(kernel.product(x, panels), kernel.linear(x, w))
    with pytest.raises(ValueError, match="contiguous weight"):
        kernel.pack(w.T)
    with pytest.raises(ValueError, match="cannot pack"):
        kernel.pack(torch.zeros(3))


@needs_native
def test_a_non_contiguous_input_is_copied_and_a_non_contiguous_weight_refused() -> None:
    kernel = native_kernel()
    assert kernel is not None
    x = torch.randn(16, 3).T  # (3, 16), strided
    w = torch.randn(8, 16)
    assert torch.allclose(kernel.linear(x, w), x @ w.T, atol=1e-5)
    with pytest.raises(ValueError, match="contiguous weight"):
        kernel.linear(x, torch.randn(16, 8).T)
    with pytest.raises(ValueError, match="float32"):
        kernel.linear(x.double(), w.double())
    with pytest.raises(ValueError, match="cannot multiply"):
        kernel.linear(torch.randn(2, 15), w)


def test_the_switch_turns_it_off_with_a_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(native.DISABLE_ENV, "off")
    monkeypatch.setattr(native, "_state", {})
    assert native_kernel() is None
    assert unavailable_reason() == f"turned off by {native.DISABLE_ENV}"


def test_no_compiler_means_no_kernel_and_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(native.DISABLE_ENV, raising=False)
    monkeypatch.setattr(native, "_state", {})
    monkeypatch.setattr(native, "_cpu_flags", lambda: {"avx2", "fma"})
    monkeypatch.setattr(native, "_torch_uses_gnu_openmp", lambda: True)
    monkeypatch.setattr(native.platform, "machine", lambda: "x86_64")
    monkeypatch.setattr(native.shutil, "which", lambda name: None)
    monkeypatch.setenv(native.CACHE_ENV, str(tmp_path))
    assert native_kernel() is None
    assert "no C compiler" in str(unavailable_reason())


@needs_native
def test_a_library_built_before_loads_without_a_compiler(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    compiler = native.shutil.which("cc") or native.shutil.which("gcc")
    assert compiler is not None
    native._build(compiler, tmp_path)
    monkeypatch.delenv(native.DISABLE_ENV, raising=False)
    monkeypatch.setenv(native.CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(native, "_state", {})
    monkeypatch.setattr(native.shutil, "which", lambda name: None)
    kernel = native_kernel()
    assert kernel is not None and unavailable_reason() is None
    x, w = torch.randn(2, 24), torch.randn(5, 24)
    assert torch.allclose(kernel.linear(x, w), x @ w.T, atol=1e-5)


def test_a_cpu_without_avx2_gets_no_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(native.DISABLE_ENV, raising=False)
    monkeypatch.setattr(native, "_state", {})
    monkeypatch.setattr(native.platform, "machine", lambda: "x86_64")
    monkeypatch.setattr(native, "_cpu_flags", lambda: {"sse4_2"})
    assert native_kernel() is None
    assert unavailable_reason() == "this CPU lacks avx2, fma"


@needs_native
def test_a_wrong_library_fails_its_self_test() -> None:
    class Wrong(NativeKernel):
        def __init__(self) -> None:
            pass

        def linear(self, rows: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
            return torch.zeros(rows.shape[0], weight.shape[0])

    with pytest.raises(RuntimeError, match="wrong"):
        native._self_test(Wrong())


@needs_native
def test_the_build_is_cached_by_source_and_flags(tmp_path: Path) -> None:
    compiler = native.shutil.which("cc") or native.shutil.which("gcc")
    assert compiler is not None
    first = native._build(compiler, tmp_path)
    assert first.name == native.library_name()
    stamp = first.stat().st_mtime_ns
    again = native._build(compiler, tmp_path)
    assert again == first and again.stat().st_mtime_ns == stamp
    assert [path.name for path in tmp_path.iterdir()] == [first.name]
