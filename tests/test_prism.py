"""Tests of the backdoor-adjusted (Prism) estimators and their generator."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import math

import numpy as np
import pytest
import torch
from numpy.testing import assert_allclose, assert_array_equal

from sklearn_iclr26.causal import (
    BackdoorAdjustedClassifier,
    BackdoorAdjustedRegressor,
)
from sklearn_iclr26.datasets import make_background_confounding

CONTEXT = {"context": [5, 6, 7, 8, 9]}
FAST = {"max_iter": 15, "embed_dim": 8, "hidden_layer_sizes": (16, 16)}


@pytest.fixture(scope="module")
def data():
    return make_background_confounding(n_samples=200, random_state=0)


@pytest.fixture(scope="module")
def class_data(data):
    X, y = data
    return X, (y > np.median(y)).astype(int) + (y > np.quantile(y, 0.8))


@pytest.mark.parametrize("Est", [BackdoorAdjustedRegressor, BackdoorAdjustedClassifier])
def test_zero_loss_weights_reduce_to_the_factual_model(Est, data, class_data):
    X, y = data if Est is BackdoorAdjustedRegressor else class_data
    common = dict(FAST, feature_groups=CONTEXT, adjusted_weight=0.0)
    common["uniformity_weight"] = 0.0
    plain = Est(n_confounders=0, random_state=3, **common).fit(X, y)
    adjusted = Est(n_confounders=2, random_state=3, **common).fit(X, y)
    method = "predict" if Est is BackdoorAdjustedRegressor else "predict_proba"
    assert_array_equal(getattr(plain, method)(X), getattr(adjusted, method)(X))
    assert plain.loss_term_history_["factual"] == adjusted.loss_term_history_["factual"]
    assert np.isnan(plain.loss_term_history_["adjusted"][0])
    assert np.isfinite(adjusted.loss_term_history_["adjusted"][0])


def test_positive_weights_change_the_model(data):
    X, y = data
    plain = BackdoorAdjustedRegressor(
        n_confounders=0, adjusted_weight=0, random_state=3, **FAST
    ).fit(X, y)
    adjusted = BackdoorAdjustedRegressor(random_state=3, **FAST).fit(X, y)
    assert not np.array_equal(plain.predict(X), adjusted.predict(X))


@pytest.mark.parametrize("activation", ["sigmoid", "softmax"])
def test_confounder_weights_shape_and_range(data, activation):
    X, y = data
    reg = BackdoorAdjustedRegressor(
        n_confounders=3, weight_activation=activation, random_state=0, **FAST
    ).fit(X, y)
    weights = reg.confounder_weights(X[:7])
    assert weights.shape == (7, 3, 8)
    assert np.all((weights > 0) & (weights < 1))
    if activation == "softmax":
        assert_allclose(weights.sum(axis=2), 1.0)
    assert not hasattr(reg, "transform")


def test_uniformity_loss_values():
    import torch

    from sklearn_iclr26.causal._backdoor_adjusted_modules import uniformity_loss

    n, d, t = 4, 6, 2.0
    same = torch.rand(1, 1, d, dtype=torch.float64).expand(3, n, d)
    assert_allclose(uniformity_loss(same, t).numpy(), math.log(n**2))
    # orthogonal weight vectors: log(n + n (n - 1) exp(-2t))
    orth = torch.eye(d, dtype=torch.float64)[:n][None]
    expected = math.log(n + n * (n - 1) * math.exp(-2 * t))
    assert_allclose(uniformity_loss(orth, t).item(), expected)
    # it falls as two weight vectors rotate apart
    values = []
    for angle in np.linspace(0, np.pi / 2, 6):
        a = torch.tensor([[1.0, 0.0], [np.cos(angle), np.sin(angle)]])[None]
        values.append(uniformity_loss(a.double(), t).item())
    assert np.all(np.diff(values) < 0)


def test_adjusted_output_mode_is_the_mean_of_the_copies(data, class_data):
    X, y = data
    reg = BackdoorAdjustedRegressor(
        n_confounders=3, adjust_in="output", random_state=0, **FAST
    ).fit(X, y)
    copies = reg.copy_outputs(X)[:, :, 0] * reg._y_scale + reg._y_mean
    assert_allclose(reg.predict(X, mode="adjusted"), copies.mean(axis=1), rtol=1e-12)
    mixed = 0.5 * (reg.predict(X, mode="factual") + reg.predict(X, mode="adjusted"))
    assert_allclose(reg.predict(X, mode="mix"), mixed, rtol=1e-12)

    Xc, yc = class_data
    clf = BackdoorAdjustedClassifier(
        n_confounders=3, adjust_in="output", random_state=0, **FAST
    ).fit(Xc, yc)
    logits = clf.copy_outputs(Xc)
    proba = np.exp(logits - logits.max(axis=2, keepdims=True))
    proba /= proba.sum(axis=2, keepdims=True)
    assert_allclose(
        clf.predict_proba(Xc, mode="adjusted"), proba.mean(axis=1), rtol=1e-10
    )
    assert_allclose(clf.predict_proba(Xc, mode="mix").sum(axis=1), 1.0)


def test_hidden_mode_differs_from_output_mode(data):
    X, y = data
    reg = BackdoorAdjustedRegressor(random_state=0, **FAST).fit(X, y)
    copies = reg.copy_outputs(X)[:, :, 0] * reg._y_scale + reg._y_mean
    assert not np.allclose(reg.predict(X, mode="adjusted"), copies.mean(axis=1))


def test_loss_term_history(data):
    X, y = data
    reg = BackdoorAdjustedRegressor(
        batch_size=64,
        adjusted_weight=0.5,
        uniformity_weight=2.0,
        random_state=0,
        **FAST,
    ).fit(X, y)
    curves = reg.loss_term_history_
    assert set(curves) == {"factual", "adjusted", "uniformity"}
    for curve in curves.values():
        assert len(curve) == reg.n_iter_ == FAST["max_iter"]
    # the uniformity loss lies between its floor and log(n^2)
    assert all(0 < u <= math.log(4) + 1e-9 for u in curves["uniformity"])
    assert curves["factual"][-1] < curves["factual"][0]
    # the training loss is the weighted sum of the three terms, epoch by epoch
    total = (
        np.array(curves["factual"])
        + 0.5 * np.array(curves["adjusted"])
        + 2.0 * np.array(curves["uniformity"])
    )
    assert_allclose(reg.loss_curve_, total, rtol=1e-10)
    # the old name, kept one release: the same dict after a FutureWarning
    with pytest.warns(FutureWarning, match="loss_term_history_"):
        assert reg.loss_term_curves_ is reg.loss_term_history_
    assert not hasattr(BackdoorAdjustedRegressor(), "loss_term_curves_")


def test_loss_term_history_accumulate_with_warm_start(data):
    X, y = data
    reg = BackdoorAdjustedRegressor(warm_start=True, random_state=0, **FAST)
    reg.fit(X, y)
    first = list(reg.loss_term_history_["factual"])
    reg.fit(X, y)
    assert reg.n_iter_ == 2 * FAST["max_iter"]
    assert len(reg.loss_term_history_["adjusted"]) == reg.n_iter_
    assert reg.loss_term_history_["factual"][: len(first)] == first
    # the records of each epoch are emptied: nothing accumulates in the loss
    assert reg.net_.criterion_.terms_ == []


def test_random_state_is_bit_identical(data):
    X, y = data
    a = BackdoorAdjustedRegressor(random_state=5, batch_size=50, **FAST).fit(X, y)
    b = BackdoorAdjustedRegressor(random_state=5, batch_size=50, **FAST).fit(X, y)
    assert_array_equal(a.predict(X), b.predict(X))
    assert_array_equal(a.confounder_weights(X), b.confounder_weights(X))
    c = BackdoorAdjustedRegressor(random_state=6, batch_size=50, **FAST).fit(X, y)
    assert not np.array_equal(a.predict(X), c.predict(X))


def test_dataframe_groups_by_name_equal_groups_by_index(data):
    import pandas as pd

    X, y = data
    names = [f"p{i}" for i in range(5)] + [f"c{i}" for i in range(5)]
    # shuffle the column order: names select the same columns wherever they are
    order = [9, 0, 5, 1, 6, 2, 7, 3, 8, 4]
    df = pd.DataFrame(X[:, order], columns=[names[i] for i in order])
    by_name = BackdoorAdjustedRegressor(
        feature_groups={"context": [f"c{i}" for i in range(5)]},
        random_state=0,
        **FAST,
    ).fit(df, y)
    assert sorted(by_name.context_features_) == [0, 2, 4, 6, 8]
    assert sorted(by_name.primary_features_) == [1, 3, 5, 7, 9]
    by_index = BackdoorAdjustedRegressor(
        feature_groups={"context": [0, 2, 4, 6, 8]}, random_state=0, **FAST
    ).fit(X[:, order], y)
    # the groups resolve to the same columns; the order within a group is the
    # user's, so compare after fitting with that same order
    assert list(by_name.context_features_) == [2, 4, 6, 8, 0]
    by_index_same_order = BackdoorAdjustedRegressor(
        feature_groups={"context": [2, 4, 6, 8, 0]}, random_state=0, **FAST
    ).fit(X[:, order], y)
    assert_array_equal(by_name.predict(df), by_index_same_order.predict(X[:, order]))
    assert by_index.predict(X[:, order]).shape == (200,)


@pytest.mark.parametrize(
    "groups, message",
    [
        ({"context": []}, "is empty"),
        ({"context": [1, 2], "primary": [2, 3]}, "overlap"),
        ({"context": [12]}, "outside"),
        ({"context": ["c0"]}, "no string column names"),
        ({"context": [0, "a"]}, "not a mix"),
        ({"context": [1, 1]}, "repeats"),
        ({"primary": [1]}, "key 'context'"),
        ({"context": [1], "other": [2]}, "key 'context'"),
    ],
)
def test_bad_feature_groups(data, groups, message):
    X, y = data
    with pytest.raises(ValueError, match=message):
        BackdoorAdjustedRegressor(feature_groups=groups, max_iter=1).fit(X, y)


def test_unknown_column_names(data):
    import pandas as pd

    X, y = data
    df = pd.DataFrame(X, columns=[f"x{i}" for i in range(10)])
    with pytest.raises(ValueError, match="unknown columns"):
        BackdoorAdjustedRegressor(feature_groups={"context": ["nope"]}).fit(df, y)


def test_bad_parameters(data):
    X, y = data
    with pytest.raises(ValueError, match="n_confounders=0"):
        BackdoorAdjustedRegressor(n_confounders=0, max_iter=1).fit(X, y)
    with pytest.raises(ValueError, match="adjusted branch"):
        BackdoorAdjustedRegressor(
            n_confounders=0, adjusted_weight=0, predict_mode="adjusted", max_iter=1
        ).fit(X, y)
    plain = BackdoorAdjustedRegressor(
        n_confounders=0, adjusted_weight=0, max_iter=1
    ).fit(X, y)
    with pytest.raises(ValueError, match="adjusted branch"):
        plain.predict(X, mode="adjusted")
    with pytest.raises(ValueError, match="no confounder weights"):
        plain.confounder_weights(X)
    X_nan = X.copy()
    X_nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        BackdoorAdjustedRegressor(max_iter=1).fit(X_nan, y)


def test_float32_and_multioutput(data):
    X, y = data
    Y = np.c_[y, -y]
    reg = BackdoorAdjustedRegressor(dtype="float32", random_state=0, **FAST).fit(X, Y)
    assert reg.predict(X).shape == (200, 2)
    assert reg.predict(X).dtype == np.float64
    assert reg.copy_outputs(X).shape == (200, 2, 2)


def test_verbose_levels(data, capsys):
    # 1: the base's epoch lines only; 2: the method's loss terms and summary
    X, y = data
    BackdoorAdjustedRegressor(random_state=0, verbose=1, **FAST).fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == FAST["max_iter"]
    assert lines[0].startswith("[BackdoorAdjustedRegressor] epoch 1/15: train_loss")
    BackdoorAdjustedRegressor(random_state=0, verbose=2, **FAST).fit(X, y)
    out = capsys.readouterr().out
    assert out.startswith("[BackdoorAdjustedRegressor] training 3 copies per row")
    assert "[BackdoorAdjustedRegressor] epoch 1 loss terms: factual" in out
    assert "[BackdoorAdjustedRegressor] done: factual loss" in out
    assert out.count("loss terms") == out.count("/15: train_loss") == FAST["max_iter"]


def _reference_prism_forward(net, X, t=2.0):
    """Prism's forward pass, written from the official code's equations.

    Independent of ``PrismNet`` (numpy, one row at a time, its own parameter
    reading): copy 0 is ``E_p x_p + E_c x_c``, copy ``i`` is ``E_p x_p +
    (E_c x_c) * a_i`` with ``a_i = sigmoid`` of the confounder encoder's
    output (the port's layout, ``(n, embed_dim)`` per row: a fixed
    permutation of the official ``(d_model, n)`` view's output units); every
    copy goes through the one backbone, the ``n`` reweighted copies are
    averaged in hidden space, one head gives the factual and the adjusted
    output; the uniformity loss normalises each ``a_i`` over the embedding
    axis, sums ``exp(2 t <a_i, a_j> - 2 t)`` over all pairs (diagonal
    included) and takes the log, per row.
    """

    def linear(layer, v):
        return layer.weight.detach().numpy() @ v + layer.bias.detach().numpy()

    def relu(v):
        return np.maximum(v, 0.0)

    def head(h):
        layers = [m for m in net.head if isinstance(m, torch.nn.Linear)]
        for layer in layers[:-1]:
            h = relu(linear(layer, h))
        return linear(layers[-1], h)

    n, E = net.n_confounders, net.embed_dim
    enc1, enc2 = net.confounder_encoder[0], net.confounder_encoder[2]
    factual, adjusted, uniform = [], [], []
    for row in X:
        xp, xc = row[list(net.primary)], row[list(net.context)]
        ep, ec = linear(net.embed_primary, xp), linear(net.embed_context, xc)
        a = 1 / (1 + np.exp(-linear(enc2, relu(linear(enc1, xc))))).reshape(n, E)
        backbone = net.backbone[0]
        h0 = relu(linear(backbone, ep + ec))
        h_copies = [relu(linear(backbone, ep + ec * a[i])) for i in range(n)]
        factual.append(head(h0))
        adjusted.append(head(sum(h_copies) / n))
        u = a / (np.sqrt((a**2).sum(axis=1, keepdims=True)) + 1e-8)
        gram = u @ u.T
        uniform.append(np.log(np.exp(2 * t * gram - 2 * t).sum()))
    return np.array(factual), np.array(adjusted), np.array(uniform)


def test_forward_matches_a_reference_from_the_official_equations():
    from sklearn_iclr26.causal._backdoor_adjusted_modules import PrismLoss, PrismNet

    torch.manual_seed(0)
    net = PrismNet(
        primary=[0, 1, 2],
        context=[3, 4, 5, 6],
        n_outputs=2,
        embed_dim=5,
        hidden_layer_sizes=(7, 6),
        n_confounders=3,
        confounder_hidden_size=8,
        dtype=torch.float64,
    )
    X = np.random.RandomState(0).normal(size=(11, 7))
    y = np.random.RandomState(1).normal(size=(11, 2))
    y_fact, y_adj, a = net(torch.as_tensor(X))
    ref_fact, ref_adj, ref_uniform = _reference_prism_forward(net, X)
    assert_allclose(y_fact.detach().numpy(), ref_fact, rtol=0, atol=1e-12)
    assert_allclose(y_adj.detach().numpy(), ref_adj, rtol=0, atol=1e-12)
    # the reference tells hidden-space from output-space averaging
    net.adjust_in = "output"
    y_out = net(torch.as_tensor(X))[1].detach().numpy()
    assert np.max(np.abs(y_out - ref_adj)) > 1e-6
    net.adjust_in = "hidden"
    # the loss: SmoothL1(factual) + alpha SmoothL1(adjusted) + beta uniformity
    alpha, beta = 0.7, 0.3
    loss = PrismLoss(adjusted_weight=alpha, uniformity_weight=beta)
    total = loss((y_fact, y_adj, a), torch.as_tensor(y)).detach().numpy()

    def huber(r):
        r = np.abs(r)
        return np.where(r < 1, 0.5 * r**2, r - 0.5).sum(axis=1)

    ref_total = huber(ref_fact - y) + alpha * huber(ref_adj - y) + beta * ref_uniform
    assert_allclose(total, ref_total, rtol=0, atol=1e-12)
    assert_allclose(total.mean(), ref_total.mean(), rtol=0, atol=1e-12)


@pytest.mark.parametrize("states", ["constant", "random"])
def test_background_state_controls(data, states):
    X, y = data
    est = BackdoorAdjustedRegressor(
        CONTEXT, background_states=states, random_state=0, **FAST
    ).fit(X, y)
    # at prediction both controls use a_i = 0.5 on every row
    assert_array_equal(est.confounder_weights(X[:7]), np.full((7, 2, 8), 0.5))
    # the adjusted branch is the hidden mean of copies with E_c x_c halved
    net = est.net_.module_
    Xt = torch.as_tensor(X[:7])
    ep, ec = net._embeddings(Xt)
    expected = net.head(net.backbone(ep + 0.5 * ec)).detach().numpy().ravel()
    assert_allclose(est.predict(X[:7], mode="adjusted"), est._unstandardize(expected))
    learned = BackdoorAdjustedRegressor(CONTEXT, random_state=0, **FAST).fit(X, y)
    assert not np.allclose(learned.predict(X), est.predict(X))
    # the controls are seeded like the learned states
    again = BackdoorAdjustedRegressor(
        CONTEXT, background_states=states, random_state=0, **FAST
    ).fit(X, y)
    assert_array_equal(again.predict(X), est.predict(X))


# -- the generator's interventional truth -------------------------------------


def _slope(y, x):
    return np.polyfit(x, y, 1)[0]


def test_truth_leaves_the_rows_unchanged():
    X, y, c = make_background_confounding(300, return_background=True, random_state=5)
    X_t, y_t, c_t, truth = make_background_confounding(
        300, return_background=True, return_truth=True, random_state=5
    )
    assert_array_equal(X_t, X)
    assert_array_equal(y_t, y)
    assert_array_equal(c_t, c)
    assert truth.interventional.shape == truth.observational.shape == (300,)


def test_do_truth_matches_a_monte_carlo_intervention():
    # h: the context centre of the rarest state, where observing h reveals C
    X, _, c = make_background_confounding(
        50_000, return_background=True, random_state=0
    )
    for h in (X[c == 2, 5:].mean(axis=0), X[c == 0, 5:].mean(axis=0)):
        X_do, y, c_do, truth = make_background_confounding(
            200_000,
            intervention=h,
            return_background=True,
            return_truth=True,
            random_state=1,
        )
        assert_array_equal(X_do[:, 5:], np.broadcast_to(h, (200_000, 5)))
        # do(H = h) leaves C at its prior law (4/7, 2/7, 1/7)
        assert_allclose(np.bincount(c_do) / len(c_do), [4 / 7, 2 / 7, 1 / 7], atol=0.01)
        resid = y - truth.interventional
        se = resid.std() / np.sqrt(len(resid))
        assert abs(resid.mean()) < 4 * se
        # the observational regression at the same h is biased under do(H = h)
        bias = (y - truth.observational).mean()
        assert abs(bias) > 50 * se


def test_randomised_intervention_removes_the_confounding():
    n = 100_000
    X, y, c, truth = make_background_confounding(
        n, return_background=True, return_truth=True, random_state=0
    )
    gap = truth.observational - truth.interventional
    # observational rows: E[Y | X] is the observational regression, so the
    # residual to the do-truth carries the whole gap (slope 1)
    assert abs(_slope(y - truth.interventional, gap) - 1) < 0.05
    assert abs(_slope(y - truth.observational, gap)) < 0.05
    X_r, y_r, c_r, truth_r = make_background_confounding(
        n,
        intervention="random",
        return_background=True,
        return_truth=True,
        random_state=0,
    )
    gap_r = truth_r.observational - truth_r.interventional
    assert abs(_slope(y_r - truth_r.interventional, gap_r)) < 0.05
    assert abs(_slope(y_r - truth_r.observational, gap_r) + 1) < 0.05
    # H keeps its marginal law but no longer depends on C
    assert_allclose(X_r[:, 5:].mean(axis=0), X[:, 5:].mean(axis=0), atol=0.05)
    by_state = [X_r[c_r == k, 5:].mean(axis=0) for k in range(3)]
    assert_allclose(by_state[0], by_state[2], atol=0.1)
    assert not np.allclose(
        X[c == 0, 5:].mean(axis=0), X[c == 2, 5:].mean(axis=0), atol=0.1
    )
    # primary columns and states are drawn as in the observational call
    assert_array_equal(c_r, c)
    assert_array_equal(X_r[:, :5], X[:, :5])


def test_do_truth_is_invariant_to_the_mapping_shift():
    h = make_background_confounding(500, random_state=3)[0][:, 5:]
    _, _, plain = make_background_confounding(
        500, intervention=h, return_truth=True, random_state=4
    )
    _, _, mapped = make_background_confounding(
        500, intervention=h, shift="mapping", return_truth=True, random_state=4
    )
    assert_allclose(mapped.interventional, plain.interventional, rtol=0, atol=1e-12)
    assert not np.allclose(mapped.observational, plain.observational, atol=0.1)
    # the prior shift changes P(C), hence the backdoor sum
    _, _, prior = make_background_confounding(
        500, intervention=h, shift="prior", return_truth=True, random_state=4
    )
    assert not np.allclose(prior.interventional, plain.interventional, atol=0.1)


def test_bad_intervention_shapes():
    with pytest.raises(ValueError, match="must have shape"):
        make_background_confounding(10, intervention=np.zeros(4))
    with pytest.raises(ValueError, match="rows"):
        make_background_confounding(10, intervention=np.zeros((3, 5)))
