"""ConNAS on the NAS-Bench-201 table surrogate (no training, a few minutes).

The supernet is replaced by the exact expected accuracy of the per-edge
softmax distribution over the 15,625 NAS-Bench-201 cells (see
``benchmarks/connas_nb201_surrogate.py``); the hardware cost is the exact
parameter count of the TinyNetwork. ConNAS's rule (the same function the
estimator uses) is run at several budgets and seeds and compared with the
penalty baseline (``-E[acc] + lambda * E[cost] / budget``, final argmax) over a
grid of lambda.

By default the search optimises the CIFAR-10 *validation* accuracy and is
scored on the *test* accuracy (``--objective cifar10-test`` optimises the
score itself, as the method note's sanity check did). Gaps are to the best
feasible cell of the table by test accuracy.

The table is not shipped with the package::

    python benchmarks/connas_nasbench201.py \
        --table ../shared/data/nas/nasbench201_accuracies.csv
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from connas_nb201_surrogate import (
    load_nasbench201_table,
    nasbench201_cost,
    table_surrogate_search,
)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", required=True, help="nasbench201_accuracies.csv")
    parser.add_argument("--objective", default="cifar10-val")
    parser.add_argument("--metric", default="cifar10-test")
    parser.add_argument("--cost", default="params", choices=["params", "flops"])
    parser.add_argument("--budgets", type=float, nargs="+", default=None)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--lr", type=float, default=0.5)
    parser.add_argument(
        "--lambdas", type=float, nargs="+", default=[0.1, 0.3, 1, 3, 10, 30, 100]
    )
    args = parser.parse_args()

    t0 = time.perf_counter()
    score = load_nasbench201_table(args.table, column=args.metric)
    objective = load_nasbench201_table(args.table, column=args.objective)
    cost = nasbench201_cost(args.cost)
    budgets = args.budgets or (
        [0.3e6, 0.5e6, 0.8e6] if args.cost == "params" else [40.0, 80.0, 120.0]
    )
    seeds = range(args.seeds)
    print(
        f"NAS-Bench-201 table surrogate: objective={args.objective}, "
        f"metric={args.metric}, cost={args.cost}, {args.steps} steps, lr={args.lr}, "
        f"{args.seeds} seeds\n"
    )
    print(
        "| budget | feasible cells | best feasible | method | feasible | "
        "mean acc | mean gap (pt) | max gap (pt) | mean rel. gap |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    methods = [
        (f"ConNAS R={r}", {"method": "connas", "rescale_factor": r}) for r in (1.5, 3.0)
    ]
    methods += [
        (
            "ConNAS R=3 selected-op",
            {"method": "connas", "rescale_factor": 3.0, "direction": "selected"},
        ),
    ]
    methods += [
        (f"penalty lambda={lam:g}", {"method": "penalty", "penalty": lam})
        for lam in args.lambdas
    ]
    for budget in budgets:
        mask = cost <= budget
        best = score[mask].max()
        oracle = np.unravel_index(
            np.argmax(np.where(mask, objective, -np.inf)), cost.shape
        )
        gap = best - score[oracle]
        print(
            f"| {budget:g} | {int(mask.sum())} | {best:.2f} | oracle: best "
            f"{args.objective} cell | 1/1 | {score[oracle]:.2f} | {gap:.2f} | "
            f"{gap:.2f} | {100 * gap / best:.2f} % |"
        )
        for name, kwargs in methods:
            feas, accs, gaps = [], [], []
            for seed in seeds:
                res = table_surrogate_search(
                    objective,
                    cost,
                    budget,
                    n_steps=args.steps,
                    learning_rate=args.lr,
                    random_state=seed,
                    **kwargs,
                )
                acc = score[res["arch"]]
                feas.append(res["feasible"])
                accs.append(acc)
                if res["feasible"]:
                    gaps.append(best - acc)
            gap_txt = (
                f"{np.mean(gaps):.2f} | {np.max(gaps):.2f} | "
                f"{100 * np.mean(gaps) / best:.2f} %"
                if gaps
                else "- | - | -"
            )
            print(
                f"| {budget:g} | {int(mask.sum())} | {best:.2f} | {name} | "
                f"{sum(feas)}/{len(feas)} | {np.mean(accs):.2f} | {gap_txt} |"
            )
    print(f"\n(gaps over feasible runs only; {time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
