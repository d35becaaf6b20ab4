"""Tests of the predictive-coding estimators (MetaPCNClassifier/Regressor)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import math
import pickle
import warnings

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.datasets import load_iris, make_regression
from sklearn.model_selection import GridSearchCV
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
    module = _module("tanh", meta_pe=True, meta_pe_weight=0.5)
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
    module = _module("relu", output_energy, meta_pe=True, meta_pe_weight=0.3)
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
def test_weight_normalisation_holds_after_every_step(iris, gain):
    X, y = iris

    def check(W):
        fan_in = W.shape[1]
        var = W.var(unbiased=False)
        torch.testing.assert_close(fan_in * var, torch.tensor(gain**2).to(var))

    norms, cb = _fit_with_check(X, y, check, weight_norm=True, norm_gain=gain)
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


def test_regressor(iris):
    X, y = make_regression(n_samples=80, n_features=4, noise=1.0, random_state=0)
    reg = MetaPCNRegressor(random_state=0, **FAST).fit(X, y)
    assert reg.predict(X).shape == (80,)
    Y = np.c_[y, -y]
    assert MetaPCNRegressor(random_state=0, **FAST).fit(X, Y).predict(X).shape == (
        80,
        2,
    )


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
    # Fewer than 3 x depth inference steps: the meta term reaches the lower
    # layers before the prediction error (benchmarks/meta_pcn_update_alignment.py).
    X, y = iris
    deep = {"hidden_layer_sizes": (8, 8, 8), "max_iter": 2, "random_state": 0}
    with pytest.warns(UserWarning, match="n_inference_steps=7 for 3 hidden"):
        MetaPCNClassifier(meta_pe=True, n_inference_steps=7, **deep).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        MetaPCNClassifier(meta_pe=True, n_inference_steps=9, **deep).fit(X, y)
        MetaPCNClassifier(meta_pe=False, n_inference_steps=1, **deep).fit(X, y)


def test_pickle_clone_pipeline_gridsearch(iris):
    X, y = iris
    pipe = make_pipeline(
        StandardScaler(),
        MetaPCNClassifier(random_state=0, learning_rate_init=1e-2, **FAST),
    )
    search = GridSearchCV(pipe, {"metapcnclassifier__meta_pe": [False, True]}, cv=2)
    search.fit(X, y)
    assert search.best_estimator_.score(X, y) > 0.5
    fitted = pipe.fit(X, y)
    loaded = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(loaded.predict_proba(X), fitted.predict_proba(X))
    assert clone(pipe).get_params()["metapcnclassifier__meta_pe"] is False
