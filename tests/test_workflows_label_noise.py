"""Real tabular workflows through the label-noise correctors.

A raw DataFrame (string categoricals, string labels) goes through a Pipeline
with a name-based ColumnTransformer inside the corrector; sample weights are
routed to the Pipeline's final step; a fitted preprocessing is reused through
``FrozenEstimator``. Each test compares with the equivalent run on the
preprocessed numeric matrix, so it fails if ``X`` is altered on the way or a
weight is dropped.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import warnings

import numpy as np
import pandas as pd
import pytest
from lightgbm import LGBMClassifier
from sklearn.compose import ColumnTransformer
from sklearn.datasets import make_classification
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, StandardScaler

from sklearn_iclr26.datasets import make_label_noise
from sklearn_iclr26.label_noise import (
    ClassConditionalNoiseCorrector,
    InstanceNoiseCorrector,
)
from sklearn_iclr26.neural_network import TorchMLPClassifier


@pytest.fixture(scope="module")
def raw_frame():
    rng = np.random.RandomState(0)
    n = 400
    frame = pd.DataFrame(
        {
            "age": rng.uniform(18, 70, n),
            "income": rng.lognormal(10, 0.5, n),
            "region": rng.choice(["north", "south", "east", "west"], n),
            "sector": rng.choice(["public", "private"], n),
        }
    )
    logit = (
        0.08 * (frame["age"] - 40)
        + 1.5 * (frame["region"] == "north")
        - 1.0 * (frame["sector"] == "public")
        + 0.5 * rng.normal(size=n)
    )
    y = (logit > 0).astype(int).to_numpy()
    y_noisy, flipped = make_label_noise(y, kind="symmetric", rate=0.2, random_state=0)
    labels = np.array(["no", "yes"])
    return frame, labels[y_noisy], labels[y], flipped


def _preprocessor():
    # name-based columns: only a DataFrame can go through it
    return ColumnTransformer(
        [
            ("num", "passthrough", ["age", "income"]),
            ("cat", OneHotEncoder(sparse_output=False), ["region", "sector"]),
        ]
    )


def _lgbm():
    return LGBMClassifier(
        n_estimators=20, min_child_samples=5, n_jobs=1, verbose=-1, random_state=0
    )


def test_raw_dataframe_through_a_pipeline_equals_the_preprocessed_run(raw_frame):
    frame, y_noisy, _, _ = raw_frame
    numeric = _preprocessor().fit_transform(frame)
    cases = [
        (InstanceNoiseCorrector, {}, "decision_function"),
        (ClassConditionalNoiseCorrector, {"method": "forward"}, "predict_proba"),
        (ClassConditionalNoiseCorrector, {"method": "backward"}, "predict_proba"),
    ]
    for Corrector, params, method in cases:
        wrapped = Corrector(
            Pipeline([("prep", _preprocessor()), ("model", _lgbm())]),
            random_state=0,
            **params,
        ).fit(frame, y_noisy)
        plain = Corrector(_lgbm(), random_state=0, **params).fit(numeric, y_noisy)
        np.testing.assert_array_equal(wrapped.feature_names_in_, frame.columns)
        assert wrapped.n_features_in_ == 4
        np.testing.assert_array_equal(wrapped.classes_, ["no", "yes"])
        np.testing.assert_allclose(
            getattr(wrapped, method)(frame), getattr(plain, method)(numeric)
        )
        assert set(wrapped.predict(frame)) <= {"no", "yes"}
    # the corrected loss reached the Pipeline's LightGBM as its objective
    assert callable(wrapped.estimator_[-1].objective) is False  # backward: weights
    ndx = InstanceNoiseCorrector(
        Pipeline([("prep", _preprocessor()), ("model", _lgbm())]), random_state=0
    ).fit(frame, y_noisy)
    assert ndx.strategy_ == "objective" and callable(ndx.estimator_[-1].objective)


def test_raw_dataframe_cross_validation_with_string_labels(raw_frame):
    frame, y_noisy, _, _ = raw_frame
    clf = InstanceNoiseCorrector(
        make_pipeline(_preprocessor(), _lgbm()), random_state=0
    )
    scores = cross_val_score(clf, frame, y_noisy, cv=3)
    assert scores.shape == (3,) and np.all(np.isfinite(scores))


def test_torch_pipeline_inner_estimator(raw_frame):
    frame, y_noisy, _, _ = raw_frame
    prep = ColumnTransformer(
        [
            ("num", StandardScaler(), ["age", "income"]),
            ("cat", OneHotEncoder(sparse_output=False), ["region", "sector"]),
        ]
    )
    net = TorchMLPClassifier((8,), max_iter=15, random_state=0)
    wrapped = InstanceNoiseCorrector(make_pipeline(prep, net), random_state=0)
    wrapped.fit(frame, y_noisy)
    numeric = prep.fit_transform(frame)
    plain = InstanceNoiseCorrector(net, random_state=0).fit(numeric, y_noisy)
    assert wrapped.strategy_ == "objective"
    np.testing.assert_allclose(
        wrapped.decision_function(frame), plain.decision_function(numeric)
    )


def test_pipeline_sample_weight_reaches_the_final_step():
    rng = np.random.RandomState(1)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] + 0.5 * rng.normal(size=200) > 0).astype(int)
    w = rng.randint(0, 4, size=200).astype(float)  # zeros drop rows
    f = FunctionTransformer(np.tanh)
    T = np.array([[0.9, 0.1], [0.2, 0.8]])
    for Corrector, params in [
        (ClassConditionalNoiseCorrector, {"transition_matrix": T}),
        (InstanceNoiseCorrector, {}),
    ]:
        piped = Corrector(make_pipeline(f, LogisticRegression()), **params)
        piped.fit(X, y, sample_weight=w)
        bare = Corrector(LogisticRegression(), **params)
        bare.fit(np.tanh(X), y, sample_weight=w)
        np.testing.assert_array_equal(piped.estimator_[-1].coef_, bare.estimator_.coef_)
        unweighted = Corrector(make_pipeline(f, LogisticRegression()), **params)
        unweighted.fit(X, y)
        assert not np.allclose(
            unweighted.estimator_[-1].coef_, piped.estimator_[-1].coef_
        )
    # backward correction drops zero-weight rows: the same fit as without them
    keep = w > 0
    dropped = ClassConditionalNoiseCorrector(
        make_pipeline(f, LogisticRegression()), transition_matrix=T
    ).fit(X[keep], y[keep], sample_weight=w[keep])
    weighted = ClassConditionalNoiseCorrector(
        make_pipeline(f, LogisticRegression()), transition_matrix=T
    ).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(
        dropped.estimator_[-1].coef_, weighted.estimator_[-1].coef_, rtol=1e-10
    )


def test_pipeline_without_sample_weight_gets_a_true_message():
    from sklearn.neighbors import KNeighborsClassifier

    X = np.random.RandomState(0).normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    pipe = make_pipeline(StandardScaler(), KNeighborsClassifier())
    with pytest.raises(ValueError, match="final step 'kneighborsclassifier'"):
        InstanceNoiseCorrector(pipe).fit(X, y)
    with pytest.raises(ValueError, match="final step 'kneighborsclassifier'"):
        ClassConditionalNoiseCorrector(pipe).fit(X, y)


def test_frozen_preprocessor_as_transformer_and_clear_errors(raw_frame):
    frame, y_noisy, _, _ = raw_frame
    model = Pipeline([("prep", _preprocessor()), ("model", _lgbm())])
    default = InstanceNoiseCorrector(model, rho="cluster", random_state=0)
    default.fit(frame, y_noisy)
    deployed = _preprocessor().fit(frame)
    frozen = InstanceNoiseCorrector(
        model, rho="cluster", transformer=FrozenEstimator(deployed), random_state=0
    ).fit(frame, y_noisy)
    # the default transformer (the pipeline's head, fitted on X) is the same map
    np.testing.assert_array_equal(frozen.rho_, default.rho_)
    assert np.ptp(frozen.rho_) > 0
    # a noise model computing on non-numeric X without a transformer
    categorical = frame.astype({"region": "category", "sector": "category"})
    with pytest.raises(ValueError, match="transformer="):
        InstanceNoiseCorrector(_lgbm(), rho="reconstruction").fit(categorical, y_noisy)
    # a frozen inner model cannot be retrained with a corrected loss
    fitted = make_pipeline(_preprocessor(), _lgbm()).fit(frame, y_noisy)
    with pytest.raises(ValueError, match="FrozenEstimator cannot be retrained"):
        InstanceNoiseCorrector(FrozenEstimator(fitted)).fit(frame, y_noisy)


def test_class_conditional_default_is_scaled():
    X, y = make_classification(n_samples=300, n_features=5, random_state=0)
    X = X * np.array([1.0, 1e3, 1e-3, 1e4, 10.0]) + 1e3  # badly scaled raw data
    y_noisy, _ = make_label_noise(y, kind="symmetric", rate=0.1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ConvergenceWarning
        clf = ClassConditionalNoiseCorrector(random_state=0).fit(X, y_noisy)
    assert isinstance(clf.estimator_, Pipeline)
    assert isinstance(clf.estimator_[0], StandardScaler)
