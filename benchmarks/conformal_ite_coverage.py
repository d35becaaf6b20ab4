"""Coverage of conformal counterfactual and ITE intervals (ConformalITERegressor).

Two studies, results appended one JSON line per (study, setting, replicate,
method) to ``benchmarks/results/conformal_ite_coverage.jsonl`` as they are
computed (a rerun skips what is there), summary in
``benchmarks/results/conformal_ite_coverage.txt``.

``sim``: simulations with known potential outcomes, ``n = 2000`` training and
``1000`` test units, ``d = 3`` standard normal covariates,
``P(T=1|x) = sigmoid(s x0)`` with propensity strength ``s`` in {0 (none,
a randomised trial), 0.5 (weak), 1.5 (strong)}, ``Y(0) = x0 + eps``,
``Y(1) = x0 + 1 + x1 + eps``, noise sd 0.5 (homoscedastic) or
``0.5 (1 + |x1|)`` (heteroscedastic). Per replicate and method: the
coverage of the unobserved arm (``predict_counterfactual_interval`` with the
test units' arms), the ITE coverage and the median width of
``predict_interval``, the share of infinite intervals; and the bootstrap
CATE interval of the T-learner (``effect_interval``, 50 pivot refits) as an
ITE interval: it answers another question (the *average* effect at ``x``).

``ihdp``: Hill's IHDP surface B (747 real units, 25 covariates, outcome noise
sd 1): 70 % of the units fit, the other 30 % are the test units, whose
missing potential outcome is drawn as the noiseless surface plus a fresh
N(0, 1) noise (Hill's model). Each of the T-, X- and G-learners (outcome
model ``HistGradientBoostingRegressor(max_iter=100)``) inside
``ConformalITERegressor(ite_method="bonferroni")``: ITE coverage and median
width.

Level 0.9 throughout. Usage: ``python benchmarks/conformal_ite_coverage.py``
(200 simulation replicates per setting, 100 IHDP replications; about 40 CPU
minutes), ``--quick`` (10 and 5; a smoke run, not coverage estimates).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.stats import beta
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.linear_model import LinearRegression

from sklearn_iclr26.causal import (
    ConformalITERegressor,
    GeodesicCATERegressor,
    TLearnerRegressor,
    XLearnerRegressor,
)
from sklearn_iclr26.datasets import load_ihdp

RESULTS = Path(__file__).resolve().parent / "results"
LEVEL = 0.9
STRENGTHS = {"none": 0.0, "weak": 0.5, "strong": 1.5}


def simulate(n, rng, strength, hetero):
    X = rng.normal(size=(n, 3))
    e = 1.0 / (1.0 + np.exp(-strength * X[:, 0]))
    t = (rng.uniform(size=n) < e).astype(int)
    sd = 0.5 * (1.0 + np.abs(X[:, 1])) if hetero else 0.5
    y0 = X[:, 0] + rng.normal(size=n) * sd
    y1 = X[:, 0] + 1.0 + X[:, 1] + rng.normal(size=n) * sd
    return X, t, np.where(t == 1, y1, y0), y0, y1


def _ite_record(interval, effect):
    finite = np.isfinite(interval).all(axis=1)
    width = interval[:, 1] - interval[:, 0]
    return {
        "ite_cov": float(
            np.mean((interval[:, 0] <= effect) & (effect <= interval[:, 1]))
        ),
        "width": float(np.median(width)),
        "infinite": float(1 - finite.mean()),
    }


def sim_rows(rep, strength_name, noise):
    rng = np.random.RandomState(1_000 * rep + 7)
    strength, hetero = STRENGTHS[strength_name], noise == "hetero"
    X, t, y, _, _ = simulate(2000, rng, strength, hetero)
    Xt, tt, _, y0t, y1t = simulate(1000, rng, strength, hetero)
    effect = y1t - y0t
    rows = []
    for method in ("bonferroni", "nested"):
        start = time.perf_counter()
        est = ConformalITERegressor(
            TLearnerRegressor(LinearRegression()), ite_method=method, random_state=rep
        ).fit(X, y, treatment=t)
        C = est.predict_counterfactual_interval(Xt, treatment=tt)
        cov0 = (C[:, 0, 0] <= y0t) & (y0t <= C[:, 0, 1])
        cov1 = (C[:, 1, 0] <= y1t) & (y1t <= C[:, 1, 1])
        record = _ite_record(est.predict_interval(Xt), effect)
        record["cf_cov"] = float(np.mean(np.where(tt == 1, cov0, cov1)))
        record["seconds"] = time.perf_counter() - start
        rows.append({"method": f"conformal {method}", **record})
    boot = TLearnerRegressor(LinearRegression(), n_bootstrap=50, random_state=rep)
    boot.fit(X, y, treatment=t)
    lo, hi = boot.effect_interval(Xt, confidence_level=LEVEL)
    rows.append({"method": "bootstrap CATE", **_ite_record(np.c_[lo, hi], effect)})
    return rows


def ihdp_rows(rep):
    data = load_ihdp(surface="B", random_state=rep)
    rng = np.random.RandomState(50_000 + rep)
    n = len(data.target)
    test = rng.uniform(size=n) < 0.3
    t = data.treatment
    y0 = np.where(t == 0, data.target, data.mu0 + rng.normal(size=n))
    y1 = np.where(t == 1, data.target, data.mu1 + rng.normal(size=n))
    X = data.data
    rows = []
    model = HistGradientBoostingRegressor(max_iter=100)
    for name, learner in (
        ("T", TLearnerRegressor(model)),
        ("X", XLearnerRegressor(model)),
        ("G", GeodesicCATERegressor(model)),
    ):
        est = ConformalITERegressor(learner, ite_method="bonferroni", random_state=rep)
        est.fit(X[~test], data.target[~test], treatment=t[~test])
        record = _ite_record(est.predict_interval(X[test]), (y1 - y0)[test])
        rows.append({"method": f"conformal bonferroni ({name})", **record})
    return rows


def _band(k, n, level=0.99):
    """Clopper-Pearson interval of a binomial proportion."""
    a = (1 - level) / 2
    lo = beta.ppf(a, k, n - k + 1) if k > 0 else 0.0
    hi = beta.ppf(1 - a, k + 1, n - k) if k < n else 1.0
    return lo, hi


def summarise(path):
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    groups = {}
    for r in lines:
        groups.setdefault((r["study"], r["setting"], r["method"]), []).append(r)
    header = (
        f"level {LEVEL}; mean coverage over replicates; median width; share "
        "infinite; share of replicates below the level (99 % Clopper-Pearson band)"
    )
    columns = (
        f"{'study':6} {'setting':14} {'method':30} {'reps':>4} {'cf_cov':>7} "
        f"{'ite_cov':>7} {'width':>7} {'inf':>6} {'below':>16}"
    )
    out = [header, columns]
    for (study, setting, method), rs in sorted(groups.items()):
        ite = np.array([r["ite_cov"] for r in rs])
        cf = [r["cf_cov"] for r in rs if "cf_cov" in r]
        below = int(np.sum(ite < LEVEL))
        lo, hi = _band(below, len(rs))
        out.append(
            f"{study:6} {setting:14} {method:30} {len(rs):4d} "
            f"{(np.mean(cf) if cf else float('nan')):7.3f} {ite.mean():7.3f} "
            f"{np.median([r['width'] for r in rs]):7.2f} "
            f"{np.mean([r['infinite'] for r in rs]):6.3f} "
            f"{below / len(rs):5.2f} [{lo:.2f}, {hi:.2f}]"
        )
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--sim-reps", type=int, default=200)
    parser.add_argument("--ihdp-reps", type=int, default=100)
    args = parser.parse_args()
    sim_reps, ihdp_reps = (10, 5) if args.quick else (args.sim_reps, args.ihdp_reps)
    RESULTS.mkdir(exist_ok=True)
    suffix = "_quick" if args.quick else ""
    path = RESULTS / f"conformal_ite_coverage{suffix}.jsonl"
    done = set()
    if path.exists():
        for x in path.read_text().splitlines():
            r = json.loads(x)
            done.add((r["study"], r["setting"], r["rep"]))
    jobs = [
        ("sim", f"{s}/{noise}", rep)
        for rep in range(sim_reps)
        for s in STRENGTHS
        for noise in ("homo", "hetero")
    ]
    # IHDP interleaved, so a partial run has both studies
    ihdp = [("ihdp", "B", rep) for rep in range(ihdp_reps)]
    step = max(len(jobs) // max(len(ihdp), 1), 1)
    for i, job in enumerate(ihdp):
        jobs.insert(min((i + 1) * step + i, len(jobs)), job)
    for study, setting, rep in jobs:
        if (study, setting, rep) in done:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if study == "sim":
                rows = sim_rows(rep, *setting.split("/"))
            else:
                rows = ihdp_rows(rep)
        with path.open("a") as f:
            for r in rows:
                f.write(
                    json.dumps({"study": study, "setting": setting, "rep": rep, **r})
                )
                f.write("\n")
        print(study, setting, rep, flush=True)
    table = summarise(path)
    (RESULTS / f"conformal_ite_coverage{suffix}.txt").write_text(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
