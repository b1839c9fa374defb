"""Parameter archives are untrusted: checked before numpy allocates anything.

Regression tests for hardening finding 10 (zero-byte and non-npz files,
non-string keys) and the size checks of finding 4.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
import pytest

from mlvm.diagnostics import MlvmError
from mlvm.pipeline import check_params, load_params


def npy_bytes(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=True)
    return buf.getvalue()


def archive(path: Path, members: dict[str, bytes], compress: bool = False) -> Path:
    mode = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(path, "w", mode) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def huge_header(shape: tuple[int, ...]) -> bytes:
    """A .npy header declaring `shape` of f32, followed by 16 bytes of data."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f4", "fortran_order": False, "shape": shape}
    )
    return b"\x93NUMPY\x01\x00" + header.getvalue()[8:] + b"\0" * 16


def test_good_archive_loads(tmp_path: Path) -> None:
    np.savez(tmp_path / "w.npz", w=np.arange(6, dtype=np.float32).reshape(2, 3), b=np.ones(3, np.int32))
    params = load_params(tmp_path / "w.npz")
    assert params["w"].shape == (2, 3) and params["b"].dtype == np.int32


BAD = {
    "zero_bytes": (lambda p: p.write_bytes(b""), "not a readable .npz archive"),
    "text": (lambda p: p.write_text("hello"), "not a readable .npz archive"),
    "truncated": (lambda p: p.write_bytes(_good_bytes()[:-40]), "not a readable .npz archive"),
    "pickled_objects": (lambda p: archive(p, {"a.npy": npy_bytes(np.array([{}], dtype=object))}),
                        "holds Python objects"),
    "not_npy_member": (lambda p: archive(p, {"a.txt": b"hi"}), "is not a .npy array"),
    "bad_magic": (lambda p: archive(p, {"a.npy": b"NOTNUMPY" + b"\0" * 64}), "not a readable"),
    "huge_declared_shape": (lambda p: archive(p, {"a.npy": huge_header((1 << 40,))}),
                            "declares 4398046511104 bytes of data but the archive holds 16"),
    "shape_overflow": (lambda p: archive(p, {"a.npy": huge_header((1 << 62, 1 << 62))}),
                       "declares"),
    "short_data": (lambda p: archive(p, {"a.npy": huge_header((5,))}), "declares 20 bytes"),
}


def _good_bytes() -> bytes:
    buf = io.BytesIO()
    np.savez(buf, w=np.ones(64, np.float32))
    return buf.getvalue()


@pytest.mark.parametrize("case", BAD.values(), ids=BAD.keys())
def test_hostile_archive_is_one_line_error(tmp_path: Path, case: tuple) -> None:  # type: ignore[type-arg]
    make, fragment = case
    p = tmp_path / "w.npz"
    make(p)
    with pytest.raises(MlvmError) as info:
        load_params(p)
    msg = str(info.value)
    assert msg.startswith(f"{p}: error: ") and "\n" not in msg
    assert fragment in msg, msg


def test_compressed_bomb_is_refused_before_inflating(tmp_path: Path) -> None:
    big = npy_bytes(np.zeros(1 << 20, np.float32))  # 4 MiB of zeros: a few KiB deflated
    p = archive(tmp_path / "w.npz", {"a.npy": big}, compress=True)
    assert p.stat().st_size < 100_000
    with pytest.raises(MlvmError, match="larger than the limit of 1000000 bytes"):
        load_params(p, max_bytes=1_000_000)
    assert load_params(p)["a"].shape == (1 << 20,)


def test_total_size_over_the_limit_is_refused(tmp_path: Path) -> None:
    np.savez(tmp_path / "w.npz", a=np.ones(200, np.float32), b=np.ones(200, np.float32))
    with pytest.raises(MlvmError, match="more than the limit of 1000 bytes"):
        load_params(tmp_path / "w.npz", max_bytes=1000)


def test_params_dict_is_checked() -> None:
    with pytest.raises(MlvmError, match="parameter names must be strings"):
        check_params({("w",): np.ones(2)})
    with pytest.raises(MlvmError, match="unsupported dtype complex64"):
        check_params({"w": np.ones(2, np.complex64)})
    with pytest.raises(MlvmError, match="must be a numpy array, got list"):
        check_params({"w": [1.0]})


def test_corrupt_deflate_streams_are_one_line_errors(tmp_path: Path) -> None:
    """Found by the fuzzer: zlib.error escaped from a damaged deflated member."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("w.npy", npy_bytes(np.arange(4096, dtype=np.float32)))
    good = buf.getvalue()
    p = tmp_path / "w.npz"
    for k in range(40, len(good) - 100, max(1, (len(good) - 140) // 60)):
        bad = bytearray(good)
        bad[k] ^= 0x5A
        p.write_bytes(bytes(bad))
        try:
            load_params(p)
        except MlvmError as e:
            assert "\n" not in str(e) and str(e).startswith(f"{p}: error: ")
