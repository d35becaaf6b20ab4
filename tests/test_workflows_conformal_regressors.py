"""Real tabular workflows through the conformal regressors.

A raw DataFrame with string categoricals goes through a name-based
``ColumnTransformer`` + LightGBM *inside* the estimator (``X`` reaches it
untouched); a deployed pipeline is calibrated through ``FrozenEstimator``;
non-numeric ``X`` where the estimator computes on ``X`` itself raises an error
naming ``transformer=``; the silent cases warn; and ``GridSearchCV`` with the
region scorers picks the value that is right by construction, never the first
of its grid.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import warnings

import numpy as np
import pandas as pd
import pytest
from lightgbm import LGBMRegressor
from sklearn.compose import ColumnTransformer
from sklearn.dummy import DummyRegressor
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import GridSearchCV
from sklearn.multioutput import MultiOutputRegressor
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from sklearn_iclr26.conformal import (
    BonferroniBoxRegressor,
    CVQRRegressor,
    EllipsoidRegressor,
)
from sklearn_iclr26.conformal._region_scorers import REGION_SCORERS


def _frame(n=300, seed=0):
    rng = np.random.RandomState(seed)
    cities = np.array(["lyon", "oslo", "lima"])
    df = pd.DataFrame(
        {
            "age": rng.uniform(20, 60, n),
            "hours": rng.uniform(10, 50, n),
            "city": cities[rng.randint(0, 3, n)],
        }
    )
    effect = pd.Series({"lyon": 0.0, "oslo": 2.0, "lima": -1.0})[df["city"]].values
    y = np.c_[
        0.05 * df["age"] + effect + rng.normal(size=n),
        0.02 * df["hours"] - effect + 0.5 * rng.normal(size=n),
    ]
    return df, y


def _preprocess():
    return ColumnTransformer(
        [
            ("num", StandardScaler(), ["age", "hours"]),
            ("cat", OneHotEncoder(sparse_output=False), ["city"]),
        ]
    )


def _pipeline(final):
    return Pipeline([("prep", _preprocess()), ("model", final)])


def _lgbm():
    return LGBMRegressor(n_estimators=30, min_child_samples=5, n_jobs=1, verbose=-1)


@pytest.mark.parametrize(
    "make",
    [
        lambda pipe: BonferroniBoxRegressor(pipe, random_state=0),
        lambda pipe: EllipsoidRegressor(pipe, random_state=0),
        lambda pipe: EllipsoidRegressor(
            pipe, covariance="local", n_neighbors=30, random_state=0
        ),
        lambda pipe: CVQRRegressor(
            residual_estimator=pipe,
            max_iter=4,
            hidden_layer_sizes=(8, 8),
            random_state=0,
        ),
    ],
    ids=["box", "ellipsoid", "local-ellipsoid", "cvqr"],
)
def test_raw_dataframe_through_a_wrapped_pipeline(make):
    df, y = _frame()
    est = make(_pipeline(_lgbm())).fit(df.iloc[:240], y[:240])
    # the single-output LightGBM pipeline was wrapped for the 2 outputs
    inner = getattr(est, "estimator_", None) or est.residual_estimator_
    assert isinstance(inner, MultiOutputRegressor)
    np.testing.assert_array_equal(est.feature_names_in_, ["age", "hours", "city"])
    test = df.iloc[240:]
    inside = est.contains(test, y[240:])
    assert inside.shape == (60,) and inside.mean() > 0.5
    assert np.all(np.isfinite(est.region_log_volume(test.iloc[:5])))
    assert est.predict_region(test.iloc[:3]).shape[:1] == (3,)
    assert est.predict(test.iloc[:3]).shape == (3, 2)
    with pytest.raises(ValueError, match="Feature names"):
        est.contains(test[["hours", "age", "city"]], y[240:])


def test_frozen_deployed_pipeline_is_calibrated_not_refit():
    df, y = _frame(400)
    deployed = _pipeline(LinearRegression()).fit(df.iloc[:200], y[:200])
    coef = deployed[-1].coef_.copy()
    for est in (
        BonferroniBoxRegressor(FrozenEstimator(deployed), random_state=0),
        EllipsoidRegressor(
            FrozenEstimator(deployed),
            covariance="local",
            n_neighbors=20,
            random_state=0,
        ),
    ):
        est.fit(df.iloc[200:350], y[200:350])
        np.testing.assert_array_equal(deployed[-1].coef_, coef)
        np.testing.assert_allclose(
            est.predict(df.iloc[350:]), deployed.predict(df.iloc[350:])
        )
        assert est.contains(df.iloc[350:], y[350:]).mean() > 0.6


def test_non_numeric_X_names_the_transformer_option():
    df, y = _frame(120)
    with pytest.raises(ValueError, match="transformer="):
        CVQRRegressor(max_iter=2).fit(df, y)
    with pytest.raises(ValueError, match="transformer="):
        EllipsoidRegressor(DummyRegressor(), covariance="local").fit(df, y)
    # the option it names works
    ell = EllipsoidRegressor(
        DummyRegressor(),
        covariance="local",
        n_neighbors=20,
        transformer=_preprocess(),
        random_state=0,
    ).fit(df, y)
    assert np.all(np.isfinite(ell.region_log_volume(df.iloc[:3])))
    cvqr = CVQRRegressor(
        max_iter=2, hidden_layer_sizes=(4, 4), transformer=_preprocess(), random_state=0
    ).fit(df, y)
    assert cvqr.contains(df, y).shape == (120,)


def test_silent_cases_now_warn():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(120, 3))
    y = X[:, :2] + rng.normal(size=(120, 2))
    # local covariance with <= n_neighbors training rows equals the global one
    with pytest.warns(UserWarning, match="n_neighbors=100.*equals the global"):
        loc = EllipsoidRegressor(covariance="local", random_state=0).fit(X, y)
    glob = EllipsoidRegressor(random_state=0).fit(X, y)
    np.testing.assert_allclose(
        loc.region_log_volume(X[:3]), glob.region_log_volume(X[:3]), rtol=1e-6
    )
    # a calibration part that leaves too few rows to fit
    for est in (BonferroniBoxRegressor(), EllipsoidRegressor()):
        with pytest.warns(UserWarning, match="calibration_size=0.99 leaves 2 of"):
            est.set_params(calibration_size=0.99).fit(X, y)
    # a single-output regressor is wrapped, not failed inside LightGBM
    box = BonferroniBoxRegressor(_lgbm(), random_state=0).fit(X, y)
    assert isinstance(box.estimator_, MultiOutputRegressor)


def _linear(n=400, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 3))
    y = X @ rng.normal(size=(3, 2)) * 3 + 0.3 * rng.normal(size=(n, 2))
    return X, y


@pytest.mark.parametrize(
    "scorer, grid, expected",
    [
        # coverage alone prefers the larger regions
        ("region_coverage", {"confidence_level": [0.5, 0.9]}, 0.9),
        # volume alone prefers the smaller regions (nested by construction)
        ("neg_region_log_volume", {"confidence_level": [0.9, 0.5]}, 0.5),
        # a wider region covers every slab at least as well
        ("worst_slab_coverage", {"confidence_level": [0.5, 0.95]}, 0.95),
    ],
)
def test_grid_search_picks_the_known_answer(scorer, grid, expected):
    X, y = _linear()
    search = GridSearchCV(
        EllipsoidRegressor(random_state=0), grid, cv=3, scoring=REGION_SCORERS[scorer]
    ).fit(X, y)
    assert search.best_params_["confidence_level"] == expected


def test_volume_subject_to_coverage_selects_the_true_model():
    # y is linear in X: the linear model's regions are far smaller, and both
    # are valid, so the constrained volume picks it (the second grid value)
    X, y = _linear()
    scorer = REGION_SCORERS["neg_region_log_volume_subject_to_coverage"]
    search = GridSearchCV(
        BonferroniBoxRegressor(random_state=0),
        {"estimator": [DummyRegressor(), LinearRegression()]},
        cv=3,
        scoring=scorer,
    ).fit(X, y)
    assert isinstance(search.best_params_["estimator"], LinearRegression)
    # an under-covering region is penalised below a valid one of larger volume
    est = EllipsoidRegressor(random_state=0).fit(X[:300], y[:300])
    valid = scorer(est, X[300:], y[300:])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.set_params(confidence_level=0.3)
        est.threshold_ = est._threshold(0.3, per_call=False)
    est.confidence_level = 0.9  # judged at 0.9 with the 0.3 regions
    assert scorer(est, X[300:], y[300:]) < valid
    assert REGION_SCORERS["neg_region_log_volume"](est, X[300:], y[300:]) > valid
