"""Randomized scores: each row's uniform is keyed by the seed and the row.

Predicting one row per call must give the sets of one batched call (and of
any row order), and keep the randomized score's coverage.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats
from sklearn.datasets import make_classification
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression

from sklearn_iclr26.conformal import SplitConformalClassifier
from sklearn_iclr26.conformal._row_uniforms import row_keys, row_uniforms

RANDOMIZED = [
    {"conformity_score": "aps", "score_params": {"randomized": True}},
    {"conformity_score": "raps", "score_params": {"randomized": True}},
]


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(
        n_samples=1600, n_features=8, n_informative=6, n_classes=4, random_state=0
    )
    model = LogisticRegression(max_iter=500).fit(X[:400], y[:400])
    return model, X[400:], y[400:]


@pytest.mark.parametrize("params", RANDOMIZED, ids=["aps", "raps"])
def test_row_by_row_sets_equal_batch_sets(data, params):
    model, X, y = data
    clf = SplitConformalClassifier(
        FrozenEstimator(model), random_state=0, **params
    ).calibrate(X[:600], y[:600])
    X_test = X[600:800]
    batch = clf.predict_set(X_test)
    rows = np.vstack([clf.predict_set(X_test[i : i + 1]) for i in range(len(X_test))])
    np.testing.assert_array_equal(rows, batch)
    order = np.random.default_rng(0).permutation(len(X_test))
    np.testing.assert_array_equal(clf.predict_set(X_test[order]), batch[order])
    # the scores and p-values, too (up to the model's own last-bit batch
    # differences in predict_proba)
    np.testing.assert_allclose(
        clf.conformity_scores(X_test[:1]), clf.conformity_scores(X_test)[:1], rtol=1e-12
    )
    np.testing.assert_allclose(
        clf.predict_p(X_test[5:6]), clf.predict_p(X_test)[5:6], rtol=1e-12
    )
    # a sparse copy of the rows gets the same draws row by row
    Xs = sp.csr_matrix(X_test)
    np.testing.assert_array_equal(
        np.vstack([row_uniforms(Xs[i : i + 1], 3) for i in range(20)]),
        row_uniforms(Xs[:20], 3),
    )


def test_row_keys_depend_on_content_only():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(
        {"a": ["x", "y", "x", "z"], "b": [1.0, np.nan, 1.0, -0.0], "c": [1, 2, 1, 3]}
    )
    keys = row_keys(df)
    assert keys[0] == keys[2] and len(set(keys.tolist())) == 3
    np.testing.assert_array_equal(
        np.concatenate([row_keys(df.iloc[[i]]) for i in range(4)]), keys
    )
    X = np.array([[0.0, 1.0], [-0.0, 1.0], [np.nan, 2.0]])
    k = row_keys(X)
    assert k[0] == k[1] and k[0] != k[2]
    # a numeric DataFrame gets its ndarray's draws
    np.testing.assert_array_equal(row_keys(pd.DataFrame(X)), k)
    # the seed changes the draws
    assert not np.array_equal(row_uniforms(X, 0), row_uniforms(X, 1))
    u = row_uniforms(np.arange(20000.0)[:, None], 0)
    assert stats.kstest(u.ravel(), "uniform").pvalue > 1e-3


@pytest.mark.parametrize("random_state", [0, 1, 2])
def test_row_by_row_randomized_aps_covers(random_state):
    """Randomized APS with allow_empty=True is exact: coverage in [level,
    level + 1/(n + 1)] in expectation. One row per call, one fixed
    random_state, pooled over 20 splits. The band: 3.5 standard deviations
    (binomial test noise plus the Beta spread of each split's coverage)
    around that interval."""
    X, y = make_classification(
        n_samples=20 * 300 + 1000,
        n_features=8,
        n_informative=4,
        n_classes=4,
        class_sep=0.7,
        random_state=1,
    )
    model = LogisticRegression(max_iter=500).fit(X[:1000], y[:1000])
    level, n_cal, n_test = 0.9, 200, 100
    hits = 0
    for s in range(20):
        block = slice(1000 + 300 * s, 1000 + 300 * (s + 1))
        Xb, yb = X[block], y[block]
        clf = SplitConformalClassifier(
            FrozenEstimator(model),
            conformity_score="aps",
            score_params={"randomized": True},
            allow_empty=True,
            confidence_level=level,
            random_state=random_state,
        ).calibrate(Xb[:n_cal], yb[:n_cal])
        for i in range(n_cal, n_cal + n_test):
            sets = clf.predict_set(Xb[i : i + 1])
            hits += bool(sets[0, np.searchsorted(clf.classes_, yb[i])])
    n = 20 * n_test
    k = np.ceil((n_cal + 1) * level)
    var_split = k * (n_cal + 1 - k) / ((n_cal + 1) ** 2 * (n_cal + 2))
    sd = np.sqrt(level * (1 - level) / n + var_split / 20)
    lo, hi = level - 3.5 * sd, level + 1 / (n_cal + 1) + 3.5 * sd
    assert lo <= hits / n <= hi, (hits / n, lo, hi)
