"""T- and X-learner fit cost against econml's ``TLearner`` / ``XLearner``.

Issue 46 item 4: ``TLearnerRegressor`` / ``XLearnerRegressor`` must fit in at
most 1.2x the time of econml's learners with identical predictions. Both
libraries get the same outcome model (``bench_cate.py``'s
``LGBMRegressor(n_estimators=100, num_leaves=15, n_jobs=1)``) on
``bench_cate.py``'s covariate-shift data; the X-learners the same
``LogisticRegression()`` propensity (econml's default). econml is called the
way its docs do (``TLearner(models=...).fit(Y, T, X=X)``, ``.effect(X)``).
Rounds are interleaved in one process (ours, econml, ours, econml, ...; the
order alternates between rounds), and each round gives a ratio ours / econml
for ``fit`` and for ``fit`` + ``predict``; the median and range over rounds
are reported, with the largest absolute difference of the predicted effects.

Usage (from the repository root)::

    PYTHONPATH=. OMP_NUM_THREADS=1 python benchmarks/cate_tx_cost.py [--rounds 5]

Appends its table to ``benchmarks/results/cate_tx_cost.txt`` under
``--label`` (e.g. ``before`` / ``after``); about 1 minute at 5 rounds.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cate import data, lgbm

import sklearn_iclr26
from sklearn_iclr26.causal import TLearnerRegressor, XLearnerRegressor

OUT = Path(__file__).resolve().parent / "results" / "cate_tx_cost.txt"


def ours(kind):
    if kind == "T":
        return TLearnerRegressor(lgbm())
    return XLearnerRegressor(lgbm(), propensity_estimator=LogisticRegression())


def anchor(kind):
    from econml.metalearners import TLearner, XLearner

    if kind == "T":
        return TLearner(models=lgbm())
    return XLearner(models=lgbm(), propensity_model=LogisticRegression())


def run_ours(kind, X, y, t):
    est = ours(kind)
    start = time.perf_counter()
    est.fit(X, y, treatment=t)
    fit = time.perf_counter() - start
    tau = est.predict(X)
    return fit, time.perf_counter() - start, tau


def run_anchor(kind, X, y, t):
    est = anchor(kind)
    start = time.perf_counter()
    est.fit(y, t, X=X)
    fit = time.perf_counter() - start
    tau = np.ravel(est.effect(X))
    return fit, time.perf_counter() - start, tau


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, nargs="+", default=[2000, 10000])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--label", default="")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    lines = [
        (
            f"[{args.label}] sklearn_iclr26 at {Path(sklearn_iclr26.__file__).parent}; "
            f"{args.rounds} interleaved rounds; ratio ours / econml, median (min-max)"
        ),
        (
            f"  {'learner':<8}{'n':>6}  {'fit ratio':<22}{'fit+predict ratio':<22}"
            "ours fit s  econml fit s  max |tau diff|"
        ),
    ]
    for n in args.n:
        X, y, t = data(n)
        for kind in ("T", "X"):
            run_ours(kind, X, y, t)  # warm-up (imports, allocator)
            run_anchor(kind, X, y, t)
            rows = []
            for r in range(args.rounds):
                if r % 2:
                    a = run_anchor(kind, X, y, t)
                    o = run_ours(kind, X, y, t)
                else:
                    o = run_ours(kind, X, y, t)
                    a = run_anchor(kind, X, y, t)
                rows.append((o[0] / a[0], o[1] / a[1], o[0], a[0]))
                diff = float(np.max(np.abs(o[2] - a[2])))
            r = np.array(rows)
            cells = [
                f"{np.median(r[:, j]):.2f} ({r[:, j].min():.2f}-{r[:, j].max():.2f})"
                for j in (0, 1)
            ]
            lines.append(
                f"  {kind:<8}{n:>6}  {cells[0]:<22}{cells[1]:<22}"
                f"{np.median(r[:, 2]):>10.3f}  {np.median(r[:, 3]):>12.3f}  {diff:.1e}"
            )
            print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n\n"
    OUT.parent.mkdir(exist_ok=True)
    with OUT.open("a") as fh:
        fh.write(text)
    print(text)


if __name__ == "__main__":
    main()
