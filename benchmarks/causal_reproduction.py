"""G-learner (GeodesicCATERegressor) against T-/X-learners on IHDP and a shift suite.

The paper ("Adjusting Prediction Model Through Wasserstein Geodesic for Causal
Inference", ICLR 2026) reports News, Twins and Jobs, and a synthetic suite whose
group shift is set by m_c; it reports no IHDP. Here:

* ``ihdp_B`` / ``ihdp_A``: Hill's (2011) response surfaces on the real IHDP
  covariates (747 children, 139 treated), generated offline by
  :func:`sklearn_iclr26.datasets.load_ihdp` (identical to
  ``econml.data.dgps.ihdp_surface_A/B``); one replication per seed, 90/10
  train/test split.
* ``shift_m{0.5,0.8,1.1,1.4}``: a covariate-shift suite in the spirit of the
  paper's m_c: n = 1000, d = 5, controls ``x ~ N(0, I)``, treated units
  ``x ~ N(m_c (1, 1, 0, 0, 0), I)`` (60/40), ``mu0 = sin(2 x1) + x2^2 / 2 + x3``,
  ``tau = 1 + x1 + 0.5 tanh(x2)``, noise sd 0.5; 80/20 train/test split.

Methods (each with the same outcome model): T-learner, X-learner (ours, same
estimator), econml's T/X/DR-learners when econml is installed (anchors; the
DRLearner as econml's docs advise under weak overlap: ``min_propensity=0.05``,
``cv=5``), and the G-learner with K in {0, 2, 4} and keep r in {0.6, 1.0}
(r = 0.6, the bagging filter, on the first ``--reps`` replications only);
each G fit is evaluated with all three ``combine`` rules (one fit). Outcome
model: LightGBM (``LGBMRegressor(n_estimators=100, num_leaves=15,
learning_rate=0.05)``). ``ihdp_B`` runs ``--reps-ihdp-b`` replications (100),
the others ``--reps`` (20).

``--torch-only`` runs the torch MLP instead (``--torch-reps`` = 10
replications, K in {0, 4}): ``torch`` is ``TorchMLPRegressor((64, 64),
alpha=1e-3)`` with a fresh clone per chain step; ``torch_warm`` is the same
network with ``dropout=0.1`` and the paper's chain: each step fine-tunes the
previous step's network (``warm_start_chain=True``), and K = 4, r = 0.6 uses
the MC-dropout filter. The T-/X-learner rows of each use the same network.

Metrics: sqrt(PEHE) and eps_ATE = |mean tau_hat - mean tau|, in-sample (train)
and out-of-sample (test). Summary: mean +- se over replications and the paired
difference to the T-learner (same model) with a 95 % t-interval.

Rows are appended to ``benchmarks/results/causal_reproduction.csv`` (LightGBM)
and ``causal_reproduction_torch.csv`` (torch) as they finish (a killed run
resumes where it stopped; the two can run side by side); the summary of both
goes to ``benchmarks/results/causal_reproduction.txt``.

Usage: ``python benchmarks/causal_reproduction.py [--reps 20] [--reps-ihdp-b
100] [--cases ...]`` and ``python benchmarks/causal_reproduction.py
--torch-only [--cases shift_m1.1 ihdp_B]``; ``--quick`` (or
``SKLEARN_ICLR26_QUICK=1``) runs 3 replications of two cases. CPU cost on one
quiet core: about 3 s per LightGBM replication with r = 1 only, 15 s with the
r = 0.6 filter grid (about 25 minutes at the defaults); the torch rows take
about 15 s (shift) to 80 s (IHDP-B) per replication.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import csv
import os
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.stats import t as student_t
from sklearn.model_selection import train_test_split

from sklearn_iclr26.causal import (
    GeodesicCATERegressor,
    TLearnerRegressor,
    XLearnerRegressor,
    ate_error,
    pehe_score,
)
from sklearn_iclr26.datasets import load_ihdp

RESULTS = Path(__file__).resolve().parent / "results"
CSV = RESULTS / "causal_reproduction.csv"
# the torch rows (a separate process may run them): their own file
CSV_TORCH = RESULTS / "causal_reproduction_torch.csv"
TXT = RESULTS / "causal_reproduction.txt"
FIELDS = [
    "case",
    "rep",
    "model",
    "method",
    "pehe_in",
    "pehe_out",
    "ate_in",
    "ate_out",
    "seconds",
]


def lgbm():
    from lightgbm import LGBMRegressor

    return LGBMRegressor(
        n_estimators=100, num_leaves=15, learning_rate=0.05, verbose=-1, n_jobs=1
    )


def torch_mlp():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from sklearn_iclr26.neural_network import TorchMLPRegressor

    return make_pipeline(
        StandardScaler(), TorchMLPRegressor((64, 64), alpha=1e-3, max_iter=200)
    )


def torch_mlp_dropout():
    """The torch MLP with dropout, for the fine-tuned chain's MC-dropout filter."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from sklearn_iclr26.neural_network import TorchMLPRegressor

    return make_pipeline(
        StandardScaler(),
        TorchMLPRegressor((64, 64), alpha=1e-3, max_iter=200, dropout=0.1),
    )


FACTORIES = {"lgbm": lgbm, "torch": torch_mlp, "torch_warm": torch_mlp_dropout}


def make_case(case, rep):
    if case.startswith("ihdp"):
        b = load_ihdp(surface=case[-1], random_state=rep)
        X, y, t, tau = b.data, b.target, b.treatment, b.tau
        test_size = 0.1
    else:
        m_c = float(case.split("_m")[1])
        rng = np.random.RandomState(1000 + rep)
        n, n1 = 1000, 400
        t = np.r_[np.zeros(n - n1), np.ones(n1)]
        X = rng.normal(size=(n, 5))
        X[t == 1, :2] += m_c
        tau = 1 + X[:, 0] + 0.5 * np.tanh(X[:, 1])
        mu0 = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 / 2 + X[:, 2]
        y = mu0 + t * tau + rng.normal(scale=0.5, size=n)
        test_size = 0.2
    return train_test_split(
        X, y, t, tau, test_size=test_size, random_state=rep, stratify=t
    )


def econml_methods(model_factory):
    try:
        from econml.dr import DRLearner
        from econml.metalearners import TLearner, XLearner
    except ImportError:
        return {}
    from sklearn.linear_model import LogisticRegression

    return {
        "econml_T": lambda: TLearner(models=model_factory()),
        "econml_X": lambda: XLearner(
            models=model_factory(), propensity_model=LogisticRegression(max_iter=1000)
        ),
        # as econml's docs advise for weak overlap: propensities clipped at
        # 0.05 and 5-fold cross-fitting (its default min_propensity=1e-6 and
        # cv=2 let IHDP's near-0 propensities blow up the DR pseudo-outcomes)
        "econml_DR": lambda: DRLearner(
            model_propensity=LogisticRegression(max_iter=1000),
            model_regression=model_factory(),
            model_final=model_factory(),
            min_propensity=0.05,
            cv=5,
            random_state=0,
        ),
    }


def run_rep(case, rep, model_name, grid, done, writer):
    Xtr, Xte, ytr, _, ttr, _, tautr, taute = make_case(case, rep)
    factory = FACTORIES[model_name]
    # "torch_warm": the paper's chain, each step fine-tuning the previous
    # step's network (warm_start), MC dropout as the filter's uncertainty
    chain = (
        {"warm_start_chain": True, "uncertainty": "mc_dropout"}
        if model_name == "torch_warm"
        else {}
    )

    def record(method, tau_in, tau_out, seconds):
        writer.writerow(
            {
                "case": case, "rep": rep, "model": model_name, "method": method,
                "pehe_in": pehe_score(tautr, tau_in),
                "pehe_out": pehe_score(taute, tau_out),
                "ate_in": ate_error(tautr, tau_in),
                "ate_out": ate_error(taute, tau_out),
                "seconds": round(seconds, 3),
            }
        )  # fmt: skip

    todo = lambda m: (case, str(rep), model_name, m) not in done
    for name, cls in (("T", TLearnerRegressor), ("X", XLearnerRegressor)):
        if todo(name):
            start = time.perf_counter()
            est = cls(factory(), random_state=rep).fit(Xtr, ytr, treatment=ttr)
            record(
                name, est.predict(Xtr), est.predict(Xte), time.perf_counter() - start
            )
    if model_name == "lgbm":
        for name, make in econml_methods(factory).items():
            if todo(name):
                start = time.perf_counter()
                est = make().fit(ytr, ttr, X=Xtr)
                record(
                    name, est.effect(Xtr), est.effect(Xte), time.perf_counter() - start
                )
    for K, keep in grid:
        names = [f"G_K{K}_r{keep}_{c}" for c in ("propensity", "source", "adapted")]
        if not any(todo(n) for n in names):
            continue
        start = time.perf_counter()
        est = GeodesicCATERegressor(
            factory(), n_steps=K, keep=keep, random_state=rep, **chain
        ).fit(Xtr, ytr, treatment=ttr)
        seconds = time.perf_counter() - start
        for name, combine in zip(names, ("propensity", "source", "adapted")):
            if todo(name):
                record(
                    name,
                    est.predict(Xtr, combine=combine),
                    est.predict(Xte, combine=combine),
                    seconds,
                )


def _read(paths=(CSV, CSV_TORCH)):
    rows = []
    for path in paths:
        if path.exists():
            with open(path, newline="") as f:
                rows += [r for r in csv.DictReader(f) if r.get("seconds")]
    return rows


def summarise():
    rows = _read()
    lines = [
        (
            "sqrt(PEHE) and eps_ATE: mean +- se over replications; d(PEHE_out) = "
            "paired difference to the T-learner (same model), 95% t-CI"
        ),
        "",
    ]
    keys = sorted({(r["case"], r["model"]) for r in rows})
    for case, model in keys:
        sub = [r for r in rows if r["case"] == case and r["model"] == model]
        base = {r["rep"]: float(r["pehe_out"]) for r in sub if r["method"] == "T"}
        lines.append(f"== {case} ({model}), {len(base)} replications")
        lines.append(
            f"{'method':28s} {'PEHE_in':>14s} {'PEHE_out':>14s} {'ATE_in':>12s} "
            f"{'ATE_out':>12s} {'d(PEHE_out) vs T [95% CI]':>30s}"
        )
        methods = sorted({r["method"] for r in sub}, key=lambda m: (m[0] != "T", m))
        for m in methods:
            mr = [r for r in sub if r["method"] == m]
            cells = []
            for key in ("pehe_in", "pehe_out", "ate_in", "ate_out"):
                v = np.array([float(r[key]) for r in mr])
                se = v.std(ddof=1) / np.sqrt(len(v)) if len(v) > 1 else np.nan
                cells.append(f"{v.mean():.3f}+-{se:.3f}")
            d = np.array(
                [float(r["pehe_out"]) - base[r["rep"]] for r in mr if r["rep"] in base]
            )
            if len(d) > 1:
                half = (
                    student_t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d))
                )
                diff = (
                    f"{d.mean():+.3f} [{d.mean() - half:+.3f}, {d.mean() + half:+.3f}]"
                )
            else:
                diff = ""
            lines.append(
                f"{m:28s} {cells[0]:>14s} {cells[1]:>14s} {cells[2]:>12s} "
                f"{cells[3]:>12s} {diff:>30s}"
            )
        lines.append("")
    TXT.write_text("\n".join(lines))
    print("\n".join(lines))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument(
        "--reps-ihdp-b",
        type=int,
        default=100,
        help="LightGBM replications of ihdp_B (the non-inferiority test)",
    )
    parser.add_argument("--cases", nargs="*", default=None)
    parser.add_argument(
        "--torch-only",
        action="store_true",
        help="only the torch MLP rows (fresh and fine-tuned chains), to "
        "causal_reproduction_torch.csv",
    )
    parser.add_argument("--torch-reps", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="smoke run")
    args = parser.parse_args()
    quick = args.quick or os.environ.get("SKLEARN_ICLR26_QUICK") == "1"
    cases = args.cases or (
        ["ihdp_B", "shift_m1.1"]
        if quick
        else [
            "ihdp_B",
            "ihdp_A",
            "shift_m0.5",
            "shift_m0.8",
            "shift_m1.1",
            "shift_m1.4",
        ]
    )
    reps = 3 if quick else args.reps
    grid = [(0, 1.0), (2, 1.0), (4, 1.0), (0, 0.6), (2, 0.6), (4, 0.6)]
    RESULTS.mkdir(exist_ok=True)
    done = {(r["case"], r["rep"], r["model"], r["method"]) for r in _read()}
    warnings.simplefilter("ignore")
    path = CSV_TORCH if args.torch_only else CSV
    new = not path.exists()
    with open(path, "a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        if new:
            writer.writeheader()
        for case in cases:
            if args.torch_only:
                for rep in range(min(reps, args.torch_reps)):
                    start = time.perf_counter()
                    run_rep(case, rep, "torch", [(0, 1.0), (4, 1.0)], done, writer)
                    f.flush()
                    run_rep(
                        case,
                        rep,
                        "torch_warm",
                        [(0, 1.0), (4, 1.0), (4, 0.6)],
                        done,
                        writer,
                    )
                    f.flush()
                    print(
                        f"{case} torch rep {rep}: {time.perf_counter() - start:.1f} s",
                        flush=True,
                    )
                continue
            n_reps = reps if quick or case != "ihdp_B" else max(reps, args.reps_ihdp_b)
            for rep in range(n_reps):
                start = time.perf_counter()
                # the bagging-filter ablation (r = 0.6) on the first `reps` only
                run_rep(
                    case, rep, "lgbm", grid if rep < reps else grid[:3], done, writer
                )
                f.flush()
                print(
                    f"{case} rep {rep}: {time.perf_counter() - start:.1f} s", flush=True
                )
    summarise()


if __name__ == "__main__":
    main()
