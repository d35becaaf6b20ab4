"""Reproduction of Top-k / Top-k(x) learning to defer (Montreuil et al., ICLR 2026).

Accuracy (classification) or RMSE (regression) against the mean consultation
budget per query, on real data with simulated specialist experts
(:func:`sklearn_iclr26.datasets.make_experts`), for

* fixed Top-k, k = 1..|A| (one allocator fit serves every k);
* Top-1 L2D (= k = 1 of the same fit: the surrogate of classic two-stage
  multi-expert L2D is the k = 1 case of the Top-k surrogate);
* random-k (k entities drawn at random, ``N_RANDOM`` repeats);
* Top-k(x) over a sweep of ``budget_weight`` (cross-fitted cardinality model);
* the oracle best-k (per query, the k with the smallest "aggregate error +
  budget_weight * fees" given the true label, along the learned ranking).

Settings (reduced to run in a few minutes on 2 CPU cores; state them when you
quote the numbers): 4 random 50/50 train/test splits (seeds 0-3); 5 experts,
each mastering 30% of the classes (classification) or of the input space
(regression: 30% of 10 k-means cells), accuracy 0.9 to 0.95 inside (noise 0.1 std(y) to
0.05 std(y) for regression), near random outside, fees 0.02 to 0.1 (times
std(y) for regression); the base predictor is deliberately weak (a depth-3
decision tree) so that deferring matters, the allocator is the default
soft-label multinomial logistic regression, ``cv=5``.

Run::

    OMP_NUM_THREADS=1 python benchmarks/deferral_reproduction.py

The table is printed; ``--quick`` uses 2 seeds and 2 data sets.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import time

import numpy as np
from sklearn.datasets import load_diabetes, load_digits
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from sklearn_iclr26.datasets import load_keel, load_multioutput, make_experts
from sklearn_iclr26.deferral import TopKDeferralRegressor, TopKDeferrer
from sklearn_iclr26.deferral._surrogate import top_k_mask

N_EXPERTS = 5
N_RANDOM = 20
BUDGET_WEIGHTS = [0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0]


def load_datasets(quick=False):
    sets = []
    X, y = load_digits(return_X_y=True)
    sets.append(("digits", X, y, "classification"))
    for name in ("segment", "vehicle"):
        X, y = load_keel(name, return_X_y=True)
        sets.append((f"keel:{name}", X, y, "classification"))
    X, y = load_diabetes(return_X_y=True)
    sets.append(("diabetes", X, y, "regression"))
    X, Y = load_multioutput("enb", return_X_y=True)
    sets.append(("enb:heating", X, Y[:, 0], "regression"))
    if quick:
        sets = [sets[0], sets[3]]
    return sets


def _random_k(est, answers, available, evidence, y, k, rng, metric):
    values, budgets = [], []
    for _ in range(N_RANDOM):
        scores = rng.uniform(size=answers.shape)
        mask = top_k_mask(scores, k, available)
        values.append(
            metric(est._aggregate(answers, mask, scores, evidence=evidence), y)
        )
        budgets.append(float(np.mean(mask @ est.costs_)))
    return float(np.mean(values)), float(np.mean(budgets))


def run_one(name, X, y, task, seed):
    E, fees = make_experts(
        X,
        y,
        n_experts=N_EXPERTS,
        task=task,
        expertise="classes" if task == "classification" else "region",
        coverage=0.3,
        random_state=seed,
    )
    X_all = np.hstack([X, E])
    expert_columns = list(range(X.shape[1], X_all.shape[1]))
    stratify = y if task == "classification" else None
    X_tr, X_te, y_tr, y_te = train_test_split(
        X_all, y, test_size=0.5, random_state=seed, stratify=stratify
    )
    if task == "classification":
        est = TopKDeferrer(
            predictor=DecisionTreeClassifier(max_depth=3, random_state=seed),
            expert_columns=expert_columns,
            costs=fees,
            adaptive=True,
        )
    else:
        est = TopKDeferralRegressor(
            predictor=DecisionTreeRegressor(max_depth=3, random_state=seed),
            expert_columns=expert_columns,
            costs=fees,
            adaptive=True,
        )
    est.fit(X_tr, y_tr)
    curve = est.deferral_curve(X_te, y_te, budget_weights=BUDGET_WEIGHTS)
    scores, answers, available, evidence = est._entity_table(X_te)
    if task == "classification":
        y_cost = est._prepare_y_predict(y_te)

        def metric(pred, target):
            return float(np.mean(pred[0] == target))

        def point_error(pred, target):
            return (pred[0] != target).astype(float)

    else:
        y_cost = y_te

        def metric(pred, target):
            return float(np.sqrt(np.mean((pred - target) ** 2)))

        def point_error(pred, target):
            return np.abs(pred - target)

    rng = np.random.RandomState(seed)
    random_k = np.array(
        [
            _random_k(est, answers, available, evidence, y_cost, k, rng, metric)
            for k in curve.k
        ]
    )
    # oracle best-k along the learned ranking
    per_k_err, per_k_fee, per_k_pred = [], [], []
    for k in curve.k:
        mask = top_k_mask(scores, k, available)
        pred = est._aggregate(answers, mask, scores, evidence=evidence)
        per_k_err.append(point_error(pred, y_cost))
        per_k_fee.append(mask @ est.costs_)
        per_k_pred.append(pred[0] if task == "classification" else pred)
    per_k_err, per_k_fee = np.array(per_k_err).T, np.array(per_k_fee).T
    per_k_pred = np.array(per_k_pred).T
    oracle_score, oracle_budget = [], []
    rows = np.arange(len(y_cost))
    for lam in BUDGET_WEIGHTS:
        best = np.argmin(per_k_err + lam * per_k_fee, axis=1)
        pred = per_k_pred[rows, best]
        if task == "classification":
            oracle_score.append(float(np.mean(pred == y_cost)))
        else:
            oracle_score.append(float(np.sqrt(np.mean((pred - y_cost) ** 2))))
        oracle_budget.append(float(np.mean(per_k_fee[rows, best])))
    out = {
        "fixed": (curve.score, curve.budget),
        "random": (random_k[:, 0], random_k[:, 1]),
        "adaptive": (curve.adaptive_score, curve.adaptive_budget, curve.adaptive_k),
        "oracle": (np.array(oracle_score), np.array(oracle_budget)),
    }
    if task == "regression":
        # RMSE_min: best answer among the consulted entities (an oracle metric)
        rmse_min = []
        for k in curve.k:
            mask = top_k_mask(scores, k, available)
            err = np.where(mask, np.abs(answers - y_te[:, None]), np.inf).min(axis=1)
            rmse_min.append(float(np.sqrt(np.mean(err**2))))
        out["rmse_min"] = np.array(rmse_min)
    return out


def _fmt(values, digits=3):
    values = np.asarray(values)
    return f"{values.mean():.{digits}f} ± {values.std():.{digits}f}"


def report(name, task, runs):
    metric = "accuracy" if task == "classification" else "RMSE"
    print(f"\n### {name} ({metric} vs mean budget, mean ± std over {len(runs)} runs)")
    print(f"| method | setting | {metric} | budget | mean k |")
    print("|---|---|---|---|---|")
    fixed_s = np.array([r["fixed"][0] for r in runs])
    fixed_b = np.array([r["fixed"][1] for r in runs])
    for i in range(fixed_s.shape[1]):
        label = "Top-1 L2D / Top-k" if i == 0 else "Top-k"
        print(
            f"| {label} | k={i + 1} | {_fmt(fixed_s[:, i])} | {_fmt(fixed_b[:, i])} "
            f"| {i + 1} |"
        )
    rand_s = np.array([r["random"][0] for r in runs])
    rand_b = np.array([r["random"][1] for r in runs])
    for i in range(rand_s.shape[1]):
        print(
            f"| random-k | k={i + 1} | {_fmt(rand_s[:, i])} | {_fmt(rand_b[:, i])} "
            f"| {i + 1} |"
        )
    ad_s = np.array([r["adaptive"][0] for r in runs])
    ad_b = np.array([r["adaptive"][1] for r in runs])
    ad_k = np.array([r["adaptive"][2] for r in runs])
    for i, lam in enumerate(BUDGET_WEIGHTS):
        print(
            f"| Top-k(x) | λ={lam:g} | {_fmt(ad_s[:, i])} | {_fmt(ad_b[:, i])} "
            f"| {ad_k[:, i].mean():.2f} |"
        )
    or_s = np.array([r["oracle"][0] for r in runs])
    or_b = np.array([r["oracle"][1] for r in runs])
    for i, lam in enumerate(BUDGET_WEIGHTS):
        print(
            f"| oracle best-k | λ={lam:g} | {_fmt(or_s[:, i])} | {_fmt(or_b[:, i])} "
            "| - |"
        )
    if task == "regression":
        rmse_min = np.array([r["rmse_min"] for r in runs])
        print(
            "RMSE_min (best consulted answer, oracle metric) per k: "
            + ", ".join(_fmt(rmse_min[:, i], 1) for i in range(rmse_min.shape[1]))
        )

    # Top-k(x) against fixed Top-k, on the curves averaged over the runs
    sign = 1.0 if task == "classification" else -1.0  # larger is better
    mean_fixed, mean_budget = fixed_s.mean(axis=0), fixed_b.mean(axis=0)
    mean_ad, mean_ad_b = ad_s.mean(axis=0), ad_b.mean(axis=0)
    order = np.argsort(mean_budget)
    env_b = mean_budget[order]
    env = np.maximum.accumulate(sign * mean_fixed[order])  # best fixed k so far
    # (1) score gain at matched budget, for the Top-k(x) points inside the range
    inside = (mean_ad_b >= env_b[0]) & (mean_ad_b <= env_b[-1])
    gain = sign * mean_ad[inside] - np.interp(mean_ad_b[inside], env_b, env)
    # (2) budget fixed Top-k needs to match each Top-k(x) point's score
    savings = []
    for a, b in zip(sign * mean_ad, mean_ad_b):
        if b <= env_b[0] * 1.05 or a > env[-1]:
            continue  # the k=1 end, or beyond every fixed k
        needed = env_b[np.argmax(env >= a)]
        j = np.argmax(env >= a)
        if j > 0:  # linear interpolation between the two fixed points
            t = (a - env[j - 1]) / max(env[j] - env[j - 1], 1e-12)
            needed = env_b[j - 1] + t * (env_b[j] - env_b[j - 1])
        savings.append(1.0 - b / needed)
    best = int(np.argmax(sign * mean_fixed))
    summary = {
        "name": name,
        "top1": mean_fixed[0],
        "best_k": best + 1,
        "best_fixed": mean_fixed[best],
        "best_fixed_budget": mean_budget[best],
        "best_adaptive": mean_ad[int(np.argmax(sign * mean_ad))],
        "gain": float(np.mean(gain)) if gain.size else np.nan,
        "saving": float(np.median(savings)) if savings else np.nan,
        "n_saving": len(savings),
    }
    saving = "n/a" if not savings else f"{100 * summary['saving']:.0f}%"
    print(
        f"Top-k(x) gain over fixed Top-k at matched budget ({metric} "
        f"{'points' if sign > 0 else 'reduction'}, mean over "
        f"{gain.size} λ points): {summary['gain']:+.4f}; budget saving at "
        f"matched {metric} (median over {len(savings)} points): {saving}"
    )
    return summary


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    seeds = range(2) if args.quick else range(4)
    summaries = []
    start = time.perf_counter()
    for name, X, y, task in load_datasets(args.quick):
        if task == "classification":
            y = np.unique(y, return_inverse=True)[1]
        runs = [run_one(name, X, y, task, seed) for seed in seeds]
        summaries.append((task, report(name, task, runs)))
    print("\n### Summary")
    print(
        "| data | metric | Top-1 L2D | best fixed Top-k (k, budget) | best Top-k(x) "
        "| Top-k(x) gain at matched budget | budget saving at matched score "
        "(median, n) |"
    )
    print("|---|---|---|---|---|---|---|")
    for task, s in summaries:
        metric = "accuracy" if task == "classification" else "RMSE"
        saving = "n/a" if np.isnan(s["saving"]) else f"{100 * s['saving']:.0f}%"
        print(
            f"| {s['name']} | {metric} | {s['top1']:.3f} | {s['best_fixed']:.3f} "
            f"(k={s['best_k']}, {s['best_fixed_budget']:.3f}) | "
            f"{s['best_adaptive']:.3f} | {s['gain']:+.4f} | "
            f"{saving} ({s['n_saving']}) |"
        )
    print(f"\ntotal time {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
