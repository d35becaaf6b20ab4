"""Tests of the crowding-out (CCO) models and the causal-chain generator."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.linear_model import LinearRegression

from sklearn_iclr26.causal import (
    TabularAttentionClassifier,
    TabularAttentionRegressor,
    TwoKeyAttentionRegressor,
)
from sklearn_iclr26.causal._two_key_attention import algorithm1_directions
from sklearn_iclr26.datasets import make_background_confounding, make_causal_chain
from sklearn_iclr26.datasets._spurious import causal_chain_conditions

D = 5
GROUPS = (list(range(D)), list(range(D, 2 * D)))


def _tokens(model, X):
    return model._tokens(np.asarray(X, dtype=np.float64))


@pytest.mark.parametrize("groups", [GROUPS, None])
def test_algorithm1_directions_equal_autograd(groups):
    import torch

    X, y = make_causal_chain(n_samples=50, n_features=D, random_state=0)
    model = TwoKeyAttentionRegressor(groups, max_iter=30, random_state=0).fit(X, y)
    tokens = _tokens(model, X)
    rng = np.random.RandomState(1)
    w = model.w_ + 0.1 * rng.normal(size=model.w_.shape)
    v = model.v_ + 0.1 * rng.normal(size=model.v_.shape)
    g_w, g_v, _ = algorithm1_directions(tokens, y, w, v)

    T = torch.as_tensor(tokens)
    wt = torch.tensor(w, requires_grad=True)
    vt = torch.tensor(v, requires_grad=True)
    p = torch.softmax(T @ vt, dim=1)
    h = (p[:, :, None] * T).sum(1)
    loss = 0.5 * ((h @ wt**2 - torch.as_tensor(y)) ** 2).mean()
    grad_w, grad_v = torch.autograd.grad(loss, (wt, vt))
    # the w update is half the gradient (the factor 2 lives in the step size)
    assert_allclose(2 * g_w, grad_w.numpy(), rtol=1e-10, atol=1e-12)
    assert_allclose(g_v, grad_v.numpy(), rtol=1e-10, atol=1e-12)


def test_two_key_attention_is_the_sigmoid_of_the_token_difference():
    X, y = make_causal_chain(n_samples=100, n_features=D, random_state=0)
    model = TwoKeyAttentionRegressor(GROUPS, max_iter=200, random_state=0).fit(X, y)
    tokens = _tokens(model, X)
    expected = 1 / (1 + np.exp(-((tokens[:, 0] - tokens[:, 1]) @ model.v_)))
    assert_allclose(model.attention(X)[:, 0], expected, rtol=1e-12)
    h = expected[:, None] * tokens[:, 0] + (1 - expected[:, None]) * tokens[:, 1]
    assert_allclose(model.predict(X), h @ model.w_**2, rtol=1e-12)


@pytest.mark.parametrize("schedule", ["simultaneous", "staged"])
def test_positional_coordinates_of_w_stay_zero(schedule):
    X, y = make_causal_chain(n_samples=300, n_features=D, random_state=0)
    model = TwoKeyAttentionRegressor(
        GROUPS, max_iter=600, schedule=schedule, random_state=0
    ).fit(X, y)
    assert model.w_history_.shape == (601, 4 + D)
    assert np.all(model.w_history_[:, :4] == 0)
    assert_allclose(model.w_history_[0, 4:], 0.1)
    assert model.attention_history_.shape == (601, 2)
    assert_allclose(model.attention_history_[0], 0.5)


def test_staged_schedule_phases():
    X, y = make_causal_chain(n_samples=300, n_features=D, random_state=0)
    model = TwoKeyAttentionRegressor(
        GROUPS, max_iter=900, schedule="staged", random_state=0
    ).fit(X, y)
    first, second = model.schedule_switches_
    # phase 1 (w only) ends when w_1 reaches 1/4 or after max_iter // 3 steps
    assert model.w_history_[first, 4] >= 0.25 or first == 300
    assert np.all(model.w_history_[first - 1, 4] < 0.25) or first == 300
    # before the switch the attention stays at 1/2 (v = 0); in phase 2 w is fixed
    assert_allclose(model.attention_history_[:first], 0.5)
    assert np.all(model.w_history_[first : second + 1] == model.w_history_[first])
    assert second - first == 300


def _regime(noise_z, strength, seed, n_train=4000):
    X, y = make_causal_chain(
        n_train,
        D,
        descendant_noise=noise_z,
        descendant_strength=strength,
        random_state=seed,
    )
    model = TwoKeyAttentionRegressor(GROUPS, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # gate saturation
        model.fit(X, y)
    X_flip, y_flip = make_causal_chain(
        2000,
        D,
        descendant_noise=noise_z,
        descendant_strength=strength,
        shift="flip",
        random_state=seed + 100,
    )
    return model, X, y, X_flip, y_flip


@pytest.mark.parametrize("seed", range(5))
def test_cause_dominant_regime_crowds_out_the_descendant(seed):
    # noise_z = 3, C = 0.3 (the note's sanity run; sigma^2 = 1)
    model, X, y, X_flip, y_flip = _regime(3.0, 0.3, seed)
    assert model.attention(X)[:, 0].mean() >= 0.9
    assert np.mean((model.predict(X_flip) - y_flip) ** 2) <= 2.0
    # OLS on [x, z] keeps a constant share of weight on z (Example 25); in
    # this regime (measured: share ~0.03, flipped MSE ~1.3) that share does
    # not hurt OLS under the flip more than the gate's leftover 1 - p does, so
    # only the share is asserted
    ols = LinearRegression().fit(X, y)
    assert np.all(ols.coef_[D:] > 0.01)
    z_share = np.abs(ols.coef_[D:]).sum() / np.abs(ols.coef_).sum()
    assert z_share > 0.02


# the condition-satisfying generator: bounded laws, w* = e_1 (sigma^2 = 1/3)
BOUNDED = {"law": "bounded", "descendant_strength": 0.2, "descendant_noise": 0.5}


@pytest.mark.parametrize("d", [5, 10])
def test_causal_chain_conditions(d):
    # the Gaussian generator breaks Condition 2 (sign stability on ~75 % of
    # rows, no margin) and, with the paper's coefficients, Condition 1
    gauss = causal_chain_conditions(d, n_draws=50_000)
    assert not gauss["cond1"] and not gauss["cond2"]
    assert 0.70 < gauss["sign_stable"] < 0.80
    assert gauss["margin"] == 0
    bounded = causal_chain_conditions(d, n_draws=50_000, **BOUNDED)
    assert bounded["cond1"] and bounded["cond2"]
    assert bounded["s1_eff"] > bounded["cond1_rhs"] + 1
    assert bounded["min_gap"] > 1.5
    # by the law's bounds: x_1 - z_1 >= 0.8 * 3 - 0.2 - 0.5
    assert bounded["min_gap"] >= 1.7 - 1e-12


@pytest.mark.parametrize("seed", range(3))
def test_staged_schedule_crowds_out_when_the_conditions_hold(seed):
    # the paper's mechanism (Theorem 1, Corollary 1) on a law meeting
    # Conditions 1-2: the staged schedule puts the gate on the cause and the
    # flipped-mechanism loss stays at sigma^2, while OLS on [x, z] relies on z
    # (Example 25); "standard" simultaneous GD does not crowd out here
    sigma2 = 1 / 3
    X, y = make_causal_chain(4000, D, random_state=seed, **BOUNDED)
    X_flip, y_flip = make_causal_chain(
        5000, D, shift="flip", random_state=seed + 200, **BOUNDED
    )

    def fit(schedule):
        model = TwoKeyAttentionRegressor(GROUPS, schedule=schedule, random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # gate saturation
            return model.fit(X, y)

    staged = fit("staged")
    assert staged.attention(X)[:, 0].mean() >= 0.99
    assert np.mean((staged.predict(X_flip) - y_flip) ** 2) <= 1.1 * sigma2
    ols = LinearRegression().fit(X, y)
    assert np.mean((ols.predict(X_flip) - y_flip) ** 2) >= 10 * sigma2
    simultaneous = fit("simultaneous")
    assert simultaneous.attention(X)[:, 0].mean() < 0.9
    assert np.mean((simultaneous.predict(X_flip) - y_flip) ** 2) >= 5 * sigma2


def test_each_schedule_uses_its_own_v_step():
    X, y = make_causal_chain(300, D, random_state=0)

    def fit(schedule, **kw):
        model = TwoKeyAttentionRegressor(
            GROUPS, max_iter=300, schedule=schedule, random_state=0, **kw
        )
        return model.fit(X, y).v_

    assert_array_equal(fit("staged"), fit("staged", v_learning_rate=1e-1))
    assert not np.array_equal(fit("staged"), fit("staged", staged_v_learning_rate=1e-3))
    assert_array_equal(
        fit("simultaneous"), fit("simultaneous", staged_v_learning_rate=1e-1)
    )


def test_make_causal_chain_bounded_law():
    X, y = make_causal_chain(5000, 4, noise=0.5, random_state=0, **BOUNDED)
    x, z = X[:, :4], X[:, 4:]
    assert np.all((x[:, 0] >= 3) & (x[:, 0] <= 4))
    assert np.all(np.abs(x[:, 1:]) <= 1)
    # w* = e_1: y - x_1 is the noise, uniform on [-0.5, 0.5]
    assert np.all(np.abs(y - x[:, 0]) <= 0.5)
    assert abs(np.var(y - x[:, 0]) - 0.25 / 3) < 0.01
    assert np.all(np.abs(z - 0.2 * y[:, None]) <= 0.5)


@pytest.mark.parametrize("seed", range(3))
def test_descendant_dominant_regime_keeps_attention_low(seed):
    model, X, *_ = _regime(1.0, 1.0, seed)
    assert model.attention(X)[:, 0].mean() <= 0.5


def test_random_state_is_bit_identical_and_seeds_differ():
    X, y = make_causal_chain(n_samples=300, n_features=D, random_state=0)
    a = TwoKeyAttentionRegressor(GROUPS, max_iter=300, random_state=3).fit(X, y)
    b = TwoKeyAttentionRegressor(GROUPS, max_iter=300, random_state=3).fit(X, y)
    assert_array_equal(a.w_history_, b.w_history_)
    assert_array_equal(a.predict(X), b.predict(X))
    c = TwoKeyAttentionRegressor(GROUPS, max_iter=300, random_state=4).fit(X, y)
    assert not np.array_equal(a.w_history_, c.w_history_)


def test_two_key_bad_input():
    X, y = make_causal_chain(n_samples=100, n_features=D, random_state=0)
    with pytest.raises(ValueError, match="equal width"):
        TwoKeyAttentionRegressor(([0, 1], [5, 6, 7]), max_iter=5).fit(X, y)
    with pytest.raises(ValueError, match="overlap"):
        TwoKeyAttentionRegressor(([0, 1], [1, 2]), max_iter=5).fit(X, y)
    with pytest.raises(ValueError, match="at least two groups"):
        TwoKeyAttentionRegressor(([0, 1],), max_iter=5).fit(X, y)
    for name in ("w_learning_rate", "v_learning_rate"):
        with pytest.raises(ValueError, match=name):
            TwoKeyAttentionRegressor(GROUPS, **{name: 0.0}).fit(X, y)
        with pytest.raises(ValueError, match=name):
            TwoKeyAttentionRegressor(GROUPS, **{name: -1e-3}).fit(X, y)
    X_inf = X.copy()
    X_inf[3, 2] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        TwoKeyAttentionRegressor(GROUPS, max_iter=5).fit(X_inf, y)
    with pytest.raises(ValueError, match="diverged"):
        TwoKeyAttentionRegressor(GROUPS, w_learning_rate=10.0, max_iter=50).fit(
            X * 100, y
        )


def test_two_key_on_a_target_in_grams_names_the_cause():
    """A real regression target of another scale (a body mass in grams, as in
    the practitioner audit) makes Algorithm 1's fixed steps blow up; the error
    says that the model is the paper's Algorithm 1, not a general regressor,
    and that the scale of y is the cause (the features are standardised)."""
    rng = np.random.RandomState(0)
    X = rng.normal(size=(300, 3))
    y = 4200.0 + 500.0 * X[:, 0] + rng.normal(scale=100.0, size=300)
    with pytest.raises(
        ValueError,
        match=r"diverged.*not a general-purpose regressor.*4\.2\de\+03 for y",
    ):
        TwoKeyAttentionRegressor(random_state=0).fit(X, y)


def test_two_key_refuses_the_constant_zero_predictor():
    """The readout h^T (w * w) is non-negative on non-negative tokens: a
    negative target shrinks w towards 0 at every step, and the fit would
    predict 0 everywhere; it raises instead of returning that predictor."""
    rng = np.random.RandomState(0)
    X = np.abs(rng.normal(size=(200, 4))) + 0.5
    y = -X.sum(axis=1)
    with pytest.raises(ValueError, match="collapsed to the constant-0 predictor"):
        TwoKeyAttentionRegressor(random_state=0).fit(X, y)
    # the rule: all-zero predictions raise when the constant 0 has a training
    # R^2 below -0.1 (here -mean^2 / var = -0.25), and only warn on a target of
    # mean ~0, where 0 is as good as any constant (-0.01)
    from sklearn_iclr26.causal._two_key_attention import _check_not_collapsed

    y = rng.normal(size=200)
    y = (y - y.mean()) / y.std()
    zeros = np.zeros(200)
    with pytest.raises(ValueError, match="collapsed"):
        _check_not_collapsed(zeros, y + 0.5)
    with pytest.warns(UserWarning, match="collapsed"):
        _check_not_collapsed(zeros, y + 0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _check_not_collapsed(zeros + 1e-3, y + 0.5)  # not all zero: nothing


def test_two_key_groups_by_name():
    import pandas as pd

    X, y = make_causal_chain(n_samples=200, n_features=2, random_state=0)
    df = pd.DataFrame(X[:, [2, 0, 3, 1]], columns=["z1", "x1", "z2", "x2"])
    by_name = TwoKeyAttentionRegressor(
        (["x1", "x2"], ["z1", "z2"]), max_iter=200, random_state=0
    ).fit(df, y)
    by_index = TwoKeyAttentionRegressor(
        ([0, 1], [2, 3]), max_iter=200, random_state=0
    ).fit(X, y)
    assert_array_equal(by_name.w_history_, by_index.w_history_)
    assert_array_equal(by_name.predict(df), by_index.predict(X))


def test_saturation_warning():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(200, 2))
    X[:, 0] *= 40  # the key difference is huge: one step saturates the gate
    y = X[:, 0]
    with pytest.warns(UserWarning, match="saturates"):
        TwoKeyAttentionRegressor(
            n_positional=1, v_learning_rate=1.0, max_iter=20, random_state=0
        ).fit(X, y)


def test_two_key_attention_is_a_distribution_over_the_keys():
    # clone, pickle and GridSearch: tests/test_common_contracts.py
    X, y = make_causal_chain(n_samples=300, n_features=2, random_state=0)
    fitted = TwoKeyAttentionRegressor(max_iter=200, random_state=0).fit(X, y)
    assert fitted.attention(X).shape == (300, 4)  # per-feature keys
    assert_allclose(fitted.attention(X).sum(axis=1), 1.0)


# -- tabular attention ------------------------------------------------------


@pytest.mark.parametrize("Est", [TabularAttentionClassifier, TabularAttentionRegressor])
def test_tabular_attention_shapes_and_seed(Est):
    X, y = make_causal_chain(n_samples=200, n_features=3, random_state=0)
    if Est is TabularAttentionClassifier:
        y = (y > np.median(y)).astype(int)
    params = {"feature_groups": [[0, 1, 2], [3, 4, 5]], "max_iter": 20}
    a = Est(random_state=0, **params).fit(X, y)
    b = Est(random_state=0, **params).fit(X, y)
    weights = a.attention_weights(X)
    assert weights.shape == (200, 2)
    assert_allclose(weights.sum(axis=1), 1.0)
    assert_array_equal(weights, b.attention_weights(X))
    method = "predict_proba" if Est is TabularAttentionClassifier else "predict"
    assert_array_equal(getattr(a, method)(X), getattr(b, method)(X))
    per_feature = Est(max_iter=5, random_state=0).fit(X, y)
    assert per_feature.attention_weights(X).shape == (200, 6)
    assert_array_equal(per_feature.group_names_, np.arange(6))


def test_tabular_attention_single_group_has_attention_one():
    X, y = make_causal_chain(n_samples=100, n_features=2, random_state=0)
    reg = TabularAttentionRegressor(
        feature_groups={"all": [0, 1, 2, 3]}, max_iter=10, random_state=0
    ).fit(X, y)
    assert_array_equal(reg.attention_weights(X), 1.0)
    assert list(reg.group_names_) == ["all"]


def test_tabular_attention_groups_by_name_and_errors():
    import pandas as pd

    X, y = make_causal_chain(n_samples=150, n_features=2, random_state=0)
    y = (y > np.median(y)).astype(int)
    df = pd.DataFrame(X, columns=["x1", "x2", "z1", "z2"])
    clf = TabularAttentionClassifier(
        feature_groups={"cause": ["x1", "x2"], "descendant": ["z1", "z2"]},
        max_iter=10,
        random_state=0,
    ).fit(df, y)
    with warnings.catch_warnings():
        # fitting on a DataFrame warns of nothing (no feature-name mismatch)
        warnings.simplefilter("error")
        clf = clone(clf).fit(df, y)
    assert [list(g) for g in clf.groups_] == [[0, 1], [2, 3]]
    assert clf.predict(df).shape == (150,)
    with pytest.raises(ValueError, match="unknown columns"):
        TabularAttentionClassifier(feature_groups=[["x1"], ["w"]]).fit(df, y)
    with pytest.raises(ValueError, match="overlap"):
        TabularAttentionClassifier(feature_groups=[[0, 1], [1, 2]]).fit(X, y)
    with pytest.raises(ValueError, match="is empty"):
        TabularAttentionClassifier(feature_groups=[[0], []]).fit(X, y)


def test_tabular_attention_regressor_multi_output():
    X, y = make_causal_chain(n_samples=200, n_features=3, random_state=0)
    groups = {"cause": [0, 1, 2], "descendant": [3, 4, 5]}
    Y = np.c_[y, -2 * y + 1, X[:, 0]]
    reg = TabularAttentionRegressor(
        feature_groups=groups, max_iter=30, random_state=0
    ).fit(X, Y)
    pred = reg.predict(X)
    assert pred.shape == (200, 3)
    # every output is learned in its own units (standardised per column)
    for k in range(3):
        assert np.corrcoef(pred[:, k], Y[:, k])[0, 1] > 0.8
    assert reg.attention_weights(X).shape == (200, 2)
    # a column vector stays 2-D, a 1-D target 1-D
    column = TabularAttentionRegressor(feature_groups=groups, max_iter=2).fit(
        X, y[:, None]
    )
    assert column.predict(X).shape == (200, 1)
    assert reg.set_params(max_iter=2).fit(X, y).predict(X).shape == (200,)


def test_tabular_attention_saturation_warning():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(200, 2))
    X[:, 0] *= 1000  # one group's token dwarfs the other's: the gate saturates
    with pytest.warns(UserWarning, match="saturates"):
        reg = TabularAttentionRegressor(
            max_iter=20, learning_rate_init=0.1, random_state=0
        ).fit(X, X[:, 0] / 1000)
    # on most rows one group's weight is 1 to machine precision
    assert np.mean(reg.attention_weights(X).max(axis=1) == 1.0) > 0.9


# -- generators -------------------------------------------------------------


def test_make_causal_chain_mechanism_and_shift():
    X, y = make_causal_chain(
        20000, 3, descendant_strength=0.5, descendant_noise=1.0, random_state=0
    )
    assert X.shape == (20000, 6)
    assert abs(X[:, 0].mean() - 3.0) < 0.05
    slope = np.polyfit(y, X[:, 3], 1)[0]
    assert abs(slope - 0.5) < 0.02
    X_flip, y_flip = make_causal_chain(
        20000,
        3,
        descendant_strength=0.5,
        descendant_noise=1.0,
        shift="flip",
        random_state=0,
    )
    assert_array_equal(X_flip[:, :3], X[:, :3])
    assert_array_equal(y_flip, y)
    assert abs(np.polyfit(y, X_flip[:, 3], 1)[0] + 0.5) < 0.02
    X_new, _ = make_causal_chain(10, 3, shift=2.0, random_state=0)
    assert X_new.shape == (10, 6)


def test_make_background_confounding_shifts():
    X, _, c = make_background_confounding(
        20000, n_states=3, return_background=True, random_state=0
    )
    assert X.shape == (20000, 10)
    freq = np.bincount(c, minlength=3) / len(c)
    assert_allclose(freq, [4 / 7, 2 / 7, 1 / 7], atol=0.02)
    _, _, c_shift = make_background_confounding(
        20000, shift="prior", return_background=True, random_state=1
    )
    assert_allclose(
        np.bincount(c_shift) / len(c_shift), [1 / 7, 2 / 7, 4 / 7], atol=0.02
    )
    # the mapping shift moves the context centres, not the state frequencies
    X_map, _, c_map = make_background_confounding(
        20000, shift="mapping", return_background=True, random_state=0
    )
    assert_array_equal(c_map, c)
    assert_array_equal(X_map[:, :5], X[:, :5])
    assert not np.allclose(X_map[:, 5:], X[:, 5:])
