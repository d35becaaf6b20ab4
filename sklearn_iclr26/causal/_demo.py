"""Demo rows for the causal family (see ``python -m sklearn_iclr26.demo``)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

__all__ = ["run_demo"]


def run_demo():
    """CCO attention gate, Prism backdoor adjustment and the G-learner on real data.

    * CCO: :class:`TabularAttentionClassifier` over the three feature groups
      of breast_cancer (means, standard errors, worst values) against a
      logistic regression (the exact Algorithm 1, ``TwoKeyAttentionRegressor``,
      only runs on the synthetic causal chain, so it is not in the demo).
    * Prism: :class:`BackdoorAdjustedRegressor` (context ``age, sex``,
      adjusted prediction) on diabetes with the subgroup shift of
      ``benchmarks/prism_reproduction.py`` (70 % of one sex, 20 % of the
      other in training), against a torch MLP of the same width.
    * G-learner: :class:`GeodesicCATERegressor` on IHDP (real covariates,
      simulated surface B outcomes, 3 replications), mean sqrt(PEHE) against
      the T- and X-learner with the same outcome model.
    """
    return _cco_rows() + _prism_rows() + _geodesic_rows()


def _cco_rows():
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    from sklearn_iclr26.causal import TabularAttentionClassifier

    data = load_breast_cancer(as_frame=True)
    names = list(data.feature_names)
    groups = {
        "mean": [c for c in names if c.startswith("mean ")],
        "error": [c for c in names if c.endswith(" error")],
        "worst": [c for c in names if c.startswith("worst ")],
    }
    X_tr, X_te, y_tr, y_te = train_test_split(
        data.data, data.target, test_size=0.3, stratify=data.target, random_state=0
    )
    scaler = StandardScaler().set_output(transform="pandas").fit(X_tr)
    X_tr, X_te = scaler.transform(X_tr), scaler.transform(X_te)
    attention = TabularAttentionClassifier(groups, max_iter=30, random_state=0)
    attention.fit(X_tr, y_tr)
    logistic = LogisticRegression(max_iter=1000).fit(X_tr, y_tr)
    weights = attention.attention_weights(X_te).mean(axis=0)
    top = attention.group_names_[int(np.argmax(weights))]
    return [
        {
            "method": "CCO",
            "estimator": "TabularAttentionClassifier(3 feature groups)",
            "dataset": "breast_cancer",
            "metric": f"test accuracy (most attended group: {top})",
            "value": float(attention.score(X_te, y_te)),
            "baseline": "LogisticRegression",
            "baseline_value": float(logistic.score(X_te, y_te)),
        }
    ]


def _prism_rows():
    from sklearn.datasets import load_diabetes

    from sklearn_iclr26.causal import BackdoorAdjustedRegressor
    from sklearn_iclr26.utils._torch_mlp_regressor import TorchMLPRegressor

    data = load_diabetes(as_frame=True)
    X, y = data.data, data.target.to_numpy()
    group = (X["sex"] > X["sex"].mean()).to_numpy()
    rng = np.random.RandomState(0)
    a = rng.permutation(np.flatnonzero(group))
    b = rng.permutation(np.flatnonzero(~group))
    n_a, n_b = int(0.7 * len(a)), int(0.2 * len(b))
    train = np.r_[a[:n_a], b[:n_b]]
    X = (X - X.iloc[train].mean()) / X.iloc[train].std()
    mean, std = y[train].mean(), y[train].std()
    z = (y - mean) / std  # fit on a standardized target, score in original units
    prism = BackdoorAdjustedRegressor(
        {"context": ["age", "sex"]},
        predict_mode="adjusted",
        max_iter=100,
        random_state=0,
    ).fit(X.iloc[train], z[train])
    mlp = TorchMLPRegressor(
        (32, 32), batch_size=256, learning_rate_init=1e-3, max_iter=100, random_state=0
    ).fit(X.iloc[train], z[train])
    rows = []
    for split, idx in (("majority sex", a[n_a:]), ("shifted: minority sex", b[n_b:])):
        mse = [
            float(np.mean((m.predict(X.iloc[idx]) * std + mean - y[idx]) ** 2))
            for m in (prism, mlp)
        ]
        rows.append(
            {
                "method": "Prism",
                "estimator": "BackdoorAdjustedRegressor(context age+sex, adjusted)",
                "dataset": "diabetes, sex subgroup shift",
                "metric": f"test MSE, {split}",
                "value": mse[0],
                "baseline": "TorchMLPRegressor((32, 32))",
                "baseline_value": mse[1],
            }
        )
    return rows


def _geodesic_rows():
    import warnings

    from sklearn.ensemble import HistGradientBoostingRegressor

    from sklearn_iclr26.causal import (
        GeodesicCATERegressor,
        TLearnerRegressor,
        XLearnerRegressor,
        pehe_score,
    )
    from sklearn_iclr26.datasets import load_ihdp

    model = HistGradientBoostingRegressor(max_iter=100, max_leaf_nodes=15)
    names = ("G", "T-learner", "X-learner")
    pehe = dict.fromkeys(names, 0.0)
    n_reps = 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # overlap warnings
        for rep in range(n_reps):
            X, y, t, tau = load_ihdp(surface="B", random_state=rep, return_X_y=True)
            learners = (
                GeodesicCATERegressor(model, random_state=rep),
                TLearnerRegressor(model, random_state=rep),
                XLearnerRegressor(model, random_state=rep),
            )
            for name, learner in zip(names, learners):
                learner.fit(X, y, treatment=t)
                pehe[name] += float(pehe_score(tau, learner.predict(X))) / n_reps
    return [
        {
            "method": "Wasserstein-geodesic CATE",
            "estimator": "GeodesicCATERegressor(HistGradientBoosting)",
            "dataset": f"IHDP surface B (real covariates), {n_reps} replications",
            "metric": "mean sqrt(PEHE), in-sample (lower is better)",
            "value": pehe["G"],
            "baseline": name,
            "baseline_value": pehe[name],
        }
        for name in ("T-learner", "X-learner")
    ]
