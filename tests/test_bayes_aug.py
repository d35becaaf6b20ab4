"""Tests of the Bayesian-augmentation (OPTIMA-style) estimators."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import copy
import math
import warnings

import numpy as np
import pytest
import sklearn
import torch
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.dummy import DummyRegressor
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import r2_score
from sklearn.model_selection import GridSearchCV, cross_val_score, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.neural_network import (
    BayesianAugmentationClassifier,
    BayesianAugmentationRegressor,
    TorchMLPClassifier,
    TorchMLPRegressor,
)
from sklearn_iclr26.neural_network._bayesian_augmentation_modules import (
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


def test_mixup_sample_draw_sends_no_data_gradient_to_alpha(cancer):
    # the authors' script draws Beta(alpha, alpha) with .sample(): the data
    # term does not reach alpha, which moves only through the KL
    torch.manual_seed(0)
    module = AugmentedMLPModule(
        4, 2, (8,), augmenter="mixup", mixup_draw="sample", dtype=torch.float64
    )
    loss = AugmentedLoss(kl_weight=0.0)
    X = torch.randn(16, 4, dtype=torch.float64)
    y = torch.randint(0, 2, (16,))
    module.train()
    value = loss(module(X), y).mean()
    aug = module.augmenter
    grads = torch.autograd.grad(value, [aug.q_mean, aug.q_log_std], allow_unused=True)
    assert all(g is None or float(g.abs().sum()) == 0 for g in grads)
    # in a fit, the KL alone keeps the posterior mean at the prior's centre
    # and pulls its std toward the prior's; rsample moves the mean
    X, y = cancer
    common = {"augmenter": "mixup", "max_iter": 30, "random_state": 0}
    sampled = BayesianAugmentationClassifier(mixup_draw="sample", **common).fit(X, y)
    post = sampled.augmentation_posterior_
    np.testing.assert_allclose(post["mean"], post["prior_mean"], atol=1e-12)
    assert post["std"][0] > 0.1
    rsampled = BayesianAugmentationClassifier(**common).fit(X, y)
    assert abs(rsampled.augmentation_posterior_["mean"][0] - post["prior_mean"]) > 0.01


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
    # aug_at_predict averages over noisy copies: different from the same
    # network without them, deterministic, and independent of the row batching
    noisy = clone(clf).set_params(aug_at_predict=True, n_aug_samples=3).fit(X, y)
    proba = noisy.predict_proba(X)
    off = copy.deepcopy(noisy).set_params(aug_at_predict=False).predict_proba(X)
    assert np.abs(proba - off).max() > 0.1
    np.testing.assert_array_equal(noisy.predict_proba(X), proba)
    with sklearn.config_context(working_memory=0.001):  # many small batches
        np.testing.assert_allclose(noisy.predict_proba(X), proba, rtol=1e-12)


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
    np.testing.assert_array_equal(a.elbo_history_, -np.asarray(a.loss_curve_))
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
    # within 5 points of a logistic regression on the same rows
    linear = LogisticRegression().fit(X, y).score(X, y)  # 0.985
    assert clf.score(X, y) >= linear - 0.05


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


def test_regressor_multioutput_mixup_beats_the_mean():
    X, y = load_diabetes(return_X_y=True)
    Y = np.c_[y, -y]
    X_train, X_test, Y_train, Y_test = train_test_split(X, Y, random_state=0)
    reg = BayesianAugmentationRegressor(augmenter="mixup", random_state=0, **FAST)
    reg.fit(X_train, Y_train)
    r2 = r2_score(Y_test, reg.predict(X_test), multioutput="raw_values")
    mean = DummyRegressor().fit(X_train, Y_train).predict(X_test)
    baseline = r2_score(Y_test, mean, multioutput="raw_values")  # about 0
    assert np.all(r2 >= baseline + 0.05), (r2, baseline)  # 0.13, 0.15


# --- relaxed categorical swap noise on one-hot blocks ---------------------


@pytest.fixture(scope="module")
def binned():
    """Six breast-cancer features cut into 4 quantile bins, one-hot encoded."""
    from sklearn.preprocessing import KBinsDiscretizer

    X, y = load_breast_cancer(return_X_y=True)
    cols = [0, 1, 20, 21, 22, 27]
    enc = KBinsDiscretizer(
        n_bins=4, encode="onehot-dense", quantile_method="averaged_inverted_cdf"
    )
    Z = enc.fit_transform(X[:200, cols])
    blocks = [list(range(4 * i, 4 * i + 4)) for i in range(len(cols))]
    return Z, y[:200], blocks


def _swap_module(augmenter="none", n_features=6, **kwargs):
    # columns 0-2 one block, 3-4 another, 5 continuous
    return AugmentedMLPModule(
        n_features,
        2,
        (8,),
        augmenter=augmenter,
        categorical_blocks=[[0, 1, 2], [3, 4]],
        category_frequencies=[[0.5, 0.3, 0.2], [0.6, 0.4]],
        dtype=torch.float64,
        **kwargs,
    )


def _one_hot_rows(n, seed=0):
    rng = np.random.RandomState(seed)
    X = np.zeros((n, 6))
    X[np.arange(n), rng.randint(0, 3, n)] = 1
    X[np.arange(n), 3 + rng.randint(0, 2, n)] = 1
    X[:, 5] = rng.standard_normal(n)
    return torch.as_tensor(X)


def test_data_term_sends_gradients_to_the_swap_probability():
    torch.manual_seed(0)
    module = _swap_module(init_swap_proba=0.3)
    loss = AugmentedLoss(kl_weight=0.0)  # data term only
    X, y = _one_hot_rows(32), torch.randint(0, 2, (32,))
    module.train()
    value = loss(module(X), y).mean()
    swap = module.swap
    g_mean, g_std = torch.autograd.grad(value, [swap.q_mean, swap.q_log_std])
    assert torch.all(torch.isfinite(g_mean)) and torch.all(g_mean != 0)
    assert torch.all(g_std != 0)


def test_swapped_blocks_are_relaxed_one_hot():
    torch.manual_seed(0)
    X = _one_hot_rows(500)
    for augmenter in ("none", "gaussian", "dropout"):
        module = _swap_module(augmenter, init_swap_proba=0.5)
        with torch.no_grad():
            X_aug, _ = module._augment(X)
        # each block sums to 1 in the relaxed draw, entries in [0, 1]
        for cols in ([0, 1, 2], [3, 4]):
            torch.testing.assert_close(
                X_aug[:, cols].sum(1), torch.ones(500, dtype=torch.float64)
            )
            assert float(X_aug[:, cols].min()) >= 0
        # the continuous augmenter acts on column 5 only
        if augmenter == "none":
            torch.testing.assert_close(X_aug[:, 5], X[:, 5])
        else:
            assert not torch.allclose(X_aug[:, 5], X[:, 5])
        if augmenter == "gaussian":  # one noise scale, for column 5
            assert module.augmenter.q_mean.shape == (1,)
    # relaxed (temperature 0.5) draws are not one-hot; in the hard limit they are
    module = _swap_module(init_swap_proba=0.5, swap_temperature=1e-6)
    with torch.no_grad():
        X_hard, _ = module._augment(X)
    np.testing.assert_array_equal(X_hard[:, :5].numpy(), X_hard[:, :5].round().numpy())
    assert not torch.equal(X_hard[:, :5], X[:, :5])  # some rows were swapped


def test_hard_swap_draws_follow_the_mixture():
    # Gumbel-max at temperature -> 0 samples exactly from (1 - p) x + p pi
    from sklearn_iclr26.neural_network._bayesian_augmentation_modules import (
        SwapAugmenter,
    )

    torch.manual_seed(0)
    swap = SwapAugmenter(
        [[0, 1, 2]], [[0.5, 0.3, 0.2]], 0.4, 0.0, False, 1.0, 1e-6, torch.float64
    )
    n = 20000
    X = torch.zeros(n, 3, dtype=torch.float64)
    X[:, 2] = 1
    proba = torch.full((n, 1), 0.4, dtype=torch.float64)
    freq = swap.apply(X, proba).mean(0).numpy()
    expected = 0.6 * np.array([0, 0, 1]) + 0.4 * np.array([0.5, 0.3, 0.2])
    # 5 binomial standard errors per category: fails with probability < 1e-5
    assert np.all(np.abs(freq - expected) < 5 * np.sqrt(expected * (1 - expected) / n))


def test_swap_kl_equals_closed_form():
    module = _swap_module(q_init_std=0.2, prior_scale=1.5)
    swap = module.swap
    with torch.no_grad():
        swap.q_mean.copy_(torch.tensor([0.3, -1.0], dtype=torch.float64))
        swap.q_log_std.copy_(torch.log(torch.tensor([0.4, 2.5], dtype=torch.float64)))
    m0 = math.log(0.1 / 0.9)  # logit of init_swap_proba
    by_hand = sum(
        math.log(1.5 / s) + (s**2 + (m - m0) ** 2) / (2 * 1.5**2) - 0.5
        for m, s in zip([0.3, -1.0], [0.4, 2.5])
    )
    assert math.isclose(float(swap.kl().detach()), by_hand, rel_tol=1e-12)
    # the objective carries the KL of both augmenters
    torch.manual_seed(0)
    module = _swap_module("gaussian")
    X, y = _one_hot_rows(16), torch.randint(0, 2, (16,))
    module.train()
    out = module(X)
    with_kl = AugmentedLoss(kl_weight=0.7, n_train=1000)(out, y)
    without = AugmentedLoss(kl_weight=0.0, n_train=1000)(out, y)
    total = module.augmenter.kl() + module.swap.kl()
    torch.testing.assert_close(with_kl - without, (0.7 * total / 1000).expand(16))


def test_without_prior_the_swap_probability_shrinks(binned):
    Z, y, blocks = binned
    common = {
        "augmenter": "none",
        "categorical_blocks": blocks,
        "init_swap_proba": 0.3,
        "max_iter": 150,
        "random_state": 0,
    }
    free = BayesianAugmentationClassifier(kl_weight=0.0, **common).fit(Z, y)
    prior = BayesianAugmentationClassifier(
        kl_weight=1.0, kl_scale="batch", prior_scale=0.5, **common
    ).fit(Z, y)
    p_free = free.augmentation_posterior_["swap_proba"].mean()
    p_prior = prior.augmentation_posterior_["swap_proba"].mean()
    assert p_free < 0.5 * 0.3  # shrinks toward 0 without the prior
    assert p_prior > p_free  # the prior holds it away from 0


def test_swap_blocks_by_name_determinism_and_predict(binned):
    pd = pytest.importorskip("pandas")
    Z, y, blocks = binned
    names = [f"f{j // 4}_bin{j % 4}" for j in range(Z.shape[1])]
    df = pd.DataFrame(Z, columns=names)
    named = [[names[j] for j in b] for b in blocks]
    params = {"init_swap_proba": 0.2, "random_state": 3, **FAST}
    a = BayesianAugmentationClassifier(categorical_blocks=named, **params).fit(df, y)
    b = BayesianAugmentationClassifier(categorical_blocks=blocks, **params).fit(Z, y)
    # names and positions are the same blocks; bit-identical under random_state
    np.testing.assert_array_equal(a.predict_proba(df), b.predict_proba(Z))
    for key in ("swap_proba", "swap_mean", "swap_std", "swap_prior_mean"):
        np.testing.assert_array_equal(
            a.augmentation_posterior_[key], b.augmentation_posterior_[key]
        )
        assert a.augmentation_posterior_[key].shape == (len(blocks),)
    assert [list(c) for c in a.categorical_blocks_] == blocks
    # all columns are in blocks: the Gaussian augmenter has nothing to act on
    assert a.augmentation_posterior_["strength"].shape == (0,)
    # off at predict time by default
    expected = torch.softmax(a.net_.module_.mlp(torch.as_tensor(Z)), 1)
    np.testing.assert_allclose(a.predict_proba(df), expected.detach().numpy())
    # aug_at_predict averages over swaps: deterministic, batching-invariant
    from sklearn import config_context

    c = clone(b).set_params(aug_at_predict=True, n_aug_samples=3).fit(Z, y)
    p = c.predict_proba(Z)
    clean = torch.softmax(c.net_.module_.mlp(torch.as_tensor(Z)), 1).detach()
    assert not np.allclose(p, clean.numpy())
    np.testing.assert_array_equal(c.predict_proba(Z), p)
    with config_context(working_memory=0.001):  # up to matmul rounding
        np.testing.assert_allclose(c.predict_proba(Z), p, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "blocks, match",
    [
        ([[0, 1, 2, 3], [3, 4, 5, 6]], "overlap"),
        ([[0, 1, 2, 3], [4, 5, 6, 99]], r"indices \[99\] outside"),
        ([[0, 1, 2]], "not one-hot"),  # a row with the 4th bin sums to 0
        ([[0]], "at least 2"),
        ([0, 1, 2, 3], "list of blocks"),
        ([["a", "b"]], "no string column names"),
        ([[0.0, 1.0, 2.0, 3.0]], r"column names \(str\) or column indices"),
    ],
)
def test_bad_categorical_blocks(binned, blocks, match):
    Z, y, _ = binned
    with pytest.raises((ValueError, TypeError), match=match):
        BayesianAugmentationClassifier(categorical_blocks=blocks, **FAST).fit(Z, y)


def test_bad_categorical_blocks_values_and_names(binned):
    pd = pytest.importorskip("pandas")
    Z, y, blocks = binned
    scaled = Z.copy()
    scaled[:, :4] *= 2.0  # 0/2 columns: not one-hot
    with pytest.raises(ValueError, match="not one-hot"):
        BayesianAugmentationClassifier(categorical_blocks=blocks, **FAST).fit(scaled, y)
    df = pd.DataFrame(Z, columns=[f"c{j}" for j in range(Z.shape[1])])
    with pytest.raises(ValueError, match=r"unknown columns \['zz'\]"):
        BayesianAugmentationClassifier(categorical_blocks=[["c0", "zz"]], **FAST).fit(
            df, y
        )
    with pytest.raises(ValueError, match="init_swap_proba"):
        BayesianAugmentationClassifier(
            categorical_blocks=blocks, init_swap_proba=0.0, **FAST
        ).fit(Z, y)
    # a fixed swap probability of 0 is allowed and leaves the blocks alone
    BayesianAugmentationClassifier(
        augmenter="none",
        categorical_blocks=blocks,
        init_swap_proba=0.0,
        learn_augmentation=False,
        q_init_std=0.0,
        **FAST,
    ).fit(Z, y)


def test_swap_regressor():
    X, y = load_diabetes(return_X_y=True)
    Z = np.c_[X, np.eye(3)[np.arange(len(y)) % 3]]
    reg = BayesianAugmentationRegressor(
        categorical_blocks=[[10, 11, 12]], random_state=0, **FAST
    ).fit(Z, y)
    posterior = reg.augmentation_posterior_
    assert posterior["strength"].shape == (10,)  # the continuous columns only
    # the swap probability is learned: it moved from its initial value
    # (0.1 -> 0.103 here), and the swap noise changed the fit
    assert posterior["swap_proba"].shape == (1,)
    assert abs(posterior["swap_proba"][0] - reg.init_swap_proba) > 1e-4
    plain = BayesianAugmentationRegressor(random_state=0, **FAST).fit(Z, y)
    assert not np.allclose(reg.predict(Z), plain.predict(Z))


def _gaussian_augmenter(n_features):
    """A float64 Gaussian augmenter (prior scale 1.5) with a posterior moved
    away from its initial value (seeded)."""
    torch.manual_seed(0)
    scale = torch.rand(n_features) + 0.5
    aug = Augmenter("gaussian", n_features, 0.3, 0.2, True, 1.5, scale, torch.float64)
    with torch.no_grad():
        aug.q_mean.add_(torch.randn(n_features, dtype=torch.float64))
        aug.q_log_std.add_(0.5 * torch.randn(n_features, dtype=torch.float64))
    return aug


def test_fused_gaussian_node_matches_the_unfused_expressions():
    # the training forward's one-node augmentation (values and hand-written
    # gradients) against the plain autograd expressions it replaces
    from torch.nn import functional as F

    aug = _gaussian_augmenter(5)
    X = torch.randn(7, 5, dtype=torch.float64)
    eps, noise = torch.randn(2, 7, 5, dtype=torch.float64).unbind(0)
    W = torch.randn(7, 5, dtype=torch.float64)
    params = [aug.q_mean, aug.q_log_std]

    X_aug, kl = aug.gaussian_noise(X, eps, noise)
    strength = aug.sample_strength(7, eps)
    X_ref, _ = aug.apply(X, strength, noise)
    assert torch.equal(X_aug, X_ref)  # same ops, same bits
    torch.testing.assert_close(kl, aug.kl(), rtol=1e-14, atol=0)
    for c_data, c_kl in ((1.0, 0.0), (0.0, 1.0), (1.0, 0.3)):
        X_aug, kl = aug.gaussian_noise(X, eps, noise)
        fused = torch.autograd.grad((W * X_aug).sum() * c_data + c_kl * kl, params)
        s = aug.q_log_std.exp()
        X_ref = X + F.softplus(aug.q_mean + s * eps) * aug.feature_scale * noise
        q = torch.distributions.Normal(aug.q_mean, s)
        p = torch.distributions.Normal(aug.prior_mean, 1.5)
        kl_ref = torch.distributions.kl_divergence(q, p).sum()
        ref = torch.autograd.grad((W * X_ref).sum() * c_data + c_kl * kl_ref, params)
        for g, r in zip(fused, ref):
            torch.testing.assert_close(g, r, rtol=1e-12, atol=1e-14)
    # only the KL used: the data output gets no gradient at all
    _, kl = aug.gaussian_noise(X, eps, noise)
    g_mean, g_std = torch.autograd.grad(kl, params)
    torch.testing.assert_close(g_mean, (aug.q_mean - aug.prior_mean) / 1.5**2)
    torch.testing.assert_close(g_std, aug.q_log_std.exp() ** 2 / 1.5**2 - 1)


def test_fused_gaussian_node_with_float32_draws():
    # training feeds float32 draws: the per-cell arithmetic runs in float32,
    # the output and the parameter gradients stay float64 and agree with the
    # float64 expressions on the same draws to float32 resolution
    aug = _gaussian_augmenter(6)
    X = torch.randn(400, 6, dtype=torch.float64)
    eps, noise = torch.randn(2, 400, 6).unbind(0)
    W = torch.randn(400, 6, dtype=torch.float64)
    params = [aug.q_mean, aug.q_log_std]
    X32, kl32 = aug.gaussian_noise(X, eps, noise)
    X64, kl64 = aug.gaussian_noise(X, eps.double(), noise.double())
    assert X32.dtype == torch.float64
    torch.testing.assert_close(X32, X64, rtol=0, atol=1e-6)
    assert not torch.equal(X32, X64)  # the float32 path did run
    g32 = torch.autograd.grad((W * X32).sum() + kl32, params)
    g64 = torch.autograd.grad((W * X64).sum() + kl64, params)
    for a, b in zip(g32, g64):
        assert a.dtype == torch.float64
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)


def test_gaussian_kl_node_gradcheck():
    from sklearn_iclr26.neural_network._bayesian_augmentation_modules import (
        _gaussian_kl,
    )

    torch.manual_seed(0)
    m = torch.randn(4, dtype=torch.float64, requires_grad=True)
    log_s = torch.randn(4, dtype=torch.float64, requires_grad=True)
    m0 = torch.randn(4, dtype=torch.float64)
    assert torch.autograd.gradcheck(
        lambda a, b: _gaussian_kl(a, b, m0, 0.7), (m, log_s)
    )


def test_fused_nodes_refuse_second_derivatives():
    # the hand-written backward passes are first-order only: double backward
    # raises instead of returning wrong second derivatives
    aug = Augmenter("gaussian", 3, 0.3, 0.2, True, 1.5, dtype=torch.float64)
    X = torch.randn(4, 3, dtype=torch.float64)
    eps, noise = torch.randn(2, 4, 3, dtype=torch.float64).unbind(0)
    X_aug, kl = aug.gaussian_noise(X, eps, noise)
    for value in (X_aug.sum() + kl, aug.kl()):
        (g,) = torch.autograd.grad(value, [aug.q_mean], create_graph=True)
        with pytest.raises(RuntimeError, match=r"once_differentiable|require grad"):
            torch.autograd.grad(g.sum(), [aug.q_mean])


def test_accuracy_under_noise_scorer(cancer):
    pd = pytest.importorskip("pandas")
    from sklearn_iclr26.metrics import get_scorer
    from sklearn_iclr26.neural_network._scorers import accuracy_under_noise

    X, y = cancer
    clf = BayesianAugmentationClassifier(random_state=0, **FAST).fit(X, y)
    assert accuracy_under_noise(clf, X, y, severity=0.0) == clf.score(X, y)
    scorer = get_scorer("accuracy_under_noise")
    assert scorer(clf, X, y) == accuracy_under_noise(clf, X, y, severity=0.5)
    # the noise is severity x the feature std on the scored rows, seed 0
    noisy = X + 0.5 * X.std(axis=0) * np.random.default_rng(0).standard_normal(X.shape)
    assert scorer(clf, X, y) == np.mean(clf.predict(noisy) == y)
    # a DataFrame stays a DataFrame (names kept: no feature-name warning)
    df = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    pipe = make_pipeline(StandardScaler(), clone(clf)).fit(df, y)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        noisy_df = pd.DataFrame(noisy, columns=df.columns)
        assert scorer(pipe, df, y) == np.mean(pipe.predict(noisy_df) == y)
    with pytest.raises(ValueError, match="must be numeric"):
        scorer(pipe, df.assign(city="a"), y)
    with pytest.raises(ValueError, match="severity"):
        accuracy_under_noise(clf, X, y, severity=-1)
    grid = GridSearchCV(
        BayesianAugmentationClassifier(random_state=0, **FAST),
        {"prior_scale": [0.5, 2.0]},
        scoring=scorer,
        cv=2,
    ).fit(X, y)
    best = clone(grid.best_estimator_)
    assert grid.best_score_ == pytest.approx(
        cross_val_score(best, X, y, scoring=scorer, cv=2).mean(), rel=1e-12
    )


def test_augmenter_lr_ratio_is_a_deprecated_spelling():
    # the one `lr` name left is renamed; the old spelling still works for one
    # release, with a FutureWarning, and trains bit-identically
    X, y = load_diabetes(return_X_y=True)
    X, y = X[:80], y[:80]
    params = {"max_iter": 3, "random_state": 0}
    new = BayesianAugmentationRegressor(augmenter_learning_rate_ratio=3.0, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new.fit(X, y)
    old = BayesianAugmentationRegressor(augmenter_lr_ratio=3.0, **params)
    with pytest.warns(FutureWarning, match="augmenter_learning_rate_ratio"):
        old.fit(X, y)
    np.testing.assert_array_equal(old.predict(X), new.predict(X))
    default = BayesianAugmentationRegressor(**params).fit(X, y)
    assert not np.array_equal(default.predict(X), new.predict(X))
