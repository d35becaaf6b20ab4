"""Tests of the Bayesian-augmentation (OPTIMA-style) estimators."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import math
import pickle

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.neural_network import (
    BayesianAugmentationClassifier,
    BayesianAugmentationRegressor,
    TorchMLPClassifier,
    TorchMLPRegressor,
)
from sklearn_iclr26.neural_network._bayes_aug_modules import (
    AugmentedLoss,
    AugmentedMLPModule,
    Augmenter,
)

FAST = {"max_iter": 20}


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    return StandardScaler().fit_transform(X)[:200], y[:200]


@pytest.mark.parametrize("kind", ["gaussian", "mixup", "dropout"])
def test_data_term_sends_gradients_to_the_augmentation(kind):
    torch.manual_seed(0)
    module = AugmentedMLPModule(4, 2, (8,), augmenter=kind, dtype=torch.float64)
    loss = AugmentedLoss(kl_weight=0.0)  # data term only
    X = torch.randn(16, 4, dtype=torch.float64)
    y = torch.randint(0, 2, (16,))
    module.train()
    value = loss(module(X), y).mean()
    aug = module.augmenter
    g_mean, g_std = torch.autograd.grad(value, [aug.q_mean, aug.q_log_std])
    assert torch.all(torch.isfinite(g_mean)) and float(g_mean.abs().sum()) > 0
    assert float(g_std.abs().sum()) > 0


def test_kl_equals_closed_form():
    aug = Augmenter("gaussian", 3, 0.3, 0.2, True, 1.5, dtype=torch.float64)
    with torch.no_grad():
        aug.q_mean.copy_(torch.tensor([0.1, -2.0, 1.0], dtype=torch.float64))
        aug.q_log_std.copy_(
            torch.log(torch.tensor([0.2, 0.5, 1.7], dtype=torch.float64))
        )
    q = torch.distributions.Normal(aug.q_mean, aug.q_log_std.exp())
    p = torch.distributions.Normal(aug.prior_mean, 1.5)
    expected = torch.distributions.kl_divergence(q, p).sum()
    torch.testing.assert_close(aug.kl(), expected)
    # by hand: sum_j log(tau/s_j) + (s_j^2 + (m_j - m0)^2) / (2 tau^2) - 1/2
    m0 = math.log(math.expm1(0.3))
    by_hand = sum(
        math.log(1.5 / s) + (s**2 + (m - m0) ** 2) / (2 * 1.5**2) - 0.5
        for m, s in zip([0.1, -2.0, 1.0], [0.2, 0.5, 1.7])
    )
    assert math.isclose(float(aug.kl()), by_hand, rel_tol=1e-12)


@pytest.mark.parametrize("kl_scale, scale", [("n_samples", 1000), ("batch", 16)])
def test_objective_is_data_term_plus_scaled_kl(kl_scale, scale):
    torch.manual_seed(0)
    module = AugmentedMLPModule(4, 2, (8,), augmenter="gaussian", dtype=torch.float64)
    X = torch.randn(16, 4, dtype=torch.float64)
    y = torch.randint(0, 2, (16,))
    module.train()
    out = module(X)
    with_kl = AugmentedLoss(kl_weight=0.7, kl_scale=kl_scale, n_train=1000)(out, y)
    without = AugmentedLoss(kl_weight=0.0, n_train=1000)(out, y)
    torch.testing.assert_close(
        with_kl - without, (0.7 * module.augmenter.kl() / scale).expand(16)
    )


def test_augmentation_is_off_at_predict_by_default(cancer):
    X, y = cancer
    clf = BayesianAugmentationClassifier(init_strength=2.0, random_state=0, **FAST).fit(
        X, y
    )
    module = clf.net_.module_
    expected = torch.softmax(module.mlp(torch.as_tensor(X)), 1).detach().numpy()
    np.testing.assert_allclose(clf.predict_proba(X), expected, rtol=1e-12)
    # aug_at_predict averages over noisy copies: different, deterministic,
    # and independent of the row batching
    noisy = clone(clf).set_params(aug_at_predict=True, n_aug_samples=3).fit(X, y)
    assert not np.allclose(noisy.predict_proba(X), noisy._raw_decision(X) * 0)
    np.testing.assert_array_equal(noisy.predict_proba(X), noisy.predict_proba(X))


def test_zero_augmentation_is_the_plain_mlp(cancer):
    X, y = cancer
    mlp = TorchMLPClassifier(random_state=0, alpha=1e-3, **FAST).fit(X, y)
    for params in (
        {"augmenter": "none"},
        {"init_strength": 0.0, "learn_augmentation": False, "q_init_std": 0.0},
    ):
        clf = BayesianAugmentationClassifier(
            random_state=0, alpha=1e-3, **params, **FAST
        ).fit(X, y)
        np.testing.assert_array_equal(clf.predict_proba(X), mlp.predict_proba(X))
    Xr, yr = load_diabetes(return_X_y=True)
    reg = BayesianAugmentationRegressor(augmenter="none", random_state=0, **FAST)
    ref = TorchMLPRegressor(random_state=0, **FAST).fit(Xr, yr)
    # 1/2 squared error vs MSE: Adam is invariant to the factor up to its eps
    np.testing.assert_allclose(reg.fit(Xr, yr).predict(Xr), ref.predict(Xr), rtol=1e-4)


def test_without_prior_the_strength_shrinks(cancer):
    X, y = cancer
    common = {"init_strength": 0.5, "max_iter": 150, "random_state": 0}
    free = BayesianAugmentationClassifier(kl_weight=0.0, **common).fit(X, y)
    prior = BayesianAugmentationClassifier(
        kl_weight=1.0, kl_scale="batch", prior_scale=0.5, **common
    ).fit(X, y)
    s_free = free.augmentation_posterior_["strength"].mean()
    s_prior = prior.augmentation_posterior_["strength"].mean()
    assert s_free < 0.5 * 0.5  # shrinks toward 0 without the prior
    assert s_prior > s_free  # the prior holds it away from 0


def test_augmenter_parameter_group(cancer):
    X, y = cancer
    clf = BayesianAugmentationClassifier(
        alpha=0.01, learning_rate_init=3e-3, random_state=0, max_iter=2
    ).fit(X, y)
    groups = clf.net_.optimizer_.param_groups
    aug_ids = {id(p) for p in clf.net_.module_.augmenter.parameters()}
    aug_groups = [g for g in groups if {id(p) for p in g["params"]} & aug_ids]
    net_groups = [g for g in groups if not {id(p) for p in g["params"]} & aug_ids]
    assert len(aug_groups) == 1 and len(net_groups) == 1
    assert {id(p) for p in aug_groups[0]["params"]} == aug_ids
    assert math.isclose(aug_groups[0]["lr"], 10 * 3e-3)
    assert aug_groups[0]["weight_decay"] == 0.0
    assert math.isclose(net_groups[0]["lr"], 3e-3)
    assert net_groups[0]["weight_decay"] == 0.01


def test_fitted_attributes_and_determinism(cancer):
    X, y = cancer
    a = BayesianAugmentationClassifier(random_state=1, **FAST).fit(X, y)
    b = BayesianAugmentationClassifier(random_state=1, **FAST).fit(X, y)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    np.testing.assert_array_equal(
        a.augmentation_posterior_["mean"], b.augmentation_posterior_["mean"]
    )
    assert a.elbo_history_.shape == (20,)
    np.testing.assert_array_equal(a.elbo_history_, -a.loss_curve_)
    post = a.augmentation_posterior_
    assert post["strength"].shape == post["mean"].shape == (X.shape[1],)
    assert np.all(post["std"] > 0)


@pytest.mark.parametrize(
    "params",
    [
        {"augmenter": "mixup"},
        {"augmenter": "dropout", "aug_at_predict": True, "n_aug_samples": 2},
        {"likelihood": "avg_func", "n_aug_samples": 3},
        {  # Augerino-style
            "kl_weight": 0.0,
            "q_init_std": 0.0,
            "strength_reward": 0.01,
            "aug_at_predict": True,
            "n_aug_samples": 4,
        },
        {"learn_augmentation": False, "q_init_std": 0.0, "init_strength": 0.3},
    ],
)
def test_settings_fit_and_predict(cancer, params):
    X, y = cancer
    clf = BayesianAugmentationClassifier(random_state=0, **FAST, **params).fit(X, y)
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(1), 1)
    assert clf.score(X, y) > 0.8


def test_fixed_strength_stays_fixed(cancer):
    X, y = cancer
    clf = BayesianAugmentationClassifier(
        learn_augmentation=False, q_init_std=0.1, init_strength=0.3, **FAST
    ).fit(X, y)
    np.testing.assert_allclose(clf.augmentation_posterior_["strength"], 0.3)
    np.testing.assert_allclose(clf.augmentation_posterior_["std"], 0.1)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"augmenter": "rotation"}, "augmenter"),
        ({"prior_scale": 0.0}, "prior_scale"),
        ({"learning_rate_init": 0.0}, "learning_rate_init"),
        ({"n_aug_samples": 0}, "n_aug_samples"),
        ({"q_init_std": 0.0}, "kl_weight=0"),
        ({"augmenter": "mixup", "aug_at_predict": True}, "mixup"),
        ({"augmenter": "dropout", "init_strength": 1.0}, "rate"),
        ({"init_strength": 0.0}, "positive"),
    ],
)
def test_bad_parameters(cancer, params, match):
    X, y = cancer
    with pytest.raises(ValueError, match=match):
        BayesianAugmentationClassifier(**FAST, **params).fit(X, y)


def test_non_finite_input_rejected(cancer):
    X, y = cancer
    X = X.copy()
    X[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        BayesianAugmentationClassifier(**FAST).fit(X, y)


def test_regressor_multioutput_and_mixup():
    X, y = load_diabetes(return_X_y=True)
    Y = np.c_[y, -y]
    reg = BayesianAugmentationRegressor(augmenter="mixup", random_state=0, **FAST)
    assert reg.fit(X, Y).predict(X).shape == (len(y), 2)


def test_verbose_and_pickle_gridsearch(cancer, capsys):
    X, y = cancer
    BayesianAugmentationClassifier(verbose=1, max_iter=3).fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith("[BayesianAugmentationClassifier] epoch 1/3")
    pipe = make_pipeline(
        StandardScaler(), BayesianAugmentationClassifier(random_state=0, **FAST)
    )
    search = GridSearchCV(
        pipe, {"bayesianaugmentationclassifier__kl_weight": [0.0, 1.0]}, cv=2
    ).fit(X, y)
    fitted = search.best_estimator_
    loaded = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(loaded.predict_proba(X), fitted.predict_proba(X))
