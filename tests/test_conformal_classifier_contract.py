"""Family contract of the conformal classifiers (issue 9).

One calibration policy (warn at the user's line, quote the user's level,
threshold ``inf``, full sets, never raise) at ``fit`` and per call; one
threshold name (``threshold_``) and ``n_calibration_samples_``; hooks declared
abstract; ``verbose`` through the one printer; seeds bit-identical.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_iris
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.naive_bayes import GaussianNB
from sklearn.utils import get_tags

from sklearn_iclr26.conformal import SOCOPClassifier, SplitConformalClassifier
from sklearn_iclr26.conformal._base_classifier import BaseConformalClassifier

CLASSES = [
    pytest.param(lambda **kw: SOCOPClassifier(lam=0.1, **kw), id="socop"),
    pytest.param(lambda **kw: SOCOPClassifier(**kw), id="socop_auto"),
    pytest.param(lambda **kw: SplitConformalClassifier(**kw), id="lac"),
    pytest.param(
        lambda **kw: SplitConformalClassifier(
            conformity_score="aps", score_params={"randomized": True}, **kw
        ),
        id="aps_randomized",
    ),
]


@pytest.fixture(scope="module")
def iris():
    return load_iris(return_X_y=True)


@pytest.mark.parametrize("make", CLASSES)
def test_names_of_the_family(make, iris):
    X, y = iris
    clf = make(random_state=0)
    params = clf.get_params()
    assert params["confidence_level"] == 0.9
    assert "alpha" not in params and "verbose" in params
    clf.fit(X, y)
    assert np.isfinite(clf.threshold_)
    assert not hasattr(clf, "quantile_")
    assert clf.n_calibration_samples_ == clf.calibration_scores_.shape[0]
    # threshold_ is the conformal quantile of the calibration scores
    n = clf.n_calibration_samples_
    rank = int(np.ceil((n + 1) * 0.9))
    assert clf.threshold_ == clf.calibration_scores_[rank - 1]


@pytest.mark.parametrize("make", CLASSES)
def test_small_calibration_set_warns_at_the_users_line_and_gives_full_sets(make, iris):
    X, y = iris
    idx = np.r_[0:8, 50:58, 100:108]  # 24 rows: about 7 calibration points
    clf = make(confidence_level=0.95, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf.fit(X[idx], y[idx])
    messages = [w for w in caught if "too few" in str(w.message)]
    assert messages, [str(w.message) for w in caught]
    # the user's level is quoted (not an internal miscoverage), and the
    # warning points at this file, not inside scikit-learn or the package
    assert "confidence_level=0.95" in str(messages[-1].message)
    assert messages[-1].filename == __file__
    assert np.isinf(clf.threshold_)
    sets = clf.predict_set(X)
    assert sets.all()
    assert clf.predict_set(X, output="sparse").nnz == sets.size


@pytest.mark.parametrize("make", CLASSES)
def test_per_call_level(make, iris):
    X, y = iris
    clf = make(random_state=0).fit(X, y)
    np.testing.assert_array_equal(
        clf.predict_set(X), clf.predict_set(X, confidence_level=0.9)
    )
    # nested in the level
    low = clf.predict_set(X, confidence_level=0.6)
    high = clf.predict_set(X, confidence_level=0.95)
    assert np.all(low <= high)
    # a level the calibration set is too small for: warning quoting it, full sets
    with pytest.warns(UserWarning, match=r"confidence_level=0\.999") as record:
        full = clf.predict_set(X, confidence_level=0.999)
    assert record[0].filename == __file__
    assert full.all()
    for bad in (0.0, 1.0, 1.5, -0.1):
        with pytest.raises(ValueError, match="confidence_level"):
            clf.predict_set(X, confidence_level=bad)
    with pytest.raises(ValueError, match="output"):
        clf.predict_set(X, output="csr")


def test_hooks_are_abstract():
    class NoScore(BaseConformalClassifier):
        def __init__(self):
            pass

    with pytest.raises(TypeError, match="abstract"):
        NoScore()


@pytest.mark.parametrize("make", CLASSES)
def test_verbose_prints_plain_progress(make, iris, capsys):
    X, y = iris
    make(verbose=1, random_state=0).fit(X, y)
    out = capsys.readouterr().out
    assert "calibrated on" in out and "confidence_level=0.9" in out
    assert "\x1b[" not in out
    make(random_state=0).fit(X, y)
    assert capsys.readouterr().out == ""


def test_random_state_is_bit_identical_and_seeds_the_child(iris):
    from lightgbm import LGBMClassifier

    X, y = iris
    lgbm = LGBMClassifier(
        n_estimators=20, subsample=0.5, subsample_freq=1, verbose=-1, n_jobs=1
    )
    a = SOCOPClassifier(lgbm, random_state=3).fit(X, y)
    b = SOCOPClassifier(lgbm, random_state=3).fit(X, y)
    assert a.estimator_.random_state is not None  # seeded from random_state
    assert lgbm.random_state is None  # the user's object is untouched
    np.testing.assert_array_equal(a.calibration_scores_, b.calibration_scores_)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    assert a.lam_ == b.lam_


def test_tags_follow_the_child():
    assert not get_tags(SOCOPClassifier()).input_tags.allow_nan
    nan_ok = SOCOPClassifier(HistGradientBoostingClassifier())
    assert get_tags(nan_ok).input_tags.allow_nan
    assert get_tags(SplitConformalClassifier(GaussianNB())).input_tags.sparse is False


def test_sparse_output_type(iris):
    X, y = iris
    clf = SplitConformalClassifier(random_state=0).fit(X, y)
    sets = clf.predict_set(X, output="sparse")
    assert sp.issparse(sets) and sets.format == "csr" and sets.dtype == bool
    assert sets.shape == (150, 3)
    np.testing.assert_array_equal(sets.toarray(), clf.predict_set(X))


def test_a_training_part_too_small_to_fit_warns(iris):
    """calibration_size=0.97 used to train on 4 rows silently."""
    X, y = iris
    clf = SplitConformalClassifier(calibration_size=0.97, random_state=0)
    with pytest.warns(UserWarning, match=r"training part has 4 samples") as record:
        clf.fit(X, y)
    assert record[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        SplitConformalClassifier(calibration_size=0.5, random_state=0).fit(X, y)
