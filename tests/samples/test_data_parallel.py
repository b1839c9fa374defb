"""samples/data_parallel: data-parallel training on 1, 2 and 4 ranks equal to
one rank on the whole batch, and tensor-parallel inference equal to one rank."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import pytest


def test_data_parallel_weights_equal_serial(
    sample: Callable[[str], ModuleType], capsys: pytest.CaptureFixture[str]
) -> None:
    train = sample("data_parallel/train.py")
    assert train.main(["--steps", "60", "--ranks", "1,2,4"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [ln.split(",")[0] for ln in lines[:3]] == ["1 rank", "2 ranks", "4 ranks"]
    last = lines[-1]
    assert last.startswith("max |w_parallel - w_serial| = ")
    assert float(last.rsplit("=", 1)[1]) <= 1e-5


def test_data_parallel_refuses_an_uneven_split(sample: Callable[[str], ModuleType], tmp_path) -> None:  # type: ignore[no-untyped-def]
    train = sample("data_parallel/train.py")
    with pytest.raises(ValueError, match="must split evenly over 3 ranks"):
        train.train(3, 1, 32, 0, tmp_path)


def test_tensor_parallel_logits_equal_one_rank(sample: Callable[[str], ModuleType]) -> None:
    tp = sample("data_parallel/tensor_parallel.py")
    diff, same = tp.run()
    assert same and diff <= 1e-4
