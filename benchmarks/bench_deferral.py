"""Timing of TopKDeferrer: fit cost and the cost of evaluating every k.

* fit of ``TopKDeferrer`` (k-independent surrogate, one allocator fit, plus
  the cross-fitted predictor answers) against a plain fit of the same base
  classifier, and against a plain ``LogisticRegression`` on the features (the
  allocator's model class);
* the built-in soft-label allocator (``n`` rows) against ``LogisticRegression``
  on the replicated rows (``n * |A|`` rows), same objective;
* ``deferral_curve`` over all k against one ``predict`` (target: at most
  1.5x per k on top of one predict, since nothing is refitted per k).

Run::

    OMP_NUM_THREADS=1 python benchmarks/bench_deferral.py
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import time

import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.datasets import make_experts
from sklearn_iclr26.deferral import TopKDeferrer


def best_time(fn, repeat=3, number=1):
    """Best mean time of ``number`` calls over ``repeat`` rounds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return min(times)


def main():
    X, y = load_digits(return_X_y=True)
    n_experts = 5
    experts, fees = make_experts(X, y, n_experts=n_experts, random_state=0)
    X_all = np.hstack([X, experts])
    expert_columns = list(range(X.shape[1], X_all.shape[1]))
    base = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))

    t_base = best_time(lambda: base.fit(X, y))
    soft = TopKDeferrer(base, expert_columns=expert_columns, costs=fees)
    t_soft = best_time(lambda: soft.fit(X_all, y))
    replicated = TopKDeferrer(
        make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)),
        base,
        expert_columns=expert_columns,
        costs=fees,
    )
    t_rep = best_time(lambda: replicated.fit(X_all, y))
    print(f"data: digits {X.shape}, {n_experts} experts, |A| = {soft.n_entities_}")
    print("| what | time (s) | ratio to base fit |")
    print("|---|---|---|")
    print(f"| base classifier fit | {t_base:.3f} | 1.00 |")
    print(
        f"| TopKDeferrer fit, soft-label allocator (incl. 5-fold cross-fitted "
        f"predictor) | {t_soft:.3f} | {t_soft / t_base:.2f} |"
    )
    print(
        f"| TopKDeferrer fit, LogisticRegression on replicated rows | {t_rep:.3f} "
        f"| {t_rep / t_base:.2f} |"
    )

    t_predict = best_time(lambda: soft.predict(X_all), repeat=7, number=10)
    t_curve = best_time(lambda: soft.deferral_curve(X_all, y), repeat=7, number=10)
    n_k = soft.n_entities_
    print("\n| what | time (s) | ratio to one predict |")
    print("|---|---|---|")
    print(f"| predict (k=1) | {t_predict:.4f} | 1.00 |")
    print(
        f"| deferral_curve, all {n_k} values of k | {t_curve:.4f} | "
        f"{t_curve / t_predict:.2f} ({t_curve / t_predict / n_k:.2f} per k) |"
    )
    refit = best_time(
        lambda: [
            TopKDeferrer(base, expert_columns=expert_columns, costs=fees, k=k)
            .fit(X_all, y)
            .predict(X_all)
            for k in range(1, n_k + 1)
        ],
        repeat=1,
    )
    print(
        f"| refit + predict per k (what GridSearchCV over k does) | {refit:.3f} "
        f"| {refit / t_predict:.0f} |"
    )


if __name__ == "__main__":
    main()
