"""Conformal family: the small usability fixes of issue 40 (items 9 and 17).

Missing values in the regions that compute on X name ``transformer=``;
``set_output`` on the classifiers reaches the inner pipeline; OT-CP's 1-D
fast path gives the general path's intervals; a finite but huge X names the
overflow instead of a NaN the user's X does not have.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import load_iris, make_regression
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.conformal import (
    CVQRRegressor,
    EllipsoidRegressor,
    OTCPRegressor,
    SOCOPClassifier,
    SplitConformalClassifier,
    _otcp,
)

NAN_REGIONS = [
    EllipsoidRegressor(HistGradientBoostingRegressor(max_iter=10), covariance="local"),
    OTCPRegressor(
        HistGradientBoostingRegressor(max_iter=10), transport="local", n_neighbors=20
    ),
    CVQRRegressor(
        residual_estimator=HistGradientBoostingRegressor(max_iter=10),
        max_iter=2,
        warmup_epochs=1,
        hidden_layer_sizes=(4,),
    ),
]


@pytest.mark.parametrize("region", NAN_REGIONS, ids=lambda r: type(r).__name__)
def test_missing_values_name_the_transformer_option(region):
    X, Y = make_regression(n_samples=200, n_features=4, n_targets=2, random_state=0)
    X[::7, 1] = np.nan
    with pytest.raises(ValueError, match=r"transformer=.*SimpleImputer") as info:
        region.fit(X, Y)
    assert "NaN" in str(info.value)
    # and the named fix works
    region.set_params(transformer=SimpleImputer()).fit(X, Y)


class _Recorder(ClassifierMixin, BaseEstimator):
    """Records the type of X its fit and predict_proba see."""

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        self.seen_ = type(X).__name__
        return self

    def predict_proba(self, X):
        self.seen_ = type(X).__name__
        return np.full((len(X), len(self.classes_)), 1 / len(self.classes_))


@pytest.mark.parametrize("cls", [SplitConformalClassifier, SOCOPClassifier])
def test_set_output_reaches_the_inner_pipeline(cls):
    pytest.importorskip("pandas")
    X, y = load_iris(return_X_y=True, as_frame=True)
    clf = cls(make_pipeline(StandardScaler(), _Recorder()), random_state=0)
    assert clf.set_output(transform="pandas") is clf
    clf.fit(X, y)
    assert clf.estimator_[-1].seen_ == "DataFrame"
    # the default pipeline (estimator=None) too, and the setting survives clone
    from sklearn.base import clone

    default = clone(cls(random_state=0).set_output(transform="pandas")).fit(X, y)
    assert default.estimator_[0].get_feature_names_out().tolist() == list(X.columns)
    assert default.estimator_[-1].feature_names_in_.tolist() == list(X.columns)
    # nothing to set: a clear error
    with pytest.raises(ValueError, match="nothing to set"):
        cls(LogisticRegression()).set_output(transform="pandas")


@pytest.mark.parametrize("transport", ["global", "local"])
def test_otcp_1d_fast_path_equals_the_general_path(transport, monkeypatch):
    X, y = make_regression(n_samples=300, n_features=3, noise=10.0, random_state=0)
    y = y + np.random.default_rng(0).standard_t(3, size=300) * 20
    params = {"transport": transport, "random_state": 0}
    if transport == "local":
        params["n_neighbors"] = 30
    fast = OTCPRegressor(LinearRegression(), **params).fit(X, y)
    rng = np.random.default_rng(1)
    pts, grid = rng.normal(size=(60, 1)), _otcp.reference_grid(60, 1, rng)
    a1, p1 = _otcp._transport_potentials_1d(pts[:, 0], grid[:, 0])
    a2, p2 = _otcp._transport_potentials_exact(pts, grid)
    np.testing.assert_array_equal(a1, a2)
    np.testing.assert_allclose(p1, p2, atol=1e-12)

    def general(points, grid):
        return _otcp._transport_potentials_exact(points, grid)

    monkeypatch.setattr(_otcp, "transport_potentials", general)
    monkeypatch.setattr(
        _otcp, "_ranks", lambda S, g, psi: g[np.argmax(S @ g.T - psi, axis=1)]
    )
    slow = OTCPRegressor(LinearRegression(), **params).fit(X, y)
    assert fast.threshold_ == slow.threshold_
    np.testing.assert_allclose(
        fast.predict_region(X[:40]), slow.predict_region(X[:40]), rtol=1e-10
    )
    np.testing.assert_array_equal(fast.contains(X, y), slow.contains(X, y))


@pytest.mark.parametrize("cls", [SplitConformalClassifier, SOCOPClassifier])
def test_finite_huge_features_name_the_overflow(cls):
    X, y = load_iris(return_X_y=True)
    X = X.copy()
    X[:, 0] *= 1e300
    with pytest.warns(RuntimeWarning), pytest.raises(ValueError, match="overflow"):
        cls(random_state=0).fit(X, y)
