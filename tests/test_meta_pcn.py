"""Tests of the predictive-coding estimators (MetaPCNClassifier/Regressor)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import copy
import math
import pickle
import warnings

import numpy as np
import pytest
import torch
from sklearn.datasets import load_iris, make_regression
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.metrics import r2_score
from sklearn.model_selection import GridSearchCV, cross_val_score, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from skorch.callbacks import Callback

from sklearn_iclr26.neural_network import MetaPCNClassifier, MetaPCNRegressor
from sklearn_iclr26.neural_network._pcn_modules import PCNModule
from sklearn_iclr26.neural_network._predictive_coding_net import (
    PredictiveCodingNet,
    WeightSpectralNorms,
)
from sklearn_iclr26.utils._random import seed_from_random_state
from sklearn_iclr26.utils._torch import torch_rng, train_module

FAST = {"hidden_layer_sizes": (8, 8), "max_iter": 5}


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def _module(activation="gelu", output_energy="ce", **kw):
    kw.setdefault("meta_pe", False)  # vanilla PCN unless a test asks
    torch.manual_seed(0)
    return PCNModule(
        5, 3, (4, 6, 4), activation, output_energy, dtype=torch.float64, **kw
    )


def _perturbed(module, X):
    g = torch.Generator().manual_seed(1)
    return [
        a.detach() + 0.3 * torch.randn(a.shape, generator=g, dtype=a.dtype)
        for a in module.pc_init(X)
    ]


@pytest.mark.parametrize("activation", ["relu", "tanh", "gelu"])
@pytest.mark.parametrize("output_energy", ["ce", "se"])
def test_weight_gradients_are_local_hebbian(activation, output_energy):
    module = _module(activation, output_energy, weight_norm=False)
    X = torch.randn(
        7, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(2)
    )
    y = torch.tensor([0, 1, 2, 0, 1, 2, 1])
    acts = _perturbed(module, X)
    pairs = module.pc_weight_grads(X, acts, y)
    # explicit Hebbian form: dW_l = mean_i -eps_l,i phi(x_{l-1},i)^T
    xs = [X, *acts]
    act = {"relu": torch.relu, "tanh": torch.tanh, "gelu": torch.nn.functional.gelu}[
        activation
    ]
    for k, layer in enumerate(module.layers):
        pre = xs[k] if k == 0 else act(xs[k])
        mu = pre @ layer.weight.T + layer.bias
        if k < len(acts):
            signal = -(xs[k + 1] - mu)
        elif output_energy == "ce":
            signal = torch.softmax(mu, 1) - torch.nn.functional.one_hot(y, 3)
        else:
            signal = mu - torch.nn.functional.one_hot(y, 3)
        torch.testing.assert_close(pairs[2 * k][1], signal.T @ pre / 7)
        torch.testing.assert_close(pairs[2 * k + 1][1], signal.mean(0))
    # and they are the gradients of the mean energy at fixed activities
    params = [p for p, _ in pairs]
    autograd = torch.autograd.grad(module.pc_energies(X, acts, y).sum(1).mean(), params)
    for (_, g), a in zip(pairs, autograd):
        torch.testing.assert_close(g, a)


def test_weighted_hebbian_gradients():
    module = _module(weight_norm=False)
    X = torch.randn(6, 5, dtype=torch.float64)
    y = torch.tensor([0, 1, 2, 0, 1, 2])
    acts = _perturbed(module, X)
    w = torch.tensor([1.0, 2.0, 0.0, 1.0, 3.0, 1.0], dtype=torch.float64)
    pairs = module.pc_weight_grads(X, acts, y, w)
    energy = (w * module.pc_energies(X, acts, y).sum(1)).sum() / w.sum()
    autograd = torch.autograd.grad(energy, [p for p, _ in pairs])
    for (_, g), a in zip(pairs, autograd):
        torch.testing.assert_close(g, a)


@pytest.mark.parametrize("activation", ["relu", "tanh", "gelu"])
@pytest.mark.parametrize("output_energy", ["ce", "se"])
def test_meta_prediction_error_equals_energy_gradient(activation, output_energy):
    module = _module(activation, output_energy)
    X = torch.randn(7, 5, dtype=torch.float64)
    y = torch.tensor([0, 1, 2, 0, 1, 2, 1])
    acts = [a.requires_grad_(True) for a in _perturbed(module, X)]
    grads = torch.autograd.grad(module.pc_energies(X, acts, y).sum(), acts)
    deltas = module.pc_meta_errors(X, acts, y)
    for g, d in zip(grads, deltas):
        torch.testing.assert_close(d, g)


def test_meta_loss_holds_the_activation_slope_constant():
    module = _module("tanh", meta_pe="gauss_newton", meta_pe_weight=0.5)
    X = torch.randn(4, 5, dtype=torch.float64)
    y = torch.tensor([0, 1, 2, 0])
    acts = [a.requires_grad_(True) for a in _perturbed(module, X)]
    objective = module.pc_inference_objective(X, acts, y).sum()
    energy = module.pc_energies(X, acts, y).sum()
    deltas = module.pc_meta_errors(X, acts, y)
    torch.testing.assert_close(
        objective, energy + 0.5 * 0.5 * sum((d**2).sum() for d in deltas)
    )
    # the slope is detached: the meta-loss gradient is J_delta^T delta with
    # J_delta the Jacobian of delta at constant slope (a Gauss-Newton product)
    full = module.pc_meta_errors(X, acts, y, detach_jacobian=False)
    g_const = torch.autograd.grad(0.5 * sum((d**2).sum() for d in deltas), acts)
    g_full = torch.autograd.grad(0.5 * sum((d**2).sum() for d in full), acts)
    assert any(not torch.allclose(a, b) for a, b in zip(g_const, g_full))


@pytest.mark.parametrize("output_energy", ["ce", "se"])
def test_meta_loss_gradient_is_hessian_times_energy_gradient(output_energy):
    # with ReLU (phi'' = 0 almost everywhere) the Gauss-Newton matrix G is the
    # Hessian H of F in the activities, so grad_x M = H dF/dx: a Hessian-vector
    # product computed by double autograd, independent of the meta-PE code
    module = _module("relu", output_energy, meta_pe="gauss_newton", meta_pe_weight=0.3)
    X = torch.randn(5, 5, dtype=torch.float64)
    y = torch.tensor([0, 1, 2, 0, 1])
    acts = [a.requires_grad_(True) for a in _perturbed(module, X)]
    energy = module.pc_energies(X, acts, y).sum()
    grad_f = torch.autograd.grad(energy, acts, create_graph=True)
    hvp = torch.autograd.grad(grad_f, acts, grad_outputs=[g.detach() for g in grad_f])
    objective = module.pc_inference_objective(X, acts, y).sum()
    grad_obj = torch.autograd.grad(objective, acts)
    for g_obj, g_f, hv in zip(grad_obj, grad_f, hvp):
        torch.testing.assert_close(g_obj, g_f.detach() + 0.3 * hv)


# ------------------------------------------ the paper's meta-PE (meta_pe=True)


def _bp_deltas(module, X, y):
    """Backprop's ``dL/dh_l`` at the hidden pre-activations (L = summed energy
    of the feed-forward output), by autograd on an independent forward pass."""
    hs, x = [], X
    for k, layer in enumerate(module.layers):
        x = layer(x if k == 0 else module.act(x))
        if k < len(module.layers) - 1:
            hs.append(x)
    return torch.autograd.grad(module._output_energy(x, y).sum(), hs)


@pytest.mark.parametrize("activation", ["relu", "tanh", "gelu"])
@pytest.mark.parametrize("output_energy", ["ce", "se"])
def test_paper_inference_chases_the_stop_gradient_target(activation, output_energy):
    # dJ/dz_l = d_l - phi'(x_l^(0)) * (d_{l+1} W_{l+1}) with d = z - x^(0): the
    # target is held fixed (no gradient into the layer above) and uses the
    # feed-forward slope; the top target is -dE_L/dmu_L at the feed-forward
    # output
    module = _module(activation, output_energy, meta_pe=True)
    assert module.meta_pe == "paper"
    X = torch.randn(6, 5, dtype=torch.float64)
    y = torch.tensor([0, 1, 2, 0, 1, 2])
    acts = [a.requires_grad_(True) for a in _perturbed(module, X)]
    grads = torch.autograd.grad(module.pc_inference_objective(X, acts, y).sum(), acts)
    with torch.no_grad():
        x0 = module.pc_init(X)
        mu0 = module(X)
        d = [a - b for a, b in zip(acts, x0)] + [-module._output_grad(mu0, y)]
        for k, g in enumerate(grads):
            slope = module._phi_prime(x0[k])
            target = slope * (d[k + 1] @ module.layers[k + 1].weight)
            torch.testing.assert_close(g, d[k] - target, rtol=0, atol=1e-12)
    # the closed form the engine uses is autograd's gradient, bit for bit
    explicit = module.pc_inference_grads(X, acts, y)
    for g, e in zip(grads, explicit):
        assert torch.equal(g, e)


@pytest.mark.parametrize("output_energy", ["ce", "se"])
def test_paper_inference_reaches_backprop_deltas_in_depth_steps(output_energy):
    # step 1, no momentum: a Jacobi sweep, one layer per step, exact after as
    # many steps as hidden layers and unchanged after (the fixed point)
    module = _module("gelu", output_energy, meta_pe=True)
    X = torch.randn(7, 5, dtype=torch.float64)
    y = torch.tensor([0, 1, 2, 0, 1, 2, 1])
    bp = _bp_deltas(module, X, y)
    x0 = [a.detach() for a in module.pc_init(X)]
    acts = [a.clone() for a in x0]
    for step in range(1, 6):
        acts = [a.requires_grad_(True) for a in acts]
        grads = torch.autograd.grad(
            module.pc_inference_objective(X, acts, y).sum(), acts
        )
        acts = [(a - g).detach() for a, g in zip(acts, grads)]
        for k, (a, b, delta) in enumerate(zip(acts, x0, bp)):
            reached = k >= len(acts) - step
            expected = -delta if reached else torch.zeros_like(delta)
            torch.testing.assert_close(a - b, expected, rtol=0, atol=1e-12)


def test_paper_weights_learn_at_the_feedforward_inputs():
    # the learning loss 1/2 sum_l ||z_l - W_l phi(x_{l-1}^(0)) - b_l||^2 +
    # E_L(mu_L^(0)), by autograd at fixed z, equals pc_weight_grads
    module = _module("tanh", "ce", meta_pe=True, weight_norm=False)
    X = torch.randn(6, 5, dtype=torch.float64)
    y = torch.tensor([0, 1, 2, 0, 1, 2])
    acts = _perturbed(module, X)
    pairs = module.pc_weight_grads(X, acts, y)
    with torch.no_grad():
        xs0 = [X, *module.pc_init(X)]
    loss = module._output_energy(module.layers[-1](torch.tanh(xs0[-1])), y).sum()
    for k, (z, layer) in enumerate(zip(acts, module.layers)):
        pre = xs0[k] if k == 0 else torch.tanh(xs0[k])
        loss = loss + 0.5 * ((z - layer(pre)) ** 2).sum()
    autograd = torch.autograd.grad(loss / 6, [p for p, _ in pairs])
    for (_, g), a in zip(pairs, autograd):
        torch.testing.assert_close(g, a, rtol=0, atol=1e-12)
    # and they differ from the vanilla rule at the same activities (layer 1:
    # vanilla learns at phi(z_1), the paper at phi(x_1^(0)))
    module.meta_pe = None
    vanilla = module.pc_weight_grads(X, acts, y)
    assert not torch.allclose(vanilla[2][1], pairs[2][1])


class _SGDMetaPCN(MetaPCNClassifier):
    """The engine with plain SGD (the estimators use Adam)."""

    def _training_options(self, X, y):
        return {**super()._training_options(X, y), "optimizer": "sgd"}


@pytest.mark.parametrize("output_energy", ["ce", "se"])
@pytest.mark.parametrize("norm_target", ["fan_in", "spectral"])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_paper_weight_step_equals_backprop_with_the_same_normalisation(
    iris, output_energy, norm_target, activation
):
    # step 1, momentum 0, T = number of hidden layers (L - 1 for L weight
    # layers), SGD, full batch: one weight step of Meta-PCN through the
    # engine equals one backprop step on the feed-forward loss followed by
    # the same normalisation
    X, y = iris
    hidden = (6, 5, 7, 4)
    clf = _SGDMetaPCN(
        hidden,
        activation=activation,
        meta_pe=True,
        n_inference_steps=len(hidden),
        inference_learning_rate=1.0,
        inference_momentum=0.0,
        norm_target=norm_target,
        output_energy=output_energy,
        batch_size=None,
        learning_rate_init=0.5,
        max_iter=1,
        warm_start=True,
        random_state=0,
    ).fit(X, y)
    before = copy.deepcopy(clf.net_.module_)
    clf.fit(X, y)  # one more step from `before`
    after = clf.net_.module_
    Xt, yt = torch.as_tensor(X), torch.as_tensor(y)
    params = list(before.parameters())
    loss = before._output_energy(before(Xt), yt).mean()
    grads = torch.autograd.grad(loss, params)
    with torch.no_grad():
        for p, g in zip(params, grads):
            p -= 0.5 * g
        before.pc_after_step()
    for a, b in zip(after.parameters(), before.parameters()):
        assert float((a - b).abs().max()) < 1e-10
    assert not torch.allclose(after.layers[0].weight, clf_first_layer(clf, X, y))


def clf_first_layer(clf, X, y):
    """The first layer's weights after the first step only (a control: the
    second step moved them)."""
    first = copy.deepcopy(clf).set_params(warm_start=False).fit(X, y)
    return first.net_.module_.layers[0].weight


def test_meta_pe_true_is_the_paper_rule(iris):
    X, y = iris
    a = MetaPCNClassifier(meta_pe=True, random_state=0, **FAST).fit(X, y)
    b = MetaPCNClassifier(meta_pe="paper", random_state=0, **FAST).fit(X, y)
    c = MetaPCNClassifier(meta_pe="gauss_newton", random_state=0, **FAST).fit(X, y)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    assert not np.allclose(a.predict_proba(X), c.predict_proba(X))
    # the feed-forward cache of the paper rule does not travel with the model
    assert pickle.loads(pickle.dumps(a)).net_.module_._frozen_cache is None


def _reference_vanilla_pcn(X, y, seed, hidden, T, lr_x, momentum, lr, epochs):
    """Plain-torch PCN (full batch): inference, Hebbian step by autograd, Adam."""
    with torch_rng(seed):
        module = PCNModule(
            X.shape[1],
            3,
            hidden,
            "gelu",
            "ce",
            meta_pe=False,
            weight_norm=False,
            dtype=torch.float64,
        )
    Xt, yt = torch.as_tensor(X), torch.as_tensor(y)
    opt = torch.optim.Adam(module.parameters(), lr=lr)
    for _ in range(epochs):
        with torch.no_grad():
            acts = [a.detach() for a in module.pc_init(Xt)]
        vel = [torch.zeros_like(a) for a in acts]
        for _ in range(T):
            acts = [a.requires_grad_(True) for a in acts]
            grads = torch.autograd.grad(module.pc_energies(Xt, acts, yt).sum(), acts)
            new = []
            for a, g, v in zip(acts, grads, vel):
                v.mul_(momentum).add_(g)
                new.append((a - lr_x * v).detach())
            acts = new
        opt.zero_grad()
        energy = module.pc_energies(Xt, acts, yt).sum(1).mean()
        for p, g in zip(
            module.parameters(), torch.autograd.grad(energy, list(module.parameters()))
        ):
            p.grad = g
        opt.step()
    return module


def test_switches_off_is_vanilla_pcn(iris):
    X, y = iris
    clf = MetaPCNClassifier(
        (6, 5),
        meta_pe=False,
        weight_norm=False,
        batch_size=None,
        n_inference_steps=4,
        inference_learning_rate=0.2,
        inference_momentum=0.3,
        learning_rate_init=1e-2,
        max_iter=3,
        random_state=0,
    ).fit(X, y)
    ref = _reference_vanilla_pcn(
        X, y, seed_from_random_state(0), (6, 5), 4, 0.2, 0.3, 1e-2, 3
    )
    for a, b in zip(clf.net_.module_.parameters(), ref.parameters()):
        torch.testing.assert_close(a, b)


class _CheckAfterEveryStep(Callback):
    def __init__(self, check):
        self.check = check
        self.n_checked = 0

    def on_batch_end(self, net, **kwargs):
        for layer in net.module_.layers:
            self.check(layer.weight.detach())
        self.n_checked += 1


def _fit_with_check(X, y, check, **params):
    module_params = {
        "n_features": X.shape[1],
        "n_outputs": 3,
        "hidden_layer_sizes": (8, 8),
        **params,
    }
    callback = _CheckAfterEveryStep(check)
    net = train_module(
        PCNModule,
        X,
        y,
        criterion=torch.nn.Identity,
        module_params=module_params,
        batch_size=50,
        max_epochs=5,
        learning_rate=1e-3,
        random_state=0,
        callbacks=[
            ("check", callback),
            ("weight_spectral_norms", WeightSpectralNorms()),
        ],
        net_class=PredictiveCodingNet,
        net_params={"n_inference_steps": 7, "inference_learning_rate": 0.1},
    )
    return np.array(net.history[:, "weight_spectral_norms"]), callback


@pytest.mark.parametrize("gain", [1.0, math.sqrt(2)])
@pytest.mark.parametrize("target", ["fan_in", "spectral"])
def test_weight_normalisation_holds_after_every_step(iris, gain, target):
    X, y = iris

    def check(W):
        m, n = W.shape
        scale = n if target == "fan_in" else (math.sqrt(m) + math.sqrt(n)) ** 2
        var = W.var(unbiased=False)
        torch.testing.assert_close(scale * var, torch.tensor(gain**2).to(var))

    norms, cb = _fit_with_check(
        X, y, check, weight_norm=True, norm_gain=gain, norm_target=target
    )
    assert cb.n_checked == 5 * 3
    # recorded, not asserted: spectral norms of the normalised layers
    assert norms.shape == (5, 3)


def test_spectral_clip_bounds_every_step(iris):
    X, y = iris

    def check(W):
        assert torch.linalg.matrix_norm(W, ord=2) <= 0.7 * (1 + 1e-3)

    norms, cb = _fit_with_check(X, y, check, spectral_clip=0.7)
    assert cb.n_checked == 15
    assert np.all(norms <= 0.7 * (1 + 1e-3))


def test_clipping_acts_only_when_enabled():
    module = _module(weight_norm=False)
    with torch.no_grad():
        for layer in module.layers:
            layer.weight.mul_(10)
    before = [layer.weight.clone() for layer in module.layers]
    with torch.no_grad():
        module.pc_after_step()
    for a, layer in zip(before, module.layers):
        assert torch.equal(a, layer.weight)
    module.weight_clip = 0.05
    with torch.no_grad():
        module.pc_after_step()
    for a, layer in zip(before, module.layers):
        assert float(layer.weight.detach().abs().max()) <= 0.05
        torch.testing.assert_close(layer.weight, a.clamp(-0.05, 0.05))
    module.weight_clip, module.spectral_clip = None, 0.5
    with torch.no_grad():
        module.pc_after_step()
    norms = torch.stack(module.pc_spectral_norms())
    assert torch.all(norms <= 0.5 * (1 + 1e-9))


def test_fitted_attributes_and_determinism(iris):
    X, y = iris
    a = MetaPCNClassifier(random_state=1, **FAST).fit(X, y)
    b = MetaPCNClassifier(random_state=1, **FAST).fit(X, y)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    c = MetaPCNClassifier(random_state=2, **FAST).fit(X, y)
    assert not np.allclose(a.predict_proba(X), c.predict_proba(X))
    assert a.layer_energy_history_.shape == (5, 3)
    assert len(a.loss_curve_) == 5
    np.testing.assert_allclose(a.loss_curve_, a.layer_energy_history_.sum(1))
    assert a.weight_spectral_norms_.shape == (5, 3)
    assert a.n_iter_ == 5 and a.n_diverged_batches_ == 0
    np.testing.assert_allclose(a.predict_proba(X).sum(1), 1)


def test_regressor_beats_the_mean_on_held_out_rows():
    # shapes and dtypes: check_regressor_multioutput in tests/test_common.py
    X, y = make_regression(n_samples=80, n_features=4, noise=1.0, random_state=0)
    X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
    params = {**FAST, "max_iter": 50}
    mean = DummyRegressor().fit(X_train, y_train)
    baseline = r2_score(y_test, mean.predict(X_test))  # about 0
    reg = MetaPCNRegressor(random_state=0, **params).fit(X_train, y_train)
    assert reg.score(X_test, y_test) >= baseline + 0.5  # 0.94
    Y_train, Y_test = np.c_[y_train, -y_train], np.c_[y_test, -y_test]
    reg = MetaPCNRegressor(random_state=0, **params).fit(X_train, Y_train)
    r2 = r2_score(Y_test, reg.predict(X_test), multioutput="raw_values")
    assert np.all(r2 >= baseline + 0.5), r2  # 0.97, 0.96


@pytest.mark.parametrize(
    "params, match",
    [
        ({"n_inference_steps": 0}, "n_inference_steps"),
        ({"inference_learning_rate": 0.0}, "inference_learning_rate"),
        ({"learning_rate_init": -1.0}, "learning_rate_init"),
        ({"norm_gain": 0.0}, "norm_gain"),
        ({"spectral_clip": 0.0}, "spectral_clip"),
        ({"hidden_layer_sizes": ()}, "hidden_layer_sizes"),
    ],
)
def test_bad_parameters(iris, params, match):
    X, y = iris
    with pytest.raises(ValueError, match=match):
        MetaPCNClassifier(**{**FAST, **params}).fit(X, y)


def test_non_finite_input_rejected(iris):
    X, y = iris
    X = X.copy()
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        MetaPCNClassifier(**FAST).fit(X, y)
    X[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        MetaPCNClassifier(**FAST).fit(X, y)


def test_divergence_warns_and_resets(iris):
    X, y = iris
    clf = MetaPCNClassifier(
        inference_learning_rate=1e6,
        inference_momentum=0.9,
        weight_norm=False,
        meta_pe=False,
        dtype="float32",
        random_state=0,
        **FAST,
    )
    with pytest.warns(RuntimeWarning, match="diverged.*reset to the feed-forward"):
        clf.fit(X, y)
    assert clf.n_diverged_batches_ > 0
    assert np.all(np.isfinite(clf.predict_proba(X)))


def test_meta_pe_with_too_few_inference_steps_warns(iris):
    # gauss_newton, fewer than 3 x depth inference steps: the meta term reaches
    # the lower layers before the prediction error
    # (benchmarks/meta_pcn_update_alignment.py); paper, fewer steps than
    # hidden layers: the lowest layers receive no error
    X, y = iris
    deep = {"hidden_layer_sizes": (8, 8, 8), "max_iter": 2, "random_state": 0}
    gn = {"meta_pe": "gauss_newton", "inference_learning_rate": 0.1}
    with pytest.warns(UserWarning, match="n_inference_steps=7 for 3 hidden"):
        MetaPCNClassifier(n_inference_steps=7, **gn, **deep).fit(X, y)
    with pytest.warns(UserWarning, match="lowest 1 hidden layer"):
        MetaPCNClassifier(meta_pe=True, n_inference_steps=2, **deep).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        MetaPCNClassifier(n_inference_steps=9, **gn, **deep).fit(X, y)
        MetaPCNClassifier(meta_pe=True, n_inference_steps=3, **deep).fit(X, y)
        MetaPCNClassifier(meta_pe=False, n_inference_steps=1, **deep).fit(X, y)


def test_pipeline_gridsearch_beats_chance(iris):
    # pickle, clone and the GridSearch contract: tests/test_common_contracts.py
    X, y = iris
    pipe = make_pipeline(
        StandardScaler(),
        MetaPCNClassifier(random_state=0, learning_rate_init=1e-2, **FAST),
    )
    search = GridSearchCV(pipe, {"metapcnclassifier__meta_pe": [False, True]}, cv=2)
    search.fit(X, y)
    # 5 epochs: far from a logistic regression (0.96), well above chance
    chance = cross_val_score(DummyClassifier(), X, y, cv=2).mean()  # 1/3
    assert search.best_score_ >= chance + 0.25  # 0.70
