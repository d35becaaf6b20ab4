"""Tests of the inference family: MultiPPI and resampling with a verifier.

Identities hold to machine precision; Monte Carlo checks use a stated number
of repetitions and tolerances of at least 4 standard errors (coverage: 3
binomial standard errors below the nominal level), on fixed seeds.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import pickle

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.optimize import minimize_scalar
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import (
    check_do_not_raise_errors_in_init_or_set_params,
    check_estimator_cloneable,
    check_estimator_repr,
    check_get_params_invariance,
    check_no_attributes_set_in_init,
    check_parameters_default_constructible,
    check_set_params,
)

from sklearn_iclr26.inference import (
    MultiPPIMeanEstimator,
    ResamplingUtilityEstimator,
    TwoTypeResamplingModel,
    multippi_allocate,
)
from sklearn_iclr26.inference._allocate import _optimal_weights
from sklearn_iclr26.inference._two_type import _notebook_reward


def _random_cov(k, seed):
    rng = np.random.RandomState(seed)
    L = rng.normal(size=(k, k))
    return L @ L.T + 0.2 * np.eye(k)


def _draw(cov, mean, design, rng):
    """Rows of Z observed per subset, NaN elsewhere; returns (X, y)."""
    k = cov.shape[0]
    blocks = []
    for subset, n in design.items():
        Z = rng.multivariate_normal(mean, cov, size=n)
        mask = np.ones(k, dtype=bool)
        mask[list(subset)] = False
        Z[:, mask] = np.nan
        blocks.append(Z)
    Z = np.vstack(blocks)
    return Z[:, 1:], Z[:, 0]


# --------------------------------------------------------------------------
# MultiPPI: identities
# --------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_weights_are_unbiased_and_variance_is_a_S_a(seed):
    k = 4
    cov = _random_cov(k, seed)
    a = np.random.RandomState(seed).normal(size=k)
    design = {(0, 1, 2, 3): 30, (1, 2): 200, (0, 3): 50, (2,): 400}
    weights, S = _optimal_weights(cov, design, a)
    embedded = np.zeros(k)
    variance = 0.0
    for subset, lam in weights.items():
        embedded[list(subset)] += lam
        idx = np.ix_(subset, subset)
        variance += lam @ cov[idx] @ lam / design[subset]
    assert_allclose(embedded, a, atol=1e-10)
    assert_allclose(variance, a @ S @ a, rtol=1e-10)


def test_reduces_to_classical_when_predictors_are_useless():
    # known covariance with the proxies independent of y: the estimate is the
    # plain mean of the observed y, its variance sigma_y^2 / n_gold
    cov = np.array([[2.0, 0, 0], [0, 1.0, 0.5], [0, 0.5, 1.0]])
    rng = np.random.RandomState(0)
    X, y = _draw(cov, np.zeros(3), {(0, 1, 2): 40, (0,): 60, (1, 2): 500}, rng)
    est = MultiPPIMeanEstimator(covariance_estimator=cov).fit(X, y)
    assert_allclose(est.estimate_, np.nanmean(y), atol=1e-12)
    assert_allclose(est.stderr_**2, 2.0 / 100, rtol=1e-12)
    assert_allclose(est.effective_sample_size_, 100, rtol=1e-12)


def test_only_gold_rows_is_the_sample_mean():
    rng = np.random.RandomState(1)
    y = rng.normal(size=50)
    X = y[:, None] + rng.normal(size=(50, 2))
    est = MultiPPIMeanEstimator(covariance_estimator="empirical").fit(X, y)
    # one fully observed pattern: the BLUE is the mean of y
    assert_allclose(est.estimate_, y.mean(), atol=1e-12)
    assert list(est.design_) == [(0, 1, 2)]


def test_contrast_difference_of_means():
    rng = np.random.RandomState(2)
    y = rng.normal(size=80)
    X = (y + rng.normal(size=80))[:, None]
    est = MultiPPIMeanEstimator(contrast=[1.0, -1.0]).fit(X, y)
    assert_allclose(est.estimate_, np.mean(y - X[:, 0]), atol=1e-12)


def test_ppi_plus_plus_weight_is_ppi_py_lambda():
    # PPI++ design: n rows (y, yhat), N rows yhat alone; the BLUE weight of the
    # unlabelled mean is ppi_py's lambda = Cov(y, yhat) / ((1 + n / N) Var(yhat))
    cov = np.array([[1.0, 0.7], [0.7, 1.3]])
    n, N = 100, 230
    weights, _ = _optimal_weights(cov, {(0, 1): n, (1,): N}, np.array([1.0, 0.0]))
    lam = 0.7 / ((1 + n / N) * 1.3)
    assert_allclose(weights[(1,)], [lam], rtol=1e-12)
    assert_allclose(weights[(0, 1)], [1.0, -lam], rtol=1e-12)


def _ppi_design(seed, n=400, N=3000):
    rng = np.random.RandomState(seed)
    y = rng.normal(1.0, 1.0, size=n + N)
    yhat = 0.8 * y + rng.normal(0.2, 0.6, size=n + N)
    return y[:n], yhat[:n], yhat[n:]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ppi_plus_plus_point_estimate_equals_ppi_python(seed):
    # the library itself (ppi-python), not its formula written out: with the
    # covariance ppi-python estimates (labelled cross-covariance over n, the
    # variance of every prediction with ddof 1), MultiPPI's BLUE on the PPI++
    # design is ppi_mean_pointestimate with its own data-driven lambda
    ppi_py = pytest.importorskip("ppi_py")
    Y, Yhat, Yhat_unl = _ppi_design(seed)
    n, N = len(Y), len(Yhat_unl)
    c = np.mean((Y - Y.mean()) * (Yhat - Yhat.mean()))
    v = np.var(np.concatenate([Yhat, Yhat_unl]), ddof=1)
    cov = np.array([[np.var(Y), c], [c, v]])
    X = np.concatenate([Yhat, Yhat_unl]).reshape(-1, 1)
    y = np.concatenate([Y, np.full(N, np.nan)])
    est = MultiPPIMeanEstimator(covariance_estimator=cov).fit(X, y)
    expected = ppi_py.ppi_mean_pointestimate(Y, Yhat, Yhat_unl)
    assert_allclose(est.estimate_, np.ravel(expected)[0], rtol=1e-12)
    lam = c / ((1 + n / N) * v)
    assert 0.0 < lam < 1.0  # ppi-python clips lambda to [0, 1]: not active here
    assert_allclose(est.weights_[(1,)], [lam], rtol=1e-12)
    # the interval: ppi-python plugs in the two samples' own variances, which
    # one covariance matrix cannot hold, so they agree to the sampling error
    # of those variances (about 1 / sqrt(n) relative), not to rounding
    lo, hi = ppi_py.ppi_mean_ci(Y, Yhat, Yhat_unl, alpha=0.05)
    width = est.confidence_interval_[1] - est.confidence_interval_[0]
    assert_allclose(width, np.ravel(hi - lo)[0], rtol=0.1)


def test_classical_estimate_equals_ppi_python_classical_ci():
    ppi_py = pytest.importorskip("ppi_py")
    # every row gold-labelled: MultiPPI's BLUE of E[y] is the sample mean, and
    # its interval (empirical covariance, ddof 0) is ppi-python's classical one
    Y, Yhat, _ = _ppi_design(0)
    est = MultiPPIMeanEstimator(covariance_estimator="empirical")
    est.fit(Yhat.reshape(-1, 1), Y)
    lo, hi = ppi_py.classical_mean_ci(Y, alpha=0.05)
    assert_allclose(est.estimate_, Y.mean(), rtol=1e-12)
    assert_allclose(est.confidence_interval_, [lo, hi], rtol=1e-12)


def test_ppi_plus_plus_allocation_equals_ppi_power():
    # rho = 0.8, c_Y = 1, c_Yhat = 0.01 (a labelled row costs 1.01)
    cov = np.array([[1.0, 0.8], [0.8, 1.0]])
    budget = 1000.0
    plan = multippi_allocate(cov, [1.0, 0.01], budget, subsets=[(0, 1), (1,)])
    ratio = plan.relaxed_counts[(1,)] / plan.relaxed_counts[(0, 1)]
    assert round(ratio, 2) == 12.33
    # variance relative to classical sampling of the same budget (B / c_Y rows)
    assert_allclose(plan.relaxed_variance / (1.0 / budget), 0.4624, atol=5e-5)

    # independent check: PPI++'s effective n = n (n + N) / (n + (1 - rho^2) N)
    def variance(n):
        N = (budget - 1.01 * n) / 0.01
        return (n + 0.36 * N) / (n * (n + N))

    best = minimize_scalar(variance, bounds=(1.0, budget / 1.01), method="bounded")
    assert_allclose(plan.relaxed_counts[(0, 1)], best.x, rtol=1e-3)
    assert plan.cost <= budget + 1e-9


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_multiplicative_solver_matches_slsqp_oracle(seed):
    cov = _random_cov(4, seed)
    costs = np.random.RandomState(seed).uniform(0.05, 1.0, size=4)
    for burn_in in (None, 50):
        mult = multippi_allocate(
            cov, costs, 100.0, burn_in=burn_in, solver="multiplicative"
        )
        oracle = multippi_allocate(cov, costs, 100.0, burn_in=burn_in, solver="slsqp")
        # the multiplicative optimum is never worse than the oracle by > 1e-4
        assert mult.relaxed_variance <= oracle.relaxed_variance * (1 + 1e-4)
        assert mult.cost <= 100.0 + 1e-9


def test_solvers_match_cvxpy():
    pytest.importorskip("cvxpy")
    for seed in range(2):
        cov = _random_cov(3, seed)
        costs = np.random.RandomState(seed).uniform(0.05, 1.0, size=3)
        convex = multippi_allocate(cov, costs, 100.0, solver="cvxpy")
        for solver in ("active_set", "multiplicative"):
            plan = multippi_allocate(cov, costs, 100.0, solver=solver)
            assert_allclose(plan.relaxed_variance, convex.relaxed_variance, rtol=1e-3)


# the three cost structures of benchmarks/inference_reproduction.py (gold = 0)
def _additive_cost(subset):
    return float(np.array([1.0, 0.01, 0.05, 0.2])[list(subset)].sum())


def _cascaded_cost(subset):
    proxies = [j for j in subset if j > 0]
    output = max(({1: 0.02, 2: 0.08, 3: 0.3}[j] for j in proxies), default=0.0)
    return (0 in subset) * 1.0 + 0.01 * len(proxies) + output


def _debate_cost(subset):
    groups = {}
    for j in subset:
        if j > 0:
            agents, rounds = {1: (1, 1), 2: (1, 3), 3: (5, 3)}[j]
            groups[agents] = max(groups.get(agents, 0), rounds)
    return (0 in subset) * 1.0 + 0.01 * sum(a * r for a, r in groups.items())


def _proxy_cov(seed):
    # gold y and three proxies correlated with it at 0.3-0.8, as the benchmark's
    rng = np.random.RandomState(seed)
    y = rng.normal(size=4000)
    noise = rng.normal(size=(4000, 3)) @ rng.normal(scale=0.5, size=(3, 3))
    proxies = y[:, None] * np.array([0.4, 0.8, 1.2]) + noise
    return np.cov(np.c_[y, proxies].T)


@pytest.mark.parametrize("cost", [_additive_cost, _cascaded_cost, _debate_cost])
@pytest.mark.parametrize("burn_in", [None, 250])
def test_active_set_solver_equals_slsqp(cost, burn_in):
    cov = _proxy_cov(0)
    for budget in (25.0, 400.0, 1600.0):
        fast = multippi_allocate(cov, cost, budget, burn_in=burn_in)
        oracle = multippi_allocate(cov, cost, budget, burn_in=burn_in, solver="slsqp")
        assert_allclose(fast.relaxed_variance, oracle.relaxed_variance, rtol=1e-6)
        # equal optima; the rounding may break near-ties differently
        assert_allclose(fast.variance, oracle.variance, rtol=1e-4)
        assert fast.cost <= budget + 1e-9
        assert fast.n_iter <= 200
    # a larger problem (6 sources, 63 subsets, additive costs)
    cov = _random_cov(6, 0)
    costs = np.random.RandomState(0).uniform(0.05, 1.0, size=6)
    fast = multippi_allocate(cov, costs, 1000.0, burn_in=burn_in)
    oracle = multippi_allocate(cov, costs, 1000.0, burn_in=burn_in, solver="slsqp")
    assert_allclose(fast.relaxed_variance, oracle.relaxed_variance, rtol=1e-6)


@pytest.mark.parametrize("cost", [_additive_cost, _cascaded_cost, _debate_cost])
def test_oracle_all_subsets_variance_at_most_every_baseline(cost):
    # with the true covariance the MultiPPI design (every subset) can do what
    # any baseline's subset list does, so its variance is never larger
    cov = _proxy_cov(1)
    baselines = [[(0,)], [(0, 1, 2, 3), (1, 2, 3)], [(0, 1, 2, 3), (1, 2, 3)]]
    baselines += [[(0, j), (j,)] for j in (1, 2, 3)]
    baselines += [[(0, 1, 2, 3), (1, 2, 3), (1, 2), (1,)]]
    for budget in (25.0, 100.0, 400.0, 1600.0):
        best = multippi_allocate(cov, cost, budget, burn_in=250)
        for subsets in baselines:
            plan = multippi_allocate(cov, cost, budget, subsets=subsets, burn_in=250)
            assert best.relaxed_variance <= plan.relaxed_variance * (1 + 1e-9)
            # rounding moves the variance by far less than 0.1 %
            assert best.variance <= plan.variance * (1 + 1e-3)


@pytest.mark.parametrize("seed", [0, 1])
def test_true_covariance_variance_of_allocated_design(seed):
    # the plan's variance, the estimator's stderr_**2 and the Monte Carlo
    # variance of the estimate agree when the covariance is the true one: 2000
    # repetitions, 4 standard errors (false alarm rate < 1e-4 per check)
    cov = _proxy_cov(seed)
    mean = np.array([0.5, 1.0, -1.0, 2.0])
    plan = multippi_allocate(cov, _debate_cost, 200.0, burn_in=50)
    design = dict(plan.counts)
    full = (0, 1, 2, 3)
    design[full] = design.get(full, 0) + 50
    assert len(design) >= 2  # the optimum mixes subsets
    rng = np.random.RandomState(seed)
    reps = 2000
    estimates, z = np.empty(reps), np.empty(reps)
    est = MultiPPIMeanEstimator(covariance_estimator=cov)
    for r in range(reps):
        X, y = _draw(cov, mean, design, rng)
        est.fit(X, y)
        estimates[r] = est.estimate_
        z[r] = (est.estimate_ - mean[0]) / est.stderr_
    assert_allclose(est.stderr_**2, plan.variance, rtol=1e-10)
    se = np.sqrt(plan.variance / reps)
    assert abs(estimates.mean() - mean[0]) < 4 * se
    assert abs(estimates.var(ddof=1) / plan.variance - 1) < 4 * np.sqrt(2 / reps)
    covered = np.mean(np.abs(z) <= 1.959963984540054)
    assert abs(covered - 0.95) < 4 * np.sqrt(0.95 * 0.05 / reps)


def test_budget_shares_scale_free_without_burn_in_adaptive_with_it():
    rho_cheap, rho_strong = 0.6, 0.9
    cov = np.array(
        [
            [1.0, rho_cheap, rho_strong],
            [rho_cheap, 1.0, rho_cheap * rho_strong],
            [rho_strong, rho_cheap * rho_strong, 1.0],
        ]
    )
    costs = [10.0, 0.1, 1.0]
    small = multippi_allocate(cov, costs, 50.0)
    large = multippi_allocate(cov, costs, 5000.0)
    assert small.budget_shares.keys() == large.budget_shares.keys()
    for subset, share in small.budget_shares.items():
        assert_allclose(share, large.budget_shares[subset], atol=1e-4)
    assert_allclose(
        50 * small.relaxed_variance, 5000 * large.relaxed_variance, rtol=1e-4
    )
    # with 250 reused burn-in rows the plan changes with the budget
    low = multippi_allocate(cov, costs, 10.0, burn_in=250).budget_shares
    high = multippi_allocate(cov, costs, 5000.0, burn_in=250).budget_shares
    assert low.get((1,), 0) > 0.99  # the cheap proxy alone
    assert high.get((0, 1, 2), 0) > 0.3  # new fully labelled rows


def test_non_additive_costs_dict_and_callable_agree():
    cov = _random_cov(3, 5)
    speed = np.array([1.0, 0.2, 0.5])

    def latency(subset):  # parallel raters: the slowest one
        return float(speed[list(subset)].max())

    table = {s: latency(s) for s in multippi_allocate(cov, None, 1.0).subsets}
    by_callable = multippi_allocate(cov, latency, 100.0)
    by_dict = multippi_allocate(cov, table, 100.0)
    assert by_callable.counts == by_dict.counts


def test_allocate_uses_fitted_design_as_burn_in():
    rng = np.random.RandomState(3)
    cov = _random_cov(3, 3)
    X, y = _draw(cov, np.zeros(3), {(0, 1, 2): 250}, rng)
    est = MultiPPIMeanEstimator().fit(X, y)
    with_burn_in = est.allocate(100.0, costs=[1.0, 0.1, 0.1])
    direct = multippi_allocate(est.covariance_, [1.0, 0.1, 0.1], 100.0, burn_in=250)
    assert with_burn_in.counts == direct.counts


# --------------------------------------------------------------------------
# MultiPPI: statistics
# --------------------------------------------------------------------------


def test_monte_carlo_unbiased_and_variance_matches_formula():
    cov = _random_cov(3, 7)
    mean = np.array([0.3, -1.0, 2.0])
    design = {(0, 1, 2): 20, (0, 1): 30, (1, 2): 150, (2,): 300}
    rng = np.random.RandomState(0)
    reps = 1000
    estimates = np.empty(reps)
    for r in range(reps):
        X, y = _draw(cov, mean, design, rng)
        estimates[r] = (
            MultiPPIMeanEstimator(covariance_estimator=cov).fit(X, y).estimate_
        )
    X, y = _draw(cov, mean, design, rng)
    formula = MultiPPIMeanEstimator(covariance_estimator=cov).fit(X, y).stderr_ ** 2
    se = np.sqrt(formula / reps)
    assert abs(estimates.mean() - mean[0]) < 4 * se
    # sample variance / true variance ~ chi2_{R-1}/(R-1): sd sqrt(2/R)
    assert abs(estimates.var(ddof=1) / formula - 1) < 4 * np.sqrt(2 / reps)


@pytest.mark.parametrize("budget", [20.0, 200.0, 800.0])
def test_coverage_with_ledoit_wolf_and_reused_burn_in(budget):
    # binary gold (P(y=1)=0.3), two proxies of different quality and cost,
    # 250 burn-in rows reused for the covariance and for the estimate
    rng = np.random.RandomState(int(budget))
    costs = [1.0, 0.01, 0.1]

    def population(n):
        y = (rng.uniform(size=n) < 0.3).astype(float)
        weak = y + rng.normal(scale=1.5, size=n)
        strong = y + rng.normal(scale=0.4, size=n)
        return np.c_[y, weak, strong]

    first = population(250)
    plan = (
        MultiPPIMeanEstimator()
        .fit(first[:, 1:], first[:, 0])
        .allocate(budget, costs=costs)
    )
    reps, covered = 300, 0
    for _ in range(reps):
        blocks = [population(250)]
        for subset, n in plan.counts.items():
            Z = population(n)
            Z[:, [j for j in range(3) if j not in subset]] = np.nan
            blocks.append(Z)
        Z = np.vstack(blocks)
        low, high = MultiPPIMeanEstimator().fit(Z[:, 1:], Z[:, 0]).confidence_interval_
        covered += low <= 0.3 <= high
    tolerance = 3 * np.sqrt(0.95 * 0.05 / reps)
    assert covered / reps >= 0.95 - tolerance


def test_cross_fit_is_sample_splitting():
    rng = np.random.RandomState(4)
    cov = _random_cov(3, 4)
    X, y = _draw(cov, np.zeros(3), {(0, 1, 2): 100, (1, 2): 400}, rng)
    est = MultiPPIMeanEstimator(cross_fit=True, random_state=0).fit(X, y)
    assert est.design_[(0, 1, 2)] == 50
    again = MultiPPIMeanEstimator(cross_fit=True, random_state=0).fit(X, y)
    assert est.estimate_ == again.estimate_


# --------------------------------------------------------------------------
# MultiPPI: input handling
# --------------------------------------------------------------------------


def test_dataframe_names_and_subset_keys():
    rng = np.random.RandomState(5)
    X = pd.DataFrame(rng.normal(size=(60, 2)), columns=["cheap", "strong"])
    y = rng.normal(size=60)
    y[30:] = np.nan
    est = MultiPPIMeanEstimator().fit(X, y)
    assert est.source_names_ == ["y", "cheap", "strong"]
    assert sorted(est.design_) == [(0, 1, 2), (1, 2)]


def test_multippi_errors():
    rng = np.random.RandomState(6)
    X = rng.normal(size=(20, 2))
    y = rng.normal(size=20)
    with pytest.raises(ValueError, match="y is never observed"):
        MultiPPIMeanEstimator().fit(X, np.full(20, np.nan))
    X_bad = X.copy()
    X_bad[:, 1] = np.nan
    with pytest.raises(ValueError, match="never observed"):
        MultiPPIMeanEstimator().fit(X_bad, y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        MultiPPIMeanEstimator().fit(X, y[:10])
    with pytest.raises(ValueError, match="one coefficient per source"):
        MultiPPIMeanEstimator(contrast=[1.0, 0.0]).fit(X, y)
    y_partial = y.copy()
    y_partial[1:] = np.nan
    X_partial = X.copy()
    X_partial[0] = np.nan
    with pytest.raises(ValueError, match="at least 2 rows observing y"):
        MultiPPIMeanEstimator().fit(X_partial, y_partial)
    est = MultiPPIMeanEstimator().fit(X, y)
    with pytest.raises(ValueError, match="one cost per source"):
        est.allocate(10.0, costs=[1.0, 0.1])
    with pytest.raises(ValueError, match="budget"):
        est.allocate(0.0, costs=[1.0, 0.1, 0.1])
    with pytest.raises(ValueError, match="Pass an explicit list of subsets"):
        multippi_allocate(np.eye(13), None, 10.0)
    with pytest.raises(ValueError, match="No allocation"):
        multippi_allocate(np.eye(2), None, 10.0, subsets=[(1,)])


# --------------------------------------------------------------------------
# Resampling with an imperfect verifier
# --------------------------------------------------------------------------


def _records(seed, n_problems=40):
    """Per-sample records of a random population of problems (1-D layout)."""
    rng = np.random.RandomState(seed)
    accepted, correct, groups = [], [], []
    for t in range(n_problems):
        n = rng.randint(3, 25)
        r, fp = rng.uniform(), rng.uniform(0, 0.5)
        c = rng.uniform(size=n) < r
        a = c | (rng.uniform(size=n) < fp)
        accepted.append(a)
        correct.append(c)
        groups.append(np.full(n, t))
    return np.concatenate(accepted), np.concatenate(correct), np.concatenate(groups)


def _permutation_curves(accepted, correct, groups, k_max, n_perm, rng, replace):
    """The authors' simulation: shuffle each pool, submit the first accepted."""
    acc = np.zeros(k_max + 1)
    fp = np.zeros(k_max + 1)
    ids = np.unique(groups)
    for t in ids:
        a, c = accepted[groups == t], correct[groups == t]
        n = a.size
        if replace:
            order = rng.randint(0, n, size=(n_perm, k_max))
        else:
            order = np.argsort(rng.uniform(size=(n_perm, n)), axis=1)
        hit = a[order]
        first = np.where(hit.any(axis=1), hit.argmax(axis=1), np.iinfo(int).max)
        ok = c[order[np.arange(n_perm), np.minimum(first, order.shape[1] - 1)]]
        for k in range(1, k_max + 1):
            submitted = first < k
            acc[k] += np.mean(submitted & ok)
            fp[k] += np.mean(submitted & ~ok)
    return acc / ids.size, fp / ids.size


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("sampling", ["without_replacement", "with_replacement"])
def test_closed_form_curves_match_permutation_simulation(seed, sampling):
    accepted, correct, groups = _records(seed)
    est = ResamplingUtilityEstimator(k_max=30, sampling=sampling)
    est.fit(accepted, correct, groups)
    rng = np.random.RandomState(seed)
    n_perm = 2000
    acc, fp = _permutation_curves(
        accepted, correct, groups, 30, n_perm, rng, sampling == "with_replacement"
    )
    # each curve averages 40 problems x 2000 draws of a Bernoulli: sd < 0.0018;
    # 0.01 is more than 5 standard deviations
    assert np.max(np.abs(acc - est.accuracy_curve_)) < 0.01
    assert np.max(np.abs(fp - est.false_positive_curve_)) < 0.01


def test_marginal_gain_identity_and_monotone_without_penalty():
    accepted, correct, groups = _records(3)
    est = ResamplingUtilityEstimator(fp_penalty=2.0, k_max=50).fit(
        accepted, correct, groups
    )
    p, q = est.pass_rate_, est.precision_
    v = q - 2.0 * (1 - q)
    k = np.arange(50)
    expected = (v[:, None] * p[:, None] * (1 - p[:, None]) ** k).mean(axis=0)
    assert_allclose(np.diff(est.utility_curve_), expected, atol=1e-13)
    free = ResamplingUtilityEstimator(fp_penalty=0.0, k_max=50).fit(
        accepted, correct, groups
    )
    assert np.all(np.diff(free.utility_curve_) >= -1e-15)


def test_abstains_when_every_problem_has_negative_value():
    accepted, correct, groups = _records(4)
    correct = np.zeros_like(correct)  # every accepted sample is wrong
    est = ResamplingUtilityEstimator(fp_penalty=1.0).fit(accepted, correct, groups)
    assert est.k_opt_ == 0
    assert est.max_utility_ == 0.0


def test_accuracy_reaches_the_ceiling():
    accepted, correct, groups = _records(5)
    est = ResamplingUtilityEstimator(sampling="without_replacement").fit(
        accepted, correct, groups
    )
    largest_pool = int(est.n_samples_per_problem_.max())
    assert_allclose(est.accuracy(largest_pool), est.accuracy_ceiling_, atol=1e-12)
    est = ResamplingUtilityEstimator().fit(accepted, correct, groups)
    assert_allclose(est.accuracy(10**6), est.accuracy_ceiling_, atol=1e-12)


def test_cost_per_sample_matches_simulated_draws():
    accepted, correct, groups = _records(6, n_problems=20)
    rng = np.random.RandomState(0)
    for sampling in ("with_replacement", "without_replacement"):
        est = ResamplingUtilityEstimator(
            fp_penalty=0.0,
            tp_reward=0.0,
            cost_per_sample=1.0,
            k_max=8,
            sampling=sampling,
        ).fit(accepted, correct, groups)
        draws = []
        for t in np.unique(groups):
            a = accepted[groups == t]
            n_perm = 4000
            if sampling == "with_replacement":
                order = rng.randint(0, a.size, size=(n_perm, 8))
            else:
                order = np.argsort(rng.uniform(size=(n_perm, a.size)), axis=1)[:, :8]
            hit = a[order]
            first = np.where(hit.any(axis=1), hit.argmax(axis=1) + 1, order.shape[1])
            draws.append(first.mean())
        assert abs(-est.utility(8) - np.mean(draws)) < 0.05


def test_two_d_layout_equals_one_d_layout():
    accepted, correct, groups = _records(7, n_problems=10)
    pool = np.bincount(groups).max()
    A = np.full((10, pool), np.nan)
    C = np.full((10, pool), np.nan)
    for t in range(10):
        A[t, : np.sum(groups == t)] = accepted[groups == t]
        C[t, : np.sum(groups == t)] = correct[groups == t]
    one = ResamplingUtilityEstimator(sampling="without_replacement").fit(
        accepted, correct, groups
    )
    two = ResamplingUtilityEstimator(sampling="without_replacement").fit(A, C)
    assert_allclose(one.utility_curve_, two.utility_curve_)
    assert_array_equal(one.n_samples_per_problem_, two.n_samples_per_problem_)


def test_resampling_errors():
    est = ResamplingUtilityEstimator()
    with pytest.raises(ValueError, match="same shape"):
        est.fit([1, 0, 1], [1, 0], [0, 0, 1])
    with pytest.raises(ValueError, match="one id per sample"):
        est.fit([1, 0, 1], [1, 0, 1], [0, 0])
    with pytest.raises(ValueError, match="binary"):
        est.fit([1, 2, 1], [1, 0, 1], [0, 0, 1])
    with pytest.raises(ValueError, match="groups"):
        est.fit([1, 0, 1], [1, 0, 1])
    with pytest.raises(ValueError, match="empty problems"):
        records = np.array([[1, np.nan], [np.nan, np.nan]])
        est.fit(records, records)
    with pytest.raises(ValueError, match="fp_penalty"):
        ResamplingUtilityEstimator(fp_penalty=-1.0).fit([1], [1], [0])
    with pytest.raises(NotFittedError):
        est.utility(3)
    fitted = ResamplingUtilityEstimator().fit([1, 0], [1, 0], [0, 0])
    with pytest.raises(ValueError, match="non-negative integers"):
        fitted.utility(-1)


def test_resampling_estimator_api():
    # scikit-learn's API checks (the data checks do not apply: records, not
    # features; the estimator's tags say two_d_array=False)
    est = ResamplingUtilityEstimator(fp_penalty=2.0, k_max=20)
    name = type(est).__name__
    for check in (
        check_estimator_cloneable,
        check_estimator_repr,
        check_no_attributes_set_in_init,
        check_parameters_default_constructible,
        check_get_params_invariance,
        check_set_params,
        check_do_not_raise_errors_in_init_or_set_params,
    ):
        check(name, est)
    accepted, correct, groups = _records(8)
    fitted = clone(est).fit(accepted, correct, groups)
    again = pickle.loads(pickle.dumps(fitted))
    assert_array_equal(again.utility_curve_, fitted.utility_curve_)
    assert fitted.get_params() == est.get_params()  # fit leaves params alone
    refit = fitted.fit(accepted, correct, groups)
    assert_array_equal(refit.utility_curve_, again.utility_curve_)


# --------------------------------------------------------------------------
# Two-type model
# --------------------------------------------------------------------------


def test_two_type_exact_reward_and_notebook_difference():
    model = TwoTypeResamplingModel(fp_penalty=1.0)
    assert_allclose(model.expected_reward([2, 3]), [0.4724, 0.4614], atol=5e-4)
    assert_allclose(_notebook_reward(model, 3), 0.4637, atol=5e-4)
    assert [TwoTypeResamplingModel(fp_penalty=v).k_opt_ for v in (0.7, 1, 2)] == [
        3,
        2,
        1,
    ]


@pytest.mark.parametrize("seed", [0, 1])
def test_two_type_exact_reward_matches_monte_carlo(seed):
    rng = np.random.RandomState(seed)
    r = rng.uniform(0.05, 0.95, size=2)
    model = TwoTypeResamplingModel(
        r, (0.4, 0.6), completeness=0.9, soundness=0.7, fp_penalty=1.5, k_max=6
    )
    runs, K = 200_000, 4
    types = (rng.uniform(size=runs) < 0.6).astype(int)
    reward = np.zeros(runs)
    done = np.zeros(runs, dtype=bool)
    for _ in range(K):
        ok = rng.uniform(size=runs) < r[types]
        accept = np.where(
            ok, rng.uniform(size=runs) < 0.9, rng.uniform(size=runs) > 0.7
        )
        new = accept & ~done
        reward[new] = np.where(ok[new], 1.0, -1.5)
        done |= accept
    se = reward.std() / np.sqrt(runs)
    assert abs(reward.mean() - model.expected_reward(K)) < 4 * se


def test_two_type_from_counts_recovers_parameters():
    rng = np.random.RandomState(0)
    T, n = 4000, 200
    easy = rng.uniform(size=T) < 0.58
    rate = np.where(easy, 0.87, 0.13)
    tp = rng.binomial(n, rate)
    false_accept = rng.binomial(n - tp, 0.25)  # soundness 0.75, completeness 1
    model = TwoTypeResamplingModel.from_counts(np.full(T, n), tp + false_accept, tp)
    assert_allclose(model.success_rates, (0.87, 0.13), atol=0.01)
    assert_allclose(model.prior, (0.58, 0.42), atol=0.03)
    assert_allclose(model.soundness, 0.75, atol=0.01)
    with pytest.raises(ValueError, match="n_true_pos <= n_accept"):
        TwoTypeResamplingModel.from_counts([10], [3], [5])


def _two_type_population(T, seed, n=200, soundness=0.75):
    rng = np.random.RandomState(seed)
    rate = np.where(rng.uniform(size=T) < 0.58, 0.87, 0.13)
    tp = rng.binomial(n, rate)
    false_accept = rng.binomial(n - tp, 1 - soundness)
    return np.full(T, n), tp + false_accept, tp


def test_from_counts_pooled_and_notebook_soundness():
    # by hand: p = (0.9, 0.5, 0.0), r = (0.8, 0.1, 0.0), q = (8/9, 0.2, -)
    n, m, tp = [10, 10, 10], [9, 5, 0], [8, 1, 0]
    pooled = TwoTypeResamplingModel.from_counts(n, m, tp)
    notebook = TwoTypeResamplingModel.from_counts(
        n, m, tp, soundness_estimate="notebook"
    )
    p, r, q = 14 / 30, 9 / 30, (8 / 9 + 0.2) / 2  # q skips the problem with m = 0
    assert_allclose(pooled.soundness, (1 - p) / (1 - r), rtol=1e-12)
    assert_allclose(notebook.soundness, (1 - p - r + q * p) / (1 - r), rtol=1e-12)
    assert pooled.success_rates == notebook.success_rates
    # a population generated with s = 0.75: the pooled estimate recovers it
    # within binomial error (sd ~ 0.001 here); the notebook's product of means
    # does not, and it moves k* at penalties 1 and 4
    counts = _two_type_population(4000, 0)
    fits = {
        how: [
            TwoTypeResamplingModel.from_counts(
                *counts, soundness_estimate=how, fp_penalty=penalty
            )
            for penalty in (1, 4)
        ]
        for how in ("pooled", "notebook")
    }
    assert abs(fits["pooled"][0].soundness - 0.75) < 0.005
    assert fits["notebook"][0].soundness < 0.6
    assert [f.k_opt_ for f in fits["pooled"]] == [2, 1]
    assert [f.k_opt_ for f in fits["notebook"]] == [1, 0]
    with pytest.raises(ValueError, match="soundness_estimate"):
        TwoTypeResamplingModel.from_counts(n, m, tp, soundness_estimate="mean")


def test_ceiling_definitions_with_hopeless_problems():
    rng = np.random.RandomState(0)
    T, n = 164, 200
    rate = np.where(rng.uniform(size=T) < 0.58, 0.87, 0.13)
    correct = rng.uniform(size=(T, n)) < rate[:, None]
    accepted = correct | (rng.uniform(size=(T, n)) < 0.25)
    est = ResamplingUtilityEstimator(k_max=400).fit(accepted, correct)
    # no hopeless problem: both definitions are the same number
    assert_allclose(est.accuracy_ceiling_, est.conditional_accuracy_ceiling_)
    accepted[:8] = False  # 8 problems whose samples are all rejected
    correct[:8] = False
    est.fit(accepted, correct)
    q = est.precision_
    assert_allclose(est.accuracy_ceiling_, q.sum() / T, rtol=1e-12)
    assert_allclose(est.conditional_accuracy_ceiling_, q[8:].mean(), rtol=1e-12)
    assert_allclose(
        est.conditional_accuracy_ceiling_, est.accuracy_ceiling_ * T / (T - 8)
    )
    # Acc(k) tends to the all-problem ceiling, not to the conditional one
    assert_allclose(est.accuracy(10**6), est.accuracy_ceiling_, rtol=1e-9)
    assert est.conditional_accuracy_ceiling_ - est.accuracy_ceiling_ > 0.03
    none = ResamplingUtilityEstimator().fit(np.zeros((2, 3)), np.zeros((2, 3)))
    assert none.accuracy_ceiling_ == 0.0
    assert np.isnan(none.conditional_accuracy_ceiling_)


def test_covariance_estimator_object():
    # an estimator object is cloned and fitted on the burn-in rows, like the
    # strings: EmpiricalCovariance() gives the "empirical" estimate
    from sklearn.covariance import OAS, EmpiricalCovariance

    rng = np.random.RandomState(3)
    y = rng.normal(size=300)
    X = np.c_[y + rng.normal(scale=0.5, size=300), rng.normal(size=300)]
    y[100:] = np.nan
    by_name = MultiPPIMeanEstimator(covariance_estimator="empirical").fit(X, y)
    user = EmpiricalCovariance()
    by_object = MultiPPIMeanEstimator(covariance_estimator=user).fit(X, y)
    assert not hasattr(user, "covariance_")  # cloned, not fitted in place
    assert_allclose(by_object.covariance_, by_name.covariance_, rtol=1e-12)
    assert_allclose(by_object.estimate_, by_name.estimate_, rtol=1e-12)
    oas = MultiPPIMeanEstimator(covariance_estimator=OAS()).fit(X, y)
    expected = OAS().fit(np.c_[y, X][:100]).covariance_
    assert_allclose(oas.covariance_, expected, rtol=1e-12)
    assert oas.estimate_ != by_name.estimate_


def test_covariance_estimator_without_covariance_attribute():
    from sklearn.preprocessing import StandardScaler

    rng = np.random.RandomState(4)
    X, y = rng.normal(size=(50, 2)), rng.normal(size=50)
    est = MultiPPIMeanEstimator(covariance_estimator=StandardScaler())
    with pytest.raises(TypeError, match="no covariance_ attribute"):
        est.fit(X, y)


def test_resampling_verbose(capsys):
    accepted = np.array([1, 1, 0, 0, 1, 0, 1, 1])
    correct = np.array([1, 1, 0, 0, 0, 0, 1, 0])
    groups = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    quiet = ResamplingUtilityEstimator(k_max=10).fit(accepted, correct, groups)
    assert capsys.readouterr().out == ""
    est = ResamplingUtilityEstimator(k_max=10, verbose=1)
    est.fit(accepted, correct, groups)
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2
    assert all(line.startswith("[ResamplingUtilityEstimator] ") for line in lines)
    assert "2 problems, 8 samples" in lines[0]
    assert f"k_opt {est.k_opt_}" in lines[1]
    assert_array_equal(est.utility_curve_, quiet.utility_curve_)


@pytest.mark.parametrize("where", ["X", "y"])
@pytest.mark.parametrize("covariance_estimator", ["ledoit_wolf", "empirical"])
def test_multippi_huge_finite_values_get_a_clear_message(where, covariance_estimator):
    # issue 40 item 17: finite 1e300 inputs overflowed inside the covariance
    # and the user read "Input contains NaN" about an input without NaN
    rng = np.random.RandomState(0)
    X, y = rng.normal(size=(50, 2)), rng.normal(size=50)
    est = MultiPPIMeanEstimator(covariance_estimator=covariance_estimator)
    X_huge, y_huge = X.copy(), y.copy()
    if where == "X":
        X_huge[:, 0] *= 1e300
    else:
        y_huge *= 1e300
    with pytest.raises(ValueError, match=r"overflow float64.*Rescale"):
        clone(est).fit(X_huge, y_huge)
    # large but safe values still work: the estimate scales with y
    small = clone(est).fit(X, y)
    large = clone(est).fit(X * 1e30, y * 1e30)
    assert_allclose(large.estimate_, small.estimate_ * 1e30, rtol=1e-6)
    assert np.all(np.isfinite(large.confidence_interval_))
