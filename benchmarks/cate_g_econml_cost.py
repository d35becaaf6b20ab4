"""G-learner cost against econml's ``TLearner``, and its approximate mode.

Issue 46 item 4: ``GeodesicCATERegressor`` should fit in at most 5x econml's
``TLearner`` at n <= 10,000 with the same results, or offer an approximate
mode whose effect on PEHE is measured. Data and outcome model are
``bench_cate.py``'s (covariate shift, ``LGBMRegressor(n_estimators=100,
num_leaves=15, n_jobs=1)``; true effect ``1 + x0``, so PEHE is known). The
variants: the G-learner at its defaults (exact EMD plan on at most
``max_ot_samples=5000`` units) and with ``max_ot_samples`` = 2000 and 1000
(the plan, and so the geodesic chain's training sets, on a random
subsample of the units: the approximate mode). econml is called the way its
docs do (``TLearner(models=...).fit(Y, T, X=X)``, ``.effect(X)``). Rounds
are interleaved in one process (the order rotates between rounds); each
round gives ratios G / econml for ``fit`` and ``fit + predict``; medians
and ranges are reported, with each variant's PEHE (root mean squared error
of the predicted effect on the training rows, median over rounds) and the
T-learner's.

Usage (from the repository root)::

    PYTHONPATH=. OMP_NUM_THREADS=1 python benchmarks/cate_g_econml_cost.py [--rounds 3]

Appends its table to ``benchmarks/results/cate_g_econml_cost.txt`` under
``--label``; about 2 minutes at 3 rounds.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cate import data, lgbm

import sklearn_iclr26
from sklearn_iclr26.causal import GeodesicCATERegressor

OUT = Path(__file__).resolve().parent / "results" / "cate_g_econml_cost.txt"
VARIANTS = {
    "G default": {},
    "G m=2000": {"max_ot_samples": 2000},
    "G m=1000": {"max_ot_samples": 1000},
    # fewer geodesic steps: 2 + 2 (K + 1) = 6 outcome-model fits instead of 10
    "G m=1000 K=1": {"max_ot_samples": 1000, "n_steps": 1},
}
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def run(name, X, y, t, seed, clock=time.perf_counter):
    start = clock()
    if name == "econml T":
        from econml.metalearners import TLearner

        est = TLearner(models=lgbm()).fit(y, t, X=X)
        fit = clock() - start
        tau = np.ravel(est.effect(X))
    else:
        est = GeodesicCATERegressor(lgbm(), random_state=seed, **VARIANTS[name])
        est.fit(X, y, treatment=t)
        fit = clock() - start
        tau = est.predict(X)
    return fit, clock() - start, tau


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, nargs="+", default=[2000, 10000])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--label", default="")
    parser.add_argument(
        "--clock",
        choices=list(CLOCKS),
        default="wall",
        help="wall-clock time, or the process's CPU time (steadier on a busy machine)",
    )
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    names = ["econml T", *VARIANTS]
    lines = [
        (
            f"[{args.label}] sklearn_iclr26 at "
            f"{Path(sklearn_iclr26.__file__).parent}; {args.rounds} interleaved "
            f"rounds, {args.clock} clock; "
            "ratio to econml TLearner, median (min-max); PEHE median"
        ),
        (
            f"  {'learner':<14}{'n':>6}  {'fit ratio':<22}{'fit+predict ratio':<22}"
            "fit s     PEHE"
        ),
    ]
    for n in args.n:
        X, y, t = data(n)
        tau_true = 1 + X[:, 0]
        for name in names:
            run(name, X[:500], y[:500], t[:500], 0)  # warm-up
        res = {name: [] for name in names}
        for r in range(args.rounds):
            order = names[r % len(names) :] + names[: r % len(names)]
            for name in order:
                res[name].append(run(name, X, y, t, r, CLOCKS[args.clock]))
        for name in names:
            fits = np.array([o[0] for o in res[name]])
            totals = np.array([o[1] for o in res[name]])
            base_fit = np.array([o[0] for o in res["econml T"]])
            base_tot = np.array([o[1] for o in res["econml T"]])
            cells = [
                f"{np.median(v):.2f} ({v.min():.2f}-{v.max():.2f})"
                for v in (fits / base_fit, totals / base_tot)
            ]
            pehe = np.median(
                [np.sqrt(np.mean((o[2] - tau_true) ** 2)) for o in res[name]]
            )
            lines.append(
                f"  {name:<14}{n:>6}  {cells[0]:<22}{cells[1]:<22}"
                f"{np.median(fits):<10.3f}{pehe:.4f}"
            )
            print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n\n"
    with OUT.open("a") as fh:
        fh.write(text)
    print(text)


if __name__ == "__main__":
    main()
