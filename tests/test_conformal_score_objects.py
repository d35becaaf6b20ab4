"""Conformity scores as objects (issue 45 item 5, MAPIE's pattern).

A score object gives the sets of its string, bit for bit (same seed);
``SOCOPScore`` in ``SplitConformalClassifier`` gives ``SOCOPClassifier``'s
sets (fixed and tuned ``lam``); a user's score plugs in and its parameters
tune in ``GridSearchCV``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV

from sklearn_iclr26.conformal import (
    APSScore,
    BaseClassificationScore,
    LACScore,
    MarginScore,
    RAPSScore,
    SOCOPClassifier,
    SOCOPScore,
    SplitConformalClassifier,
    TopKScore,
)
from sklearn_iclr26.metrics import get_scorer


@pytest.fixture(scope="module")
def weak_digits():
    X, y = load_digits(return_X_y=True)
    return X[:900, 16:32] / 16.0, y[:900]


def _model():
    return LogisticRegression(max_iter=300)


@pytest.mark.parametrize(
    "name, params, score",
    [
        ("lac", None, LACScore()),
        ("aps", None, APSScore()),
        ("aps", {"randomized": True}, APSScore(randomized=True)),
        ("raps", {"lam_reg": 0.1, "k_reg": 2}, RAPSScore(lam_reg=0.1, k_reg=2)),
        (
            "raps",
            {"lam_reg": "auto", "k_reg": "auto"},
            RAPSScore(lam_reg="auto", k_reg="auto"),
        ),
        ("margin", None, MarginScore()),
        ("top_k", None, TopKScore()),
    ],
    ids=["lac", "aps", "aps_randomized", "raps", "raps_auto", "margin", "top_k"],
)
@pytest.mark.parametrize("cv", [None, 3])
def test_a_score_object_equals_its_string(weak_digits, name, params, score, cv):
    X, y = weak_digits
    if cv is not None and isinstance(score, RAPSScore) and score.needs_tuning():
        with pytest.raises(ValueError, match="tuned score"):
            SplitConformalClassifier(_model(), conformity_score=score, cv=cv).fit(X, y)
        return
    by_name = SplitConformalClassifier(
        _model(), conformity_score=name, score_params=params, cv=cv, random_state=0
    ).fit(X, y)
    by_object = SplitConformalClassifier(
        _model(), conformity_score=score, cv=cv, random_state=0
    ).fit(X, y)
    assert by_object.threshold_ == by_name.threshold_
    np.testing.assert_array_equal(by_object.predict_set(X), by_name.predict_set(X))
    np.testing.assert_array_equal(by_object.predict_p(X), by_name.predict_p(X))
    # the parameter is left untouched, the fitted copy is score_
    assert by_object.score_ is not score
    assert not hasattr(score, "k_reg_")


@pytest.mark.parametrize("lam", [0.1, "auto"])
def test_socop_score_gives_socop_classifier_sets(weak_digits, lam):
    X, y = weak_digits
    socop = SOCOPClassifier(_model(), lam=lam, random_state=0).fit(X, y)
    split = SplitConformalClassifier(
        _model(), conformity_score=SOCOPScore(lam=lam), random_state=0
    ).fit(X, y)
    assert split.threshold_ == socop.threshold_
    np.testing.assert_array_equal(split.predict_set(X), socop.predict_set(X))
    if lam == "auto":
        assert split.score_.lam_ == socop.lam_
        np.testing.assert_array_equal(
            split.score_.lam_path_["mean_size"], socop.lam_path_["mean_size"]
        )


class _SquaredScore(BaseClassificationScore):
    """``1 - p^power``: a user's score with one parameter."""

    def __init__(self, power=2.0):
        self.power = power

    def score_matrix(self, proba, uniforms=None):
        return 1.0 - proba**self.power


def test_a_users_score_plugs_in_and_tunes_in_grid_search(weak_digits):
    X, y = weak_digits
    clf = SplitConformalClassifier(
        _model(), conformity_score=_SquaredScore(), random_state=0
    ).fit(X, y)
    proba = clf.predict_proba(X)
    expected = 1.0 - proba**2 <= clf.threshold_
    empty = ~expected.any(axis=1)
    expected[empty, proba[empty].argmax(axis=1)] = True
    np.testing.assert_array_equal(clf.predict_set(X), expected)
    assert clone(clf).get_params()["conformity_score__power"] == 2.0
    search = GridSearchCV(
        SplitConformalClassifier(_model(), conformity_score=_SquaredScore()),
        {"conformity_score__power": [1.0, 3.0]},
        scoring=get_scorer("set_efficiency"),
        cv=2,
    ).fit(X, y)
    assert search.best_params_["conformity_score__power"] in (1.0, 3.0)


def test_score_objects_refuse_what_they_cannot_do(weak_digits):
    X, y = weak_digits

    class NoScore(BaseClassificationScore):
        pass

    with pytest.raises(NotImplementedError, match="score_matrix"):
        SplitConformalClassifier(_model(), conformity_score=NoScore()).fit(X, y)
    with pytest.raises(ValueError, match="score_params"):
        SplitConformalClassifier(
            _model(), conformity_score=LACScore(), score_params={"randomized": True}
        ).fit(X, y)
