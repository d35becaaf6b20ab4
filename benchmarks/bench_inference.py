"""Benchmarks of the inference family against its anchors.

1. MultiPPI in its PPI++ special case vs ppi-python (``ppi_mean_ci``,
   ``ppi_power``) on the same real data (KEEL ``magic``, proxy = a logistic
   regression's probability, trained on a disjoint split) at equal budget:
   MSE ratio, CI width ratio (both at 95 %), time ratio, and the allocation.
2. Allocation speed and optimum of the three solvers: the reproduction's
   15-subset problem, and k = 6 and 10 sources (63 and 1,023 subsets).
3. Closed-form resampling curves vs the authors' permutation simulation:
   speed ratio and max deviation; curves for 10,000 problems x k_max = 1000.

Needs the ``inference`` extra (ppi-python). Writes
``benchmarks/results/bench_inference.txt``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import time
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from sklearn_iclr26.datasets import load_keel
from sklearn_iclr26.inference import (
    MultiPPIMeanEstimator,
    ResamplingUtilityEstimator,
    multippi_allocate,
)

OUT = Path(__file__).parent / "results" / "bench_inference.txt"


def bench_ppi(lines, reps=300, budget=300.0):
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate, ppi_power

    X, y = load_keel("magic", return_X_y=True)
    X = np.asarray(X, dtype=float)
    y = (np.asarray(y) == np.unique(y)[0]).astype(float)
    X_tr, X_pool, y_tr, y_pool = train_test_split(X, y, train_size=0.3, random_state=0)
    p = LogisticRegression(max_iter=500).fit(X_tr, y_tr).predict_proba(X_pool)[:, 1]
    truth = y_pool.mean()
    rho = np.corrcoef(y_pool, p)[0, 1]
    cov = np.cov(np.c_[y_pool, p].T)
    c_y, c_yhat = 1.0, 0.01
    ours = multippi_allocate(cov, [c_y, c_yhat], budget, subsets=[(0, 1), (1,)])
    theirs = ppi_power(
        cost_X=0.0, cost_Y=c_y, cost_Yhat=c_yhat, budget=budget, ppi_corr=rho
    )
    n, N = ours.counts[(0, 1)], ours.counts.get((1,), 0)
    lines.append(
        f"rho = {rho:.3f}; MultiPPI allocation n={n}, N={N}; ppi_power: {theirs}"
    )
    rng = np.random.RandomState(0)
    se = {"multippi": [], "ppi_py": []}
    width = {"multippi": [], "ppi_py": []}
    times = {"multippi": 0.0, "ppi_py": 0.0}
    for _ in range(reps):
        lab = rng.randint(0, len(y_pool), size=n)
        unl = rng.randint(0, len(y_pool), size=N)
        Y, Yhat, Yhat_u = y_pool[lab], p[lab], p[unl]
        start = time.perf_counter()
        Xm = np.r_[Yhat, Yhat_u][:, None]
        ym = np.r_[Y, np.full(N, np.nan)]
        est = MultiPPIMeanEstimator(covariance_estimator="empirical").fit(Xm, ym)
        times["multippi"] += time.perf_counter() - start
        start = time.perf_counter()
        point = ppi_mean_pointestimate(Y, Yhat, Yhat_u)
        low, high = ppi_mean_ci(Y, Yhat, Yhat_u, alpha=0.05)
        times["ppi_py"] += time.perf_counter() - start
        se["multippi"].append((est.estimate_ - truth) ** 2)
        se["ppi_py"].append((float(np.ravel(point)[0]) - truth) ** 2)
        width["multippi"].append(np.diff(est.confidence_interval_)[0])
        width["ppi_py"].append(float(np.ravel(high)[0] - np.ravel(low)[0]))
    mse = {k: np.mean(v) for k, v in se.items()}
    diff = np.array(se["multippi"]) - np.array(se["ppi_py"])
    lines.append(
        f"{reps} reps, budget {budget:g}: MSE multippi {mse['multippi']:.3e}, "
        f"ppi_py {mse['ppi_py']:.3e}, ratio {mse['multippi'] / mse['ppi_py']:.3f} "
        f"(paired diff {diff.mean():.2e} +/- {1.96 * diff.std() / np.sqrt(reps):.1e}); "
        f"CI width ratio {np.mean(width['multippi']) / np.mean(width['ppi_py']):.3f}; "
        f"time ratio {times['multippi'] / times['ppi_py']:.2f} "
        f"({1e3 * times['multippi'] / reps:.2f} ms vs "
        f"{1e3 * times['ppi_py'] / reps:.2f} ms)"
    )


def bench_allocation(lines):
    """Solver time and optimum: the 15-subset problem of the reproduction
    (KEEL magic, additive costs, 250 burn-in rows, B = 400) and random
    problems with 63 and 1,023 subsets."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from inference_reproduction import _pool, _proxies

    X_train, X_pool, y_train, y_pool = _pool(0)
    P, cost = _proxies("additive", X_train, y_train, X_pool)
    Z = np.c_[y_pool, P]
    burn = Z[np.random.RandomState(0).randint(0, Z.shape[0], size=250)]
    planner = MultiPPIMeanEstimator().fit(burn[:, 1:], burn[:, 0])
    problems = [
        (
            "KEEL magic additive, 15 subsets, B=400",
            planner.covariance_,
            cost,
            400.0,
            dict(planner.design_),
        )
    ]
    for k in (6, 10):
        rng = np.random.RandomState(0)
        L = rng.normal(size=(k, k))
        problems.append(
            (
                f"random k={k}, {2**k - 1} subsets, B=1000",
                L @ L.T + 0.1 * np.eye(k),
                rng.uniform(0.05, 1.0, size=k),
                1000.0,
                250,
            )
        )
    for label, cov, costs, budget, burn_in in problems:
        for solver in ("active_set", "multiplicative", "slsqp"):
            start = time.perf_counter()
            plan = multippi_allocate(cov, costs, budget, burn_in=burn_in, solver=solver)
            lines.append(
                f"allocation {label}, {solver}: "
                f"{time.perf_counter() - start:.3f} s, relaxed variance "
                f"{plan.relaxed_variance:.8e}, {plan.n_iter} iterations"
            )


def bench_resampling(lines):
    rng = np.random.RandomState(0)
    T, n = 200, 50
    correct = rng.uniform(size=(T, n)) < rng.uniform(size=(T, 1))
    accepted = correct | (rng.uniform(size=(T, n)) < rng.uniform(0, 0.4, size=(T, 1)))
    start = time.perf_counter()
    est = ResamplingUtilityEstimator(k_max=50, sampling="without_replacement").fit(
        accepted, correct
    )
    closed = time.perf_counter() - start
    start = time.perf_counter()
    n_perm = 1000
    acc = np.zeros(51)
    for t in range(T):
        order = np.argsort(rng.uniform(size=(n_perm, n)), axis=1)
        hit = accepted[t][order]
        first = np.where(hit.any(axis=1), hit.argmax(axis=1), n + 1)
        ok = correct[t][order[np.arange(n_perm), np.minimum(first, n - 1)]]
        for k in range(1, 51):
            acc[k] += np.mean((first < k) & ok) / T
    simulated = time.perf_counter() - start
    lines.append(
        f"resampling curves, 200 problems x 50 samples, k<=50: closed form "
        f"{closed * 1e3:.1f} ms, permutation simulation ({n_perm} perms) "
        f"{simulated:.2f} s, speed ratio {simulated / closed:.0f}x, max "
        f"deviation {np.abs(acc - est.accuracy_curve_).max():.4f}"
    )
    accepted = rng.uniform(size=(10_000, 20)) < 0.3
    correct = accepted & (rng.uniform(size=(10_000, 20)) < 0.6)
    start = time.perf_counter()
    ResamplingUtilityEstimator(k_max=1000).fit(accepted, correct)
    lines.append(
        f"curves for 10,000 problems x k_max=1000 (with replacement): "
        f"{time.perf_counter() - start:.2f} s"
    )


def main():
    lines = ["# bench_inference"]
    bench_ppi(lines)
    bench_allocation(lines)
    bench_resampling(lines)
    text = "\n".join(lines) + "\n"
    OUT.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
