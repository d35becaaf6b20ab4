"""Coverage of the CATE intervals: our T/X/G-learners against econml's.

For each replication, each learner is fitted on the same training sample with
the same base models (outcome and effect models ``Ridge(alpha=1.0)``,
propensity ``LogisticRegression()``; the G-learner with ``n_steps=3`` and its default
``combine="adapted"``) and the same number of bootstrap refits
``B``; the intervals are 95 % (``alpha=0.05``), pivot bootstrap on both
sides (econml's ``BootstrapInference(bootstrap_type="pivot")``, our
``bootstrap_type="pivot"``). econml's learners are ``TLearner``, ``XLearner``
and ``DRLearner`` (as econml's docs advise under weak overlap: propensities
clipped at ``min_propensity=0.05`` and 5-fold cross-fitting inside each
refit; final model the same ``Ridge``).

Reported per learner, averaged over replications:

* ``cate_cov``: the fraction of evaluation units whose true ``tau(x)`` lies in
  ``effect_interval(x)`` (pointwise coverage, nominal 0.95), and
  ``cate_width`` the mean interval width;
* ``ate_cov``: how often ``ate_interval(X_eval)`` holds the mean of the true
  ``tau`` over ``X_eval`` (nominal 0.95);
* ``aipw_cov`` (ours only): how often ``ate_aipw_interval()``, the
  influence-function interval of the doubly robust ATE, holds the training
  sample's mean true effect.

Data. ``sim``: ``n = 500`` training units, ``d = 4`` standard normal
covariates, ``P(T=1|x) = sigmoid(0.8 x0)``, ``mu0 = x0 + 0.5 x1``,
``tau = 1 + x1`` (linear: the models are well specified, so the interval's
bias is small and coverage is a test of the bootstrap), noise sd 1;
evaluation on 200 fresh units. ``ihdp``: Hill's IHDP surface B
(``load_ihdp``, 747 units, 25 covariates, the truth known), effects
evaluated on the training units (in-sample CATE, as is usual for IHDP); the
surface is non-linear, so with linear models the intervals are centred on a
biased estimate and coverage measures that bias as much as the bootstrap.

Results are appended one JSON line per (data, replication, learner) to
``benchmarks/results/cate_interval_coverage.jsonl`` as they are computed (a
rerun skips the lines already there), and the summary table is written to
``benchmarks/results/cate_interval_coverage.txt``.

Usage: ``python benchmarks/cate_interval_coverage.py`` (200 simulation and 20
IHDP replications, ``B = 100``, the IHDP ones interleaved so that a partial run
has both; on one quiet core about 12 s per simulation and 17 s per IHDP
replication for the six learners, 46 minutes in all), or ``--quick`` for a
smoke run (3 and 2 replications, ``B = 20``; its figures are not coverage
estimates).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import json
import warnings
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression, Ridge

from sklearn_iclr26.causal import (
    GeodesicCATERegressor,
    TLearnerRegressor,
    XLearnerRegressor,
)
from sklearn_iclr26.datasets import load_ihdp

RESULTS = Path(__file__).resolve().parent / "results"
ALPHA = 0.05
LEARNERS = ["ours T", "ours X", "ours G", "econml T", "econml X", "econml DR"]


def simulate(rep, n=500, n_eval=200, d=4):
    rng = np.random.RandomState(10_000 + rep)
    X = rng.normal(size=(n + n_eval, d))
    tau = 1.0 + X[:, 1]
    e = 1 / (1 + np.exp(-0.8 * X[:, 0]))
    t = (rng.uniform(size=len(X)) < e).astype(int)
    y = X[:, 0] + 0.5 * X[:, 1] + t * tau + rng.normal(size=len(X))
    tr = slice(0, n)
    ev = slice(n, n + n_eval)
    return X[tr], y[tr], t[tr], tau[tr], X[ev], tau[ev]


def ihdp(rep):
    b = load_ihdp(surface="B", random_state=rep)
    return b.data, b.target, b.treatment, b.tau, b.data, b.tau


def ours(kind, B, seed):
    common = {
        "propensity_estimator": LogisticRegression(),
        "n_bootstrap": B,
        "bootstrap_type": "pivot",
        "random_state": seed,
    }
    if kind == "T":
        return TLearnerRegressor(Ridge(alpha=1.0), **common)
    if kind == "X":
        return XLearnerRegressor(Ridge(alpha=1.0), **common)
    return GeodesicCATERegressor(
        Ridge(alpha=1.0), n_steps=3, combine="adapted", **common
    )


def run_ours(kind, B, seed, X, y, t, tau_tr, Xe, tau_e):
    est = ours(kind, B, seed).fit(X, y, treatment=t)
    lo, hi = est.effect_interval(Xe, confidence_level=1 - ALPHA)
    alo, ahi = est.ate_interval(Xe, confidence_level=1 - ALPHA, method="bootstrap")
    plo, phi = est.ate_aipw_interval(confidence_level=1 - ALPHA)
    return {
        "cate_cov": float(np.mean((lo <= tau_e) & (tau_e <= hi))),
        "cate_width": float(np.mean(hi - lo)),
        "ate_cov": float(alo <= tau_e.mean() <= ahi),
        "aipw_cov": float(plo <= tau_tr.mean() <= phi),
        "pehe": float(np.sqrt(np.mean((est.effect(Xe) - tau_e) ** 2))),
    }


def run_econml(kind, B, seed, X, y, t, tau_tr, Xe, tau_e):
    from econml.dr import DRLearner
    from econml.inference import BootstrapInference
    from econml.metalearners import TLearner, XLearner

    np.random.seed(seed)  # econml's bootstrap draws from the global state
    if kind == "T":
        est = TLearner(models=Ridge(alpha=1.0))
    elif kind == "X":
        est = XLearner(models=Ridge(alpha=1.0), propensity_model=LogisticRegression())
    else:
        est = DRLearner(
            model_propensity=LogisticRegression(),
            model_regression=Ridge(alpha=1.0),
            model_final=Ridge(alpha=1.0),
            min_propensity=0.05,
            cv=5,
            random_state=seed,
        )
    inference = BootstrapInference(
        n_bootstrap_samples=B, n_jobs=1, bootstrap_type="pivot"
    )
    est.fit(y, t, X=X, inference=inference)
    lo, hi = est.effect_interval(Xe, alpha=ALPHA)
    alo, ahi = est.ate_interval(Xe, alpha=ALPHA)
    return {
        "cate_cov": float(np.mean((lo <= tau_e) & (tau_e <= hi))),
        "cate_width": float(np.mean(hi - lo)),
        "ate_cov": float(alo <= tau_e.mean() <= ahi),
        "aipw_cov": None,
        "pehe": float(np.sqrt(np.mean((est.effect(Xe) - tau_e) ** 2))),
    }


def _mean_se(values):
    v = np.asarray(values, dtype=float)
    se = v.std(ddof=1) / np.sqrt(len(v)) if len(v) > 1 else np.nan
    return f"{v.mean():.3f}+-{se:.3f}"


def summarise(rows, path, header):
    lines = [header, "(mean +- standard error over replications)", ""]
    lines.append(
        f"{'data':6s} {'learner':10s} {'reps':>4s} {'cate_cov':>12s} "
        f"{'cate_width':>12s} {'ate_cov':>12s} {'aipw_cov':>12s} {'pehe':>12s}"
    )
    for data in ("sim", "ihdp"):
        for learner in LEARNERS:
            sel = [r for r in rows if r["data"] == data and r["learner"] == learner]
            if not sel:
                continue
            aipw = [r["aipw_cov"] for r in sel if r["aipw_cov"] is not None]
            cells = [
                _mean_se([r[key] for r in sel])
                for key in ("cate_cov", "cate_width", "ate_cov")
            ]
            cells.append(_mean_se(aipw) if aipw else "-")
            cells.append(_mean_se([r["pehe"] for r in sel]))
            lines.append(
                f"{data:6s} {learner:10s} {len(sel):4d} "
                + " ".join(f"{c:>12s}" for c in cells)
            )
    text = "\n".join(lines) + "\n"
    path.write_text(text)
    print(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke run")
    args = parser.parse_args()
    n_sim, n_ihdp, B = (3, 2, 20) if args.quick else (200, 20, 100)
    stem = "cate_interval_coverage" + ("_quick" if args.quick else "")
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"{stem}.jsonl"
    rows = (
        [json.loads(line) for line in out.read_text().splitlines()]
        if out.exists()
        else []
    )
    done = {(r["data"], r["rep"], r["learner"]) for r in rows}
    # IHDP replications interleaved with the simulation's, so that a partial
    # (resumed) run has both
    every = max(1, n_sim // max(4 * n_ihdp, 1))
    plan = []
    for rep in range(max(n_sim, n_ihdp * every)):
        if rep < n_sim:
            plan.append(("sim", rep))
        if rep % every == every - 1 and rep // every < n_ihdp:
            plan.append(("ihdp", rep // every))
    for data, rep in plan:
        arrays = simulate(rep) if data == "sim" else ihdp(rep)
        for learner in LEARNERS:
            if (data, rep, learner) in done:
                continue
            side, kind = learner.split()
            run = run_ours if side == "ours" else run_econml
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # IHDP's propensities near 0
                result = run(kind[0], B, rep, *arrays)
            row = {"data": data, "rep": rep, "learner": learner, "B": B, **result}
            rows.append(row)
            with out.open("a") as fh:
                fh.write(json.dumps(row) + "\n")
        print(f"{data} replication {rep} done", flush=True)
    header = (
        f"CATE interval coverage, alpha={ALPHA} (nominal 0.95), B={B} pivot "
        f"bootstrap, Ridge(alpha=1) models, LogisticRegression propensity"
        + (" -- QUICK SMOKE RUN, not coverage estimates" if args.quick else "")
    )
    summarise(rows, RESULTS / f"{stem}.txt", header)


if __name__ == "__main__":
    main()
