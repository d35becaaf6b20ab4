"""Tests of ConNASSearch, its rule, search spaces, baselines and display."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import importlib.util
import os
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_digits, load_wine
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.nas import (
    ArchitectureFrontierDisplay,
    CellSearchSpace,
    ConNASSearch,
    MLPSearchSpace,
    PenaltyNASSearch,
    RandomNASSearch,
)
from sklearn_iclr26.nas._costs import ArchitectureCosts
from sklearn_iclr26.nas._refit import _ArchitectureClassifier, _ArchitectureRegressor
from sklearn_iclr26.nas._rule import (
    constraint_guided_gradient,
    cost_direction,
    expected_cost_gradient,
)
from sklearn_iclr26.utils._sklearn_compat import InvalidParameterError

ROOT = Path(__file__).resolve().parent.parent


def _load_benchmark_module(name):
    # the NAS-Bench-201 surrogate is benchmark support, outside the package
    spec = importlib.util.spec_from_file_location(
        name, ROOT / "benchmarks" / f"{name}.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_nb201 = _load_benchmark_module("connas_nb201_surrogate")
load_nasbench201_table = _nb201.load_nasbench201_table
nasbench201_cost = _nb201.nasbench201_cost
parse_cell = _nb201.parse_cell
table_surrogate_search = _nb201.table_surrogate_search

# the table is not shipped: $SKLEARN_ICLR26_NB201_CSV, or the shared data folder
# next to the checkout (a worktree sits one level deeper)
_NB201_CANDIDATES = [
    Path(os.environ.get("SKLEARN_ICLR26_NB201_CSV", "/nonexistent")),
    *(
        parent / "shared" / "data" / "nas" / "nasbench201_accuracies.csv"
        for parent in ROOT.parents[:2]
    ),
]
NB201_CSV = next((p for p in _NB201_CANDIDATES if p.is_file()), _NB201_CANDIDATES[1])
SPACE = MLPSearchSpace(n_layers=2, widths=(0, 8, 32), activations=("relu", "tanh"))
FAST = {"max_iter": 6, "final_estimator_params": {"max_iter": 30}}
LINEAR = (0, "relu", 0, "relu")  # the architecture of SPACE with no hidden layer


@pytest.fixture(scope="module")
def wine():
    X, y = load_wine(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def _blocks(rng, sizes):
    return [rng.standard_normal(k) for k in sizes]


# ----------------------------------------------------------------- the rule
@pytest.mark.parametrize("R", [1.01, 1.5, 3.0])
def test_rule_descent_component_along_direction(R):
    # <g', d/||d||> = <g, d/||d||> + R ||g|| >= (R - 1) ||g||, for any g, d.
    rng = np.random.default_rng(0)
    for _ in range(200):
        sizes = [5, 3, 5]
        g = _blocks(rng, sizes)
        d = _blocks(rng, sizes)
        scale = 10.0 ** rng.uniform(-6, 6)
        g = [scale * x for x in g]
        new = constraint_guided_gradient(g, d, R)
        g_f, d_f, n_f = (np.concatenate(x) for x in (g, d, new))
        d_hat = d_f / np.linalg.norm(d_f)
        assert n_f @ d_hat >= (R - 1) * np.linalg.norm(g_f) - 1e-9 * scale
        # the closed form
        expected = g_f + R * np.linalg.norm(g_f) * d_hat
        np.testing.assert_allclose(n_f, expected, rtol=1e-12, atol=1e-12 * scale)


def test_rule_worst_case_gradient_against_direction():
    # g = -c d: plain descent would raise the cost; the rule reverses it.
    d = [np.array([1.0, -1.0, 0.0])]
    g = [np.array([-5.0, 5.0, 0.0])]
    new = constraint_guided_gradient(g, d, 1.5)[0]
    assert new @ d[0] > 0  # -step decreases the costly logit
    np.testing.assert_allclose(new @ d[0] / np.linalg.norm(d[0]), 0.5 * np.sqrt(50))


def test_rule_edge_cases():
    g = [np.array([0.3, -0.1])]
    with pytest.raises(ValueError, match="rescale_factor must exceed 1"):
        constraint_guided_gradient(g, g, 1.0)
    # no cheaper operation anywhere: gradient unchanged
    out = constraint_guided_gradient(g, [np.zeros(2)], 2.0)
    np.testing.assert_array_equal(out[0], g[0])
    # zero task gradient still moves towards feasibility (eps floor)
    out = constraint_guided_gradient([np.zeros(2)], [np.array([1.0, -1.0])], 2.0)
    assert out[0][0] > 0 > out[0][1]


def test_cost_direction_kinds():
    costs = [np.array([0.0, 10.0, 20.0]), np.array([5.0, 5.0])]
    arch = [2, 0]
    rank = cost_direction(costs, arch, "cost_rank")
    np.testing.assert_allclose(rank[0], (costs[0] - 10) / costs[0].std())
    np.testing.assert_array_equal(rank[1], 0.0)
    sel = cost_direction(costs, arch, "selected")
    np.testing.assert_allclose(sel[0], [-0.5, -0.5, 1.0])
    np.testing.assert_array_equal(sel[1], 0.0)
    with pytest.raises(ValueError, match="direction must be one of"):
        cost_direction(costs, arch, "bogus")


def test_expected_cost_gradient_finite_differences():
    rng = np.random.default_rng(1)
    costs = [rng.uniform(0, 10, 4), rng.uniform(0, 10, 3)]
    alpha = [rng.standard_normal(4), rng.standard_normal(3)]

    def softmax(a):
        z = np.exp(a - a.max())
        return z / z.sum()

    def expected(al):
        return sum(softmax(a) @ c for a, c in zip(al, costs))

    grad = expected_cost_gradient(costs, [softmax(a) for a in alpha])
    eps = 1e-6
    for e in range(2):
        for k in range(len(alpha[e])):
            plus = [a.copy() for a in alpha]
            minus = [a.copy() for a in alpha]
            plus[e][k] += eps
            minus[e][k] -= eps
            fd = (expected(plus) - expected(minus)) / (2 * eps)
            assert grad[e][k] == pytest.approx(fd, rel=1e-6, abs=1e-8)


def test_modification_only_when_infeasible(wine):
    X, y = wine
    search = ConNASSearch(SPACE, budget=500, random_state=0, **FAST).fit(X, y)
    arch_idx = [0, 0, 2, 0]  # layer1 width 32: 13*32+32 + 32*3+3 = 547 > 500
    ops = search._costs.ops
    arch = search._costs.to_ops(arch_idx)
    g = [np.full(len(o), 0.1) for o in ops]
    probs = [np.full(len(o), 1 / len(o)) for o in ops]
    cost = search.cost_of(arch)
    assert cost == 547
    out, modified = search._modify_arch_gradient(g, arch_idx, 100.0, probs)
    assert not modified
    assert all(np.array_equal(a, b) for a, b in zip(out, g))
    out, modified = search._modify_arch_gradient(g, arch_idx, cost + 1e6, probs)
    assert modified
    # the modified gradient raises the logits of the costly widths most
    assert out[2][2] > out[2][1] > out[2][0]
    # history flags agree with feasibility
    for h in search.search_history_[:-1]:
        assert h["modified"] == (not h["feasible"])


# ------------------------------------------------------------ costs / spaces
def test_mlp_costs_match_network_parameter_count():

    space = MLPSearchSpace(n_layers=3, widths=(0, 4, 16), activations=("relu", "gelu"))
    costs = ArchitectureCosts(space, "params", 7, 3)
    for arch in list(space.iter_architectures(7, 3))[::7]:
        cls, params = space.network(arch, 7, 3)
        n_params = sum(p.numel() for p in cls(**params).parameters())
        assert costs.cost_of(arch) == n_params
        assert costs.cost_of(costs.to_dict(arch)) == n_params
    assert space.n_architectures(7, 3) == 6**3
    cheapest, cost = costs.cheapest()
    assert cost == 7 * 3 + 3 and space.hidden_layers(cheapest) == []
    with pytest.raises(ValueError, match="not an operation of edge 'layer0_width'"):
        costs.cost_of((5, "relu", 0, "relu", 0, "relu"))
    with pytest.raises(ValueError, match="misses the edges"):
        costs.cost_of({"layer0_width": 4})


def test_cell_costs_match_network_parameter_count():

    space = CellSearchSpace(channels=4)
    for arch in list(space.iter_architectures(64, 10))[::997]:
        cls, params = space.network(arch, 64, 10)
        n_params = sum(p.numel() for p in cls(**params).parameters())
        terms = space.cost_terms(arch, 64, 10)
        assert sum(space.term_cost(t, "params") for t in terms) == n_params
    assert space.cell_string(("skip_connect",) * 6).count("~") == 6


def test_mlp_supernet_one_hot_equals_discrete_network():
    from sklearn_iclr26.nas._supernet import MLPNetwork, MLPSupernet

    torch.manual_seed(0)
    widths, acts = (0, 4, 8), ("relu", "tanh")
    sup = MLPSupernet(3, 2, 3, widths, acts, dtype=torch.float64)
    arch = (8, "relu", 0, "tanh", 4, "tanh")
    weights = []
    for ops, op in zip([widths, acts] * 3, arch):
        w = torch.zeros(len(ops), dtype=torch.float64)
        w[ops.index(op)] = 1
        weights.append(w)
    net = MLPNetwork(3, 2, layers=((8, "relu"), (4, "tanh")), dtype=torch.float64)
    with torch.no_grad():
        net.layers[0].weight.copy_(sup.linears[0].weight[:8, :3])
        net.layers[0].bias.copy_(sup.linears[0].bias[:8])
        net.layers[2].weight.copy_(sup.linears[2].weight[:4, :8])
        net.layers[2].bias.copy_(sup.linears[2].bias[:4])
        net.layers[4].weight.copy_(sup.head.weight[:, :4])
        net.layers[4].bias.copy_(sup.head.bias)
        X = torch.randn(5, 3, dtype=torch.float64)
        torch.testing.assert_close(sup(X, weights), net(X))


def test_nasbench201_cost_formulas():
    # NATS-Bench fake record of cell 11: three 3x3 convolutions, no 1x1.
    cell = "|nor_conv_3x3~0|+|nor_conv_3x3~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_3x3~1|skip_connect~2|"  # noqa: E501
    arch = parse_cell(cell)
    assert nasbench201_cost("params")[arch] == 802426
    assert nasbench201_cost("params", n_classes=100)[arch] == 808276
    assert nasbench201_cost("flops")[arch] == pytest.approx(113.95137)


@pytest.fixture(scope="module")
def nb201():
    if not NB201_CSV.is_file():
        pytest.skip(f"{NB201_CSV} is not present")
    return load_nasbench201_table(NB201_CSV), nasbench201_cost("params")


def test_table_surrogate_feasible_and_close_to_best(nb201):
    acc, cost = nb201
    assert (cost <= 0.3e6).sum() == 4096
    gaps, n_modified = [], 0
    for budget in (0.3e6, 0.5e6, 0.8e6):
        best = acc[cost <= budget].max()
        for seed in range(2):
            res = table_surrogate_search(
                acc, cost, budget, rescale_factor=3.0, n_steps=300, random_state=seed
            )
            assert res["feasible"] and res["cost"] <= budget
            gaps.append(best - acc[res["arch"]])
            n_modified += res["n_modified"]
    assert np.mean(gaps) < 1.0, gaps
    assert n_modified > 0  # the search did cross the budget


def test_table_surrogate_penalty_is_sensitive_to_lambda(nb201):
    acc, cost = nb201
    budget = 0.3e6
    small = table_surrogate_search(acc, cost, budget, method="penalty", penalty=0.1)
    large = table_surrogate_search(acc, cost, budget, method="penalty", penalty=100.0)
    assert not small["feasible"]
    best = acc[cost <= budget].max()
    assert large["feasible"] and best - acc[large["arch"]] > 1.0


# ------------------------------------------------------------- the estimator
@pytest.mark.parametrize("dataset", ["wine", "breast_cancer"])
@pytest.mark.parametrize("budget", [150.0, 400.0])
def test_search_returns_feasible_architectures(dataset, budget):
    loader = {"wine": load_wine, "breast_cancer": load_breast_cancer}[dataset]
    X, y = loader(return_X_y=True)
    X = StandardScaler().fit_transform(X)[:200]
    y = y[:200]
    space = MLPSearchSpace(n_layers=2, widths=(0, 4, 16, 32), activations=("relu",))
    # baseline: the space's network without hidden layer, trained as the refit
    linear = _ArchitectureClassifier(space, LINEAR, max_iter=30, random_state=0)
    baseline = linear.fit(X, y).score(X, y)
    for seed in range(2):
        search = ConNASSearch(
            space, budget=budget, rescale_factor=3.0, random_state=seed, **FAST
        ).fit(X, y)
        assert search.budget_satisfied_
        assert search.best_cost_ <= budget
        assert search.best_cost_ == search.cost_of(search.best_architecture_)
        # non-inferior to the baseline (fixed seeds; 0.03 = init noise)
        assert search.score(X, y) >= baseline - 0.03


def test_fitted_attributes_and_history(wine):
    X, y = wine
    search = ConNASSearch(SPACE, budget=500, random_state=0, **FAST).fit(X, y)
    assert set(search.best_architecture_) == {
        "layer0_width",
        "layer0_activation",
        "layer1_width",
        "layer1_activation",
    }
    assert search.best_cost_ == search.cost_of(search.best_architecture_)
    assert search.n_iter_ == FAST["max_iter"]
    assert search.n_features_in_ == 13
    np.testing.assert_array_equal(search.classes_, [0, 1, 2])
    assert [a.shape for a in search.arch_logits_] == [(3,), (2,), (3,), (2,)]
    n_steps = FAST["max_iter"] * 2  # 89 training rows, batches of 64
    assert len(search.search_history_) == n_steps + 1
    keys = {"step", "epoch", "architecture", "cost", "feasible", "val_loss", "modified"}
    assert all(set(h) == keys for h in search.search_history_)
    last_feasible = [h for h in search.search_history_ if h["feasible"]][-1]
    assert last_feasible["architecture"] == search.best_architecture_
    assert all(v > 0 for v in search.cost_table_.values())
    proba = search.predict_proba(X[:5])
    np.testing.assert_allclose(proba.sum(axis=1), 1)
    assert search.predict(X[:5]).shape == (5,)


def test_supernet_is_trained_by_the_torch_base(wine, capsys):
    # the gradient searches train their supernet through BaseTorchEstimator's
    # template: the base's record, user callbacks and verbose levels
    from skorch.callbacks import Callback

    class CountEpochs(Callback):
        def initialize(self):
            self.epochs_ = 0
            return self

        def on_epoch_end(self, net, **kwargs):
            self.epochs_ += 1

    X, y = wine
    counter = CountEpochs().initialize()
    search = ConNASSearch(
        SPACE, budget=500, callbacks=[counter], verbose=1, random_state=0, **FAST
    ).fit(X, y)
    out = capsys.readouterr().out.splitlines()
    assert out and all(line.startswith("[ConNASSearch] ") for line in out)
    assert "[ConNASSearch] epoch 6/6: train_loss" in "\n".join(out)
    assert not any("arch=" in line for line in out)  # the detail is verbose=2
    # the callbacks parameter is copied, the copy reached the supernet's net
    assert counter.epochs_ == 0
    copies = [c for _, c in search.net_.callbacks_ if isinstance(c, CountEpochs)]
    assert [c.epochs_ for c in copies] == [FAST["max_iter"]]
    # loss_curve_: per epoch, the mean of the steps' validation-batch losses,
    # weighted by skorch with the training batch sizes (89 rows: 64 + 25)
    assert len(search.loss_curve_) == search.n_iter_ == search.best_iter_ == 6
    assert search.validation_loss_curve_ is None
    steps = search.search_history_[:-1]
    for epoch, loss in enumerate(search.loss_curve_):
        val = [h["val_loss"] for h in steps if h["epoch"] == epoch]
        np.testing.assert_allclose(loss, np.average(val, weights=[64, 25]))
    # the fitted net keeps no reference to the search through its hook
    assert search.net_.arch_gradient_hook is None
    # the protected entry points: the raw output is the refit network's, and
    # the bilevel loss cannot be replaced
    np.testing.assert_array_equal(
        search._raw_decision(X[:5]), search.best_estimator_._raw_decision(X[:5])
    )
    with pytest.raises(TypeError, match="own loss"):
        search._fit_with_criterion(X, y, n_outputs=3, criterion=torch.nn.MSELoss)
    ConNASSearch(SPACE, budget=500, verbose=2, random_state=0, **FAST).fit(X, y)
    detail = [line for line in capsys.readouterr().out.splitlines() if "arch=" in line]
    assert len(detail) == FAST["max_iter"]
    assert detail[0].startswith("[ConNASSearch] epoch 1/6 arch=")


def test_early_stopping_rewinds_and_warm_start_continues_the_search(wine):
    X, y = wine
    kw = {"budget": 500, "random_state": 0, "final_estimator_params": {"max_iter": 5}}
    # a tolerance no epoch beats: the search stops 2 epochs after the first
    # and is rewound to it (logits, history, chosen architecture)
    stopped = ConNASSearch(
        SPACE, max_iter=20, early_stopping=True, n_iter_no_change=2, tol=1e12, **kw
    ).fit(X, y)
    one = ConNASSearch(SPACE, max_iter=1, early_stopping=True, **kw).fit(X, y)
    assert (stopped.n_iter_, stopped.best_iter_) == (3, 1)
    assert len(stopped.validation_loss_curve_) == 3
    for a, b in zip(stopped.arch_logits_, one.arch_logits_):
        np.testing.assert_array_equal(a, b)
    assert stopped.search_history_ == one.search_history_
    assert {h["epoch"] for h in stopped.search_history_} == {0, 1}  # + the final
    # the monitored rows are the search's validation rows: the epoch-1 loss
    # of the relaxed supernet on them, as forward_module computes it
    import torch.nn.functional as F

    from sklearn_iclr26.utils._random import seed_from_random_state
    from sklearn_iclr26.utils._split import split_indices

    rng = np.random.RandomState(0)
    seed_from_random_state(rng)  # the search's seed, then its split
    _, val = split_indices(len(y), [len(y) - 89], y=y, random_state=rng)
    logits = one.net_.module_(torch.as_tensor(X[val])).detach()
    expected = float(F.cross_entropy(logits, torch.as_tensor(y[val])))
    np.testing.assert_allclose(one.validation_loss_curve_[0], expected)
    # warm start: the second fit continues the supernet and the logits
    warm = ConNASSearch(SPACE, max_iter=2, warm_start=True, **kw).fit(X, y)
    first = list(warm.loss_curve_)
    warm.fit(X, y)
    assert warm.n_iter_ == 4 and warm.loss_curve_[:2] == first
    assert {h["epoch"] for h in warm.search_history_[:-1]} == {2, 3}
    assert any(h["modified"] for h in warm.search_history_)  # the rule ran
    longer = ConNASSearch(SPACE, max_iter=4, **kw).fit(X, y)
    assert len(warm.search_history_) == len(longer.search_history_) // 2 + 1


def test_select_never_infeasible_and_warns_when_nothing_feasible(wine):
    X, y = wine
    search = ConNASSearch(SPACE, budget=200, random_state=0, **FAST).fit(X, y)
    expensive = search._costs.to_ops([2, 0, 2, 0])
    cheap = search._costs.to_ops([0, 0, 1, 0])
    hist = [
        {"arch": expensive, "feasible": False},
        {"arch": cheap, "feasible": True},
        {"arch": expensive, "feasible": False},
    ]
    assert search._select(hist, None) == cheap
    with pytest.warns(UserWarning, match="No architecture visited"):
        arch = search._select([{"arch": expensive, "feasible": False}], None)
    assert search.cost_of(arch) <= 200


def test_best_val_feasible_gumbel_selected_direction(wine):
    X, y = wine
    for params in (
        {"select": "best_val_feasible"},
        {"relaxation": "gumbel", "direction": "selected"},
        {"direction": "expected_cost", "batch_size": None},
    ):
        search = ConNASSearch(SPACE, budget=300, random_state=0, **FAST, **params)
        search.fit(X, y)
        assert search.budget_satisfied_


def test_regression_task():
    X, y = load_wine(return_X_y=True)
    X, y = StandardScaler().fit_transform(X[:, 1:]), X[:, 0]
    search = ConNASSearch(SPACE, budget=300, task="regression", random_state=0, **FAST)
    search.fit(X, y)
    assert search.budget_satisfied_
    assert search.predict(X).shape == y.shape
    # non-inferior to the space's linear network trained as the refit
    linear = _ArchitectureRegressor(SPACE, LINEAR, max_iter=30, random_state=0)
    assert search.score(X, y) >= linear.fit(X, y).score(X, y) - 0.05
    assert not hasattr(search, "predict_proba")


def test_callable_and_latency_constraints(wine):
    X, y = wine

    def n_hidden_layers(arch):  # not differentiable, not additive
        return sum(arch[f"layer{i}_width"] > 0 for i in range(2)) + 0.5

    search = ConNASSearch(
        SPACE, constraint=n_hidden_layers, budget=1, random_state=0, **FAST
    ).fit(X, y)
    assert search.best_cost_ <= 1
    assert all(isinstance(k, tuple) for k in search.cost_table_)
    search = ConNASSearch(
        SPACE, constraint="latency", latency_repeats=3, random_state=0, **FAST
    ).fit(X, y)
    assert all(k[0] == "linear" and v > 0 for k, v in search.cost_table_.items())
    # the latency of an architecture is the sum of its terms' measured times
    arch = tuple(search.best_architecture_.values())
    terms = SPACE.cost_terms(arch, X.shape[1], 3)
    assert search.best_cost_ == pytest.approx(
        sum(search.cost_table_[t] for t in terms), rel=1e-12
    )


def test_cell_space_on_digits():
    X, y = load_digits(return_X_y=True)
    X, y = X[:300] / 16.0, y[:300]
    space = CellSearchSpace(channels=4)
    budget = 9 * 4 + 4 + 4 * 10 + 10 + 16  # stem + head + one 1x1 conv
    search = ConNASSearch(
        space,
        budget=budget,
        max_iter=2,
        final_estimator_params={"max_iter": 20},
        random_state=0,
    ).fit(X, y)
    assert search.budget_satisfied_
    ops = list(search.best_architecture_.values())
    assert "nor_conv_3x3" not in ops and ops.count("nor_conv_1x1") <= 1
    assert search.predict_proba(X[:3]).shape == (3, 10)


# ---------------------------------------------------------------- bad input
def test_bad_inputs(wine):
    X, y = wine
    with pytest.raises(ValueError, match=r"below the cost .* cheapest"):
        ConNASSearch(SPACE, budget=10).fit(X, y)
    with pytest.raises(InvalidParameterError, match="constraint"):
        ConNASSearch(SPACE, constraint="energy").fit(X, y)
    with pytest.raises(InvalidParameterError, match="rescale_factor"):
        ConNASSearch(SPACE, rescale_factor=1.0).fit(X, y)
    for Search in (ConNASSearch, PenaltyNASSearch, RandomNASSearch):
        with pytest.raises(InvalidParameterError, match="n_jobs"):
            Search(SPACE, n_jobs=0).fit(X, y)
    with pytest.raises(NotFittedError):
        ConNASSearch(SPACE).cost_of(LINEAR)

    def broken(arch):
        raise RuntimeError("no LUT entry")

    with pytest.raises(ValueError, match=r"cost callable .* failed.*no LUT entry"):
        ConNASSearch(SPACE, constraint=broken, budget=5).fit(X, y)
    with pytest.raises(ValueError, match="must be finite"):
        ConNASSearch(SPACE, constraint=lambda a: float("nan"), budget=5).fit(X, y)
    with pytest.raises(ValueError, match="expects flattened images"):
        ConNASSearch("cell").fit(X, y)
    with pytest.raises(ValueError, match="n_samples = 3"):
        ConNASSearch(SPACE).fit(X[:3], y[:3])
    with pytest.raises(ValueError, match="widths"):
        ConNASSearch(MLPSearchSpace(widths=(0, -4))).fit(X, y)
    with pytest.raises(ValueError, match="only one class"):
        ConNASSearch(SPACE).fit(X, np.zeros(len(X)))
    X_nan = X.copy()
    X_nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        ConNASSearch(SPACE).fit(X_nan, y)


# ----------------------------------------------------- integration, baselines
def test_determinism(wine):
    # pickle, clone and the global RNGs: tests/test_common_contracts.py
    X, y = wine
    a = ConNASSearch(SPACE, budget=400, random_state=3, **FAST).fit(X, y)
    b = ConNASSearch(SPACE, budget=400, random_state=3, **FAST).fit(X, y)
    assert a.search_history_ == b.search_history_
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


def test_pipeline_grid_search_and_verbose(wine, capsys):
    X, y = load_wine(return_X_y=True)
    pipe = make_pipeline(
        StandardScaler(), ConNASSearch(SPACE, budget=400, random_state=0, **FAST)
    )
    grid = GridSearchCV(pipe, {"connassearch__rescale_factor": [1.5, 3.0]}, cv=2).fit(
        X, y
    )
    # non-inferior to the space's linear network in the same CV
    linear = make_pipeline(
        StandardScaler(),
        _ArchitectureClassifier(SPACE, LINEAR, max_iter=30, random_state=0),
    )
    baseline = cross_val_score(linear, X, y, cv=2).mean()
    assert grid.best_score_ >= baseline - 0.05  # 4 rows of an 89-row fold
    ConNASSearch(SPACE, budget=400, verbose=1, random_state=0, **FAST).fit(*wine)
    out = capsys.readouterr().out
    assert "[ConNASSearch] epoch 1/6" in out and "selected" in out


def test_refit_false(wine):
    search = ConNASSearch(SPACE, budget=400, refit=False, random_state=0, **FAST)
    search.fit(*wine)
    assert not hasattr(search, "best_estimator_")
    with pytest.raises(AttributeError, match="predict"):
        search.predict(wine[0])


def test_unconstrained_connas_equals_penalty_zero(wine):
    X, y = wine
    kw = {"random_state": 0, **FAST}
    a = ConNASSearch(SPACE, **kw).fit(X, y)
    b = PenaltyNASSearch(SPACE, penalty=0.0, select="last_feasible", **kw).fit(X, y)
    for x, z in zip(a.arch_logits_, b.arch_logits_):
        np.testing.assert_array_equal(x, z)


def test_penalty_and_random_baselines(wine):
    X, y = wine
    pen = PenaltyNASSearch(SPACE, penalty=50.0, budget=300, random_state=0, **FAST)
    pen.fit(X, y)
    # select="final": the architecture derived from the final logits
    assert pen.best_architecture_ == pen.search_history_[-1]["architecture"]
    assert pen.best_cost_ == pen.cost_of(pen.best_architecture_)
    assert not any(h["modified"] for h in pen.search_history_)
    # the penalty pushes towards cheaper operations: on this fixed seed the
    # penalised answer costs no more than the unpenalised one
    free = PenaltyNASSearch(SPACE, penalty=0.0, budget=300, random_state=0, **FAST)
    assert pen.best_cost_ <= free.fit(X, y).best_cost_
    rnd = RandomNASSearch(
        SPACE, n_candidates=3, max_iter=5, budget=300, random_state=0
    ).fit(X, y)
    assert len(rnd.search_history_) == 3
    assert rnd.n_iter_ == 5  # the epochs of each candidate
    assert all(h["cost"] <= 300 for h in rnd.search_history_)
    assert rnd.budget_satisfied_


def test_frontier_display(wine, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sklearn_iclr26.nas import _frontier_display

    X, y = wine
    search = ConNASSearch(SPACE, budget=400, random_state=0, **FAST).fit(X, y)
    _, ax = plt.subplots()
    disp = ArchitectureFrontierDisplay.from_estimator(
        search, X, y, random_state=0, ax=ax
    )
    assert disp.ax_ is ax and disp.figure_ is ax.figure
    assert disp.chosen_cost == search.best_cost_
    visited = {tuple(h["architecture"].values()) for h in search.search_history_}
    assert len(disp.costs) == len(visited)
    np.testing.assert_array_equal(
        sorted(disp.costs), sorted(search.cost_of(a) for a in visited)
    )
    assert disp.ax_.get_xlabel() == "params"
    # the chosen architecture is labelled by the estimator, or by `name`
    assert "ConNASSearch" in [t.get_text() for t in disp.ax_.get_legend().texts]
    disp.plot(name="mine")
    assert "mine" in [t.get_text() for t in disp.ax_.get_legend().texts]
    # frontier: cost-sorted, strictly improving
    disp = ArchitectureFrontierDisplay.from_results([3, 1, 2], [0.9, 0.5, 0.95])
    np.testing.assert_array_equal(disp.line_.get_xdata(), [1, 2])
    # style aliases resolve (c -> color) instead of clashing
    ArchitectureFrontierDisplay.from_results([1, 2], [0.5, 0.6], budget=1.5, c="red")
    with pytest.raises(ValueError, match="same length"):
        ArchitectureFrontierDisplay.from_results([1, 2], [0.5])
    with pytest.raises(NotFittedError):
        ArchitectureFrontierDisplay.from_estimator(ConNASSearch(SPACE), X, y)
    plt.close("all")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ArchitectureFrontierDisplay.from_results([1], [1.0], budget=2)
    plt.close("all")

    # matplotlib is checked before anything is trained or even validated
    def no_matplotlib(caller_name):
        raise ImportError(f"{caller_name} requires matplotlib")

    monkeypatch.setattr(_frontier_display, "check_matplotlib_support", no_matplotlib)
    with pytest.raises(ImportError, match="from_estimator requires matplotlib"):
        ArchitectureFrontierDisplay.from_estimator(ConNASSearch(SPACE), X, y)


def test_score_within_budget_scorer(wine):
    from sklearn_iclr26.metrics import get_scorer
    from sklearn_iclr26.nas._scorers import score_within_budget

    X, y = wine
    scorer = get_scorer("score_within_budget")
    kw = {"penalty": 0.0, "random_state": 0, **FAST}
    free = PenaltyNASSearch(SPACE, **kw).fit(X, y)  # no budget: always feasible
    assert free.budget_satisfied_
    assert scorer(free, X, y) == free.score(X, y)
    # the same search with a budget below its answer's cost scores the worst
    tight = PenaltyNASSearch(SPACE, budget=free.best_cost_ - 1, **kw).fit(X, y)
    assert not tight.budget_satisfied_
    assert tight.score(X, y) > 0 and scorer(tight, X, y) == 0.0
    # a Pipeline ending with the search
    pipe = make_pipeline(StandardScaler(), clone(free)).fit(X, y)
    assert scorer(pipe, X, y) == pipe.score(X, y)
    with pytest.raises(TypeError, match="needs a fitted NAS search"):
        score_within_budget(StandardScaler().fit(X), X, y)
    # it plugs into GridSearchCV (scores are accuracies, or 0 where a fold's
    # search broke the budget)
    grid = GridSearchCV(
        PenaltyNASSearch(SPACE, budget=free.best_cost_ - 1, random_state=0, **FAST),
        {"penalty": [0.0, 50.0]},
        scoring=scorer,
        cv=2,
    ).fit(X, y)
    from sklearn.model_selection import StratifiedKFold

    by_hand = [
        np.mean(
            [
                scorer(
                    PenaltyNASSearch(
                        SPACE,
                        budget=free.best_cost_ - 1,
                        penalty=penalty,
                        random_state=0,
                        **FAST,
                    ).fit(X[train], y[train]),
                    X[test],
                    y[test],
                )
                for train, test in StratifiedKFold(2).split(X, y)
            ]
        )
        for penalty in (0.0, 50.0)
    ]
    np.testing.assert_allclose(grid.cv_results_["mean_test_score"], by_hand)
