"""Real tabular workflows of the deferral estimators.

A raw DataFrame with string categoricals (and string labels for the
classifier) goes through a ``Pipeline`` (name-based ``ColumnTransformer`` +
LightGBM) *inside* the estimator, expert answers are named columns; a deployed
pipeline is used as is through ``FrozenEstimator``; the layouts that used to be
read silently by position raise clear errors.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import pandas as pd
import pytest
from lightgbm import LGBMClassifier, LGBMRegressor
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.frozen import FrozenEstimator
from sklearn.impute import SimpleImputer
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from sklearn_iclr26.datasets import make_experts
from sklearn_iclr26.deferral import TopKDeferralRegressor, TopKDeferrer

EXPERTS = ["expert_a", "expert_b", "expert_c"]
CATEGORICAL = ["region", "plan"]
NUMERIC = ["age", "income", "usage"]


def _frame(task, seed=0, n=600, unavailable=0.1):
    rng = np.random.RandomState(seed)
    df = pd.DataFrame(
        {
            "age": rng.uniform(18, 80, n),
            "income": rng.lognormal(10, 0.5, n),
            "usage": rng.normal(size=n),
            "region": rng.choice(["north", "south", "east"], n),
            "plan": rng.choice(["basic", "pro"], n),
        }
    )
    signal = (
        df["usage"]
        + 0.03 * (df["age"] - 50)
        + np.where(df["region"] == "south", 1.0, -0.5)
        + np.where(df["plan"] == "pro", 0.8, 0.0)
    )
    if task == "classification":
        y = np.where(signal + rng.normal(scale=0.8, size=n) > 0, "yes", "no")
    else:
        y = (3.0 * signal + rng.normal(size=n)).to_numpy()
    answers, fees = make_experts(
        df, y, n_experts=3, task=task, unavailable=unavailable, random_state=seed
    )
    for name, column in zip(EXPERTS, answers.T):
        df[name] = column
    return df, y, fees


def _pipeline(final):
    prep = ColumnTransformer(
        [
            ("cat", OneHotEncoder(handle_unknown="ignore"), CATEGORICAL),
            ("num", StandardScaler(), NUMERIC),
        ]
    )
    return Pipeline([("prep", prep), ("model", final)])


def _lgbm(task):
    cls = LGBMClassifier if task == "classification" else LGBMRegressor
    return cls(n_estimators=25, num_leaves=7, min_child_samples=5, n_jobs=1, verbose=-1)


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_raw_dataframe_through_an_inner_pipeline(task):
    df, y, fees = _frame(task)
    train, test = df.iloc[:400], df.iloc[400:]
    Est = TopKDeferrer if task == "classification" else TopKDeferralRegressor
    est = Est(
        predictor=_pipeline(_lgbm(task)),
        expert_columns=EXPERTS,
        costs=fees,
        k=2,
        adaptive=True,
        cv=3,
        random_state=0,
    ).fit(train, y[:400])
    assert list(est.entity_names_) == ["model", *EXPERTS]
    np.testing.assert_array_equal(est.feature_names_in_, df.columns)
    # the default transformer is the predictor's fitted preprocessing
    assert est.transformer_.steps[0][1] is est.predictor_.steps[0][1]
    pred = est.predict(test)
    if task == "classification":
        assert set(pred) <= {"no", "yes"}
        assert est.predict_proba(test).shape == (len(test), 2)
    assert est.predict_allocation(test).shape == (len(test), 4)
    assert est.entity_scores(test).shape == (len(test), 4)
    curve = est.deferral_curve(test, y[400:], budget_weights=[0.0, 1.0])
    assert curve.score.shape == (4,) and curve.adaptive_score.shape == (2,)
    # no expert available: the inner pipeline answers, on the raw feature columns
    no_expert = test.copy()
    no_expert[EXPERTS] = np.nan
    expected = est.predictor_.predict(test.drop(columns=EXPERTS))
    if task == "classification":
        np.testing.assert_array_equal(est.predict(no_expert), expected)
    else:
        np.testing.assert_allclose(est.predict(no_expert), expected)
    # random_state: bit-identical refit (shuffled folds, seeded LightGBM)
    again = clone(est).fit(train, y[:400])
    np.testing.assert_array_equal(again.entity_scores(test), est.entity_scores(test))
    np.testing.assert_array_equal(again.predict_k(test), est.predict_k(test))


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_frozen_deployed_pipeline_as_predictor(task):
    df, y, fees = _frame(task, seed=1)
    features = df.drop(columns=EXPERTS)
    deployed = _pipeline(_lgbm(task)).fit(features.iloc[:300], y[:300])
    Est = TopKDeferrer if task == "classification" else TopKDeferralRegressor
    est = Est(
        predictor=FrozenEstimator(deployed), expert_columns=EXPERTS, costs=fees
    ).fit(df.iloc[300:], y[300:])
    assert est.predictor_.estimator is deployed  # not refitted
    assert est.transformer_.steps[0][1] is deployed.steps[0][1]
    no_expert = df.copy()
    no_expert[EXPERTS] = None
    expected = deployed.predict(features)
    if task == "classification":
        np.testing.assert_array_equal(est.predict(no_expert), expected)
    else:
        np.testing.assert_allclose(est.predict(no_expert), expected)


def test_classification_answers_must_be_labels_of_y():
    df, y, fees = _frame("classification")
    encoded = df.copy()
    for name in EXPERTS:  # label-encoded answers (0 = "no", 1 = "yes")
        encoded[name] = (df[name] == "yes").astype(float).where(df[name].notna())
    est = TopKDeferrer(predictor=_pipeline(_lgbm("classification")), costs=fees)
    with pytest.raises(ValueError, match="must be labels of y"):
        est.set_params(expert_columns=EXPERTS).fit(encoded, y)


def test_nan_features_reach_a_nan_capable_predictor():
    df, y, fees = _frame("classification", seed=2)
    df.loc[df.index[::7], "usage"] = np.nan
    params = {
        "predictor": _pipeline(_lgbm("classification")),
        "expert_columns": EXPERTS,
        "costs": fees,
        "cv": 3,
    }
    # the built-in allocator computes on the transformed features: a clear
    # error names the options
    with pytest.raises(ValueError, match="transformer="):
        TopKDeferrer(**params).fit(df, y)
    # an imputing transformer for the built-in allocator ...
    imputing = make_pipeline(
        ColumnTransformer(
            [
                ("cat", OneHotEncoder(handle_unknown="ignore"), CATEGORICAL),
                ("num", SimpleImputer(), NUMERIC),
            ]
        ),
        StandardScaler(with_mean=False),
    )
    est = TopKDeferrer(transformer=imputing, **params).fit(df, y)
    assert est.predict(df).shape == (len(df),)
    # ... or an allocator that preprocesses X itself and accepts NaN
    allocator = _pipeline(_lgbm("classification"))
    est = TopKDeferrer(allocator, **params).fit(df, y)
    assert est.transformer_ is None
    assert est.entity_scores(df).shape == (len(df), 4)


def test_non_numeric_features_without_transformer_raise_naming_it():
    df, y, _ = _frame("classification")
    # a predictor that is not a Pipeline: no default transformer
    est = TopKDeferrer(
        predictor=FrozenEstimator(_pipeline(_lgbm("classification")).fit(df, y)),
        expert_columns=EXPERTS,
        transformer="passthrough",
    )
    with pytest.raises(ValueError, match="transformer="):
        est.fit(df, y)


# ------------------------------------------------- the audit's bad layouts


def test_regressor_with_no_expert_columns_in_x_raises():
    # audit E1: TopKDeferralRegressor(n_experts=2) on three plain features
    # fitted silently with two features read as expert answers
    rng = np.random.RandomState(0)
    X = rng.normal(size=(100, 3))
    y = X[:, 0] + rng.normal(size=100)
    with pytest.raises(TypeError, match="n_experts"):
        TopKDeferralRegressor(n_experts=2)  # the positional parameter is gone
    with pytest.raises(ValueError, match="out of range"):
        TopKDeferralRegressor(expert_columns=[3, 4]).fit(X, y)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    with pytest.raises(ValueError, match="not columns of X"):
        TopKDeferralRegressor(expert_columns=["expert_0", "expert_1"]).fit(df, y)
    with pytest.raises(ValueError, match="must name the expert columns"):
        TopKDeferralRegressor(expert_columns=[1, 2]).fit(df, y)
    with pytest.raises(ValueError, match="at least one feature column"):
        TopKDeferralRegressor(expert_columns=["a", "b", "c"]).fit(df, y)


def test_experts_first_one_hot_last_raises():
    # audit E16b: an outer ColumnTransformer put the experts first and the
    # one-hot columns last; "the last n_experts columns" read one-hot columns
    df, y, fees = _frame("classification", unavailable=0.0)
    outer = ColumnTransformer(
        [
            ("experts", "passthrough", EXPERTS),
            ("cat", OneHotEncoder(sparse_output=False), CATEGORICAL),
            ("num", StandardScaler(), NUMERIC),
        ]
    )
    Xt = outer.fit_transform(df)  # numpy: no names
    with pytest.raises(ValueError, match="no column names"):
        TopKDeferrer(expert_columns=EXPERTS).fit(Xt, y)
    # the old mistake, the one-hot columns given as the experts' answers
    one_hot = [3, 4, 5]
    with pytest.raises(ValueError, match="must be labels of y"):
        TopKDeferrer(expert_columns=one_hot).fit(Xt.astype(object), y)
    # with pandas output the names are prefixed: the error suggests them
    Xt = outer.set_output(transform="pandas").fit_transform(df)
    with pytest.raises(ValueError, match="experts__expert_a"):
        TopKDeferrer(expert_columns=EXPERTS).fit(Xt, y)
    prefixed = [f"experts__{name}" for name in EXPERTS]
    est = TopKDeferrer(expert_columns=prefixed, costs=fees).fit(Xt, y)
    assert list(est.entity_names_) == ["model", *prefixed]
