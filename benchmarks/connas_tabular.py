"""ConNAS on an enumerable MLP space with exhaustive ground truth (real data).

Protocol (NAS-Bench style, on tabular data):

1. Space: ``MLPSearchSpace(n_layers=3, widths=(0, 8, 16, 32, 64),
   activations=("relu",))``, 5^3 = 125 architectures; cost = parameters.
2. Ground truth: on a stratified 70/30 train/test split of each dataset
   (standardised features), every architecture is trained on the training part
   (full-batch Adam, ``--gt-epochs`` epochs, lr 1e-2, ``--gt-seeds`` seeds,
   through the package's skorch helper) and scored on the test part.
3. Budgets at the 25/50/75 % quantiles of the parameter counts of the space.
4. Searches run on the training part only (their own 50/50 search-train /
   validation split) with ``refit=False``; the chosen architecture is scored
   by its ground-truth test accuracy. Methods: ConNAS (R = 1.5 and 3), the
   penalty baseline over a lambda grid (final argmax), and constrained random
   search with as many candidates as fit in ConNAS's mean search time
   (candidates trained ``--candidate-epochs`` epochs each).
5. Reported: feasibility rate, gap to the best feasible ground-truth
   accuracy (points), and search time relative to the exhaustive training of
   the 125 architectures.

Reduced for a shared 2-core CPU; the defaults take roughly 10-15 minutes::

    OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/connas_tabular.py
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import time

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, load_wine
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.datasets import load_keel
from sklearn_iclr26.nas import (
    ConNASSearch,
    MLPSearchSpace,
    PenaltyNASSearch,
    RandomNASSearch,
)
from sklearn_iclr26.nas._refit import _ArchitectureClassifier

SPACE = MLPSearchSpace(n_layers=3, widths=(0, 8, 16, 32, 64), activations=("relu",))


def load(name, max_samples, seed):
    loaders = {
        "wine": load_wine,
        "breast_cancer": load_breast_cancer,
        "digits": load_digits,
    }
    if name in loaders:
        X, y = loaders[name](return_X_y=True)
    else:
        X, y = load_keel(name, return_X_y=True)
    if len(y) > max_samples:
        X, _, y, _ = train_test_split(
            X, y, train_size=max_samples, stratify=y, random_state=seed
        )
    X_tr, X_te, y_tr, y_te = train_test_split(
        X, y, test_size=0.3, stratify=y, random_state=seed
    )
    scaler = StandardScaler().fit(X_tr)
    return scaler.transform(X_tr), scaler.transform(X_te), y_tr, y_te


def ground_truth(X_tr, y_tr, X_te, y_te, epochs, seeds):
    archs = list(SPACE.iter_architectures(X_tr.shape[1], len(np.unique(y_tr))))
    acc, t0 = {}, time.perf_counter()
    for arch in archs:
        scores = [
            _ArchitectureClassifier(SPACE, arch, max_iter=epochs, random_state=s)
            .fit(X_tr, y_tr)
            .score(X_te, y_te)
            for s in range(seeds)
        ]
        acc[arch] = float(np.mean(scores))
    return acc, time.perf_counter() - t0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--datasets",
        nargs="+",
        default=["wine", "breast_cancer", "digits", "phoneme"],
    )
    parser.add_argument("--max-samples", type=int, default=800)
    parser.add_argument("--gt-epochs", type=int, default=100)
    parser.add_argument("--gt-seeds", type=int, default=1)
    parser.add_argument("--search-epochs", type=int, default=50)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--candidate-epochs", type=int, default=30)
    parser.add_argument("--lambdas", type=float, nargs="+", default=[0.01, 0.1, 1, 10])
    args = parser.parse_args()

    rows = []
    for name in args.datasets:
        X_tr, X_te, y_tr, y_te = load(name, args.max_samples, 0)
        n_classes = len(np.unique(y_tr))
        gt, t_exhaustive = ground_truth(
            X_tr, y_tr, X_te, y_te, args.gt_epochs, args.gt_seeds
        )
        probe = ConNASSearch(SPACE, refit=False, max_iter=1).fit(X_tr, y_tr)
        costs = {a: probe.cost_of(a) for a in gt}
        t_candidate = t_exhaustive / len(gt) / args.gt_seeds
        t_candidate *= args.candidate_epochs / args.gt_epochs
        print(
            f"\n{name}: {X_tr.shape[0]} train / {X_te.shape[0]} test rows, "
            f"{X_tr.shape[1]} features, {n_classes} classes; exhaustive training "
            f"of {len(gt)} architectures: {t_exhaustive:.1f} s",
            flush=True,
        )
        cost_values = np.array(list(costs.values()))
        for q in (0.25, 0.5, 0.75):
            budget = float(np.quantile(cost_values, q))
            feasible = [a for a in gt if costs[a] <= budget]
            best = max(gt[a] for a in feasible)

            ctx = {
                "dataset": name,
                "q": q,
                "budget": budget,
                "n_feasible": len(feasible),
                "best": best,
                "t_exh": t_exhaustive,
            }

            def record(method, est, seconds, ctx=ctx, gt=gt, costs=costs):
                arch = tuple(est.best_architecture_.values())
                ok = costs[arch] <= ctx["budget"]
                rows.append(
                    {
                        **ctx,
                        "method": method,
                        "feasible": ok,
                        "acc": gt[arch],
                        "gap": ctx["best"] - gt[arch] if ok else np.nan,
                        "time": seconds,
                    }
                )

            common = {
                "budget": budget,
                "max_iter": args.search_epochs,
                "refit": False,
            }
            connas_times = []
            for seed in range(args.seeds):
                for R in (1.5, 3.0):
                    t0 = time.perf_counter()
                    est = ConNASSearch(
                        SPACE, rescale_factor=R, random_state=seed, **common
                    ).fit(X_tr, y_tr)
                    dt = time.perf_counter() - t0
                    connas_times.append(dt)
                    record(f"ConNAS R={R}", est, dt)
                for lam in args.lambdas:
                    t0 = time.perf_counter()
                    est = PenaltyNASSearch(
                        SPACE, penalty=lam, random_state=seed, **common
                    ).fit(X_tr, y_tr)
                    record(f"penalty lambda={lam:g}", est, time.perf_counter() - t0)
            n_cand = max(1, round(np.mean(connas_times) / t_candidate))
            for seed in range(args.seeds):
                t0 = time.perf_counter()
                est = RandomNASSearch(
                    SPACE,
                    n_candidates=n_cand,
                    max_iter=args.candidate_epochs,
                    budget=budget,
                    refit=False,
                    random_state=seed,
                ).fit(X_tr, y_tr)
                record(f"random ({n_cand} cand.)", est, time.perf_counter() - t0)
            print(f"  budget q={q}: {budget:.0f} params done", flush=True)

    print(
        "\n| dataset | budget (q) | feasible archs | best feasible acc | method | "
        "feasible | mean acc | mean gap (pt) | search time / exhaustive |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    keys = []
    for r in rows:
        key = (r["dataset"], r["q"], r["method"])
        if key not in keys:
            keys.append(key)
    summary = {}
    for key in keys:
        sel = [r for r in rows if (r["dataset"], r["q"], r["method"]) == key]
        r0 = sel[0]
        gaps = [r["gap"] for r in sel if r["feasible"]]
        gap = f"{100 * np.mean(gaps):.2f}" if gaps else "-"
        ratio = np.mean([r["time"] / r["t_exh"] for r in sel])
        print(
            f"| {r0['dataset']} | {r0['budget']:.0f} ({r0['q']}) | {r0['n_feasible']} "
            f"| {100 * r0['best']:.2f} | {r0['method']} | "
            f"{sum(r['feasible'] for r in sel)}/{len(sel)} | "
            f"{100 * np.mean([r['acc'] for r in sel]):.2f} | {gap} | "
            f"{100 * ratio:.1f} % |"
        )
        method = key[2].split(" (")[0]
        summary.setdefault(method, []).extend(sel)
    print("\nOverall (all datasets and budgets):\n")
    print("| method | feasible | mean gap (pt) | search time / exhaustive |")
    print("|---|---|---|---|")
    for method, sel in summary.items():
        gaps = [r["gap"] for r in sel if r["feasible"]]
        gap = f"{100 * np.mean(gaps):.2f}" if gaps else "-"
        print(
            f"| {method} | {sum(r['feasible'] for r in sel)}/{len(sel)} | {gap} | "
            f"{100 * np.mean([r['time'] / r['t_exh'] for r in sel]):.1f} % |"
        )


if __name__ == "__main__":
    main()
