"""Coverage of the cross-fitted AIPW ATE / ATT intervals (the new default).

Issue 40 item 15 (last part): the default ATE interval of the T-, X- and
G-learners must hold its level. ``benchmarks/cate_ate_coverage.py`` showed the
in-sample AIPW interval at 0.80-0.855 at 0.9 with boosted outcome models; the
learners now cross-fit it (``aipw_cv``, default 5). This script measures, on
the same two simulations and outcome models as that script (n = 500,
``LGBMRegressor(n_estimators=30, num_leaves=8)``, the default standardised
logistic propensity, level 0.9), each learner's interval over many
replications, with a Wilson 95 % band:

* T-learner ``ate_interval`` (the AIPW default) with ``aipw_cv`` = None
  (in-sample, the former default), 2, 5 (the new default) and 10;
* the same for ``att_aipw_interval`` (ATT, doubly robust);
* T-learner ``att_interval`` (the bootstrap interval of the plug-in ATT,
  B = 20 pivot refits; never measured before);
* X-learner and G-learner ``ate_interval`` and ``att_aipw_interval`` at the
  default ``aipw_cv=5`` (the G-learner on fewer replications, ``--g-reps``:
  each of its folds refits the whole G-learner).

Targets: the sample's mean true effect (SATE; SATT over its treated units)
and the population's (PATE in closed form; PATT by Monte Carlo over 2e6
draws). One JSON line per (simulation, replication) is appended to
``benchmarks/results/cate_ate_crossfit_coverage.jsonl`` (a rerun resumes);
the table goes to ``benchmarks/results/cate_ate_crossfit_coverage.txt``.

Usage (from the repository root)::

    PYTHONPATH=. OMP_NUM_THREADS=1 python benchmarks/cate_ate_crossfit_coverage.py

Default: 200 replications per simulation (G-learner: the first 60), about
10 CPU-minutes. ``--reps``, ``--g-reps``, ``--n``, ``--B`` override.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from lightgbm import LGBMRegressor

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cate_ate_coverage import SIMULATIONS, simulate, wilson

from sklearn_iclr26.causal import (
    GeodesicCATERegressor,
    TLearnerRegressor,
    XLearnerRegressor,
)

RESULTS = Path(__file__).resolve().parent / "results"
LEVEL = 0.9


def patt(name, n=2_000_000):
    """E[tau | T = 1] of a simulation, by Monte Carlo (seeded)."""
    rng = np.random.RandomState(12345)
    X = rng.normal(size=(n, 5))
    if name == "nonlinear":
        e = 1 / (1 + np.exp(-(0.6 * X[:, 0] - 0.4 * X[:, 1])))
        tau = 1 + 0.8 * np.tanh(X[:, 1]) + 0.5 * (X[:, 3] > 0)
    else:
        e = 1 / (1 + np.exp(-1.2 * X[:, 0]))
        tau = 1 + X[:, 0] / 2
    return float(np.sum(e * tau) / np.sum(e))


def fit(cls, outcome, X, y, t, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cls(outcome, **params).fit(X, y, treatment=t)


def one_replication(name, rep, args, outcome, with_g):
    X, y, t, tau = simulate(name, rep, args.n)
    intervals = {}
    for cv in (None, 2, 5, 10):
        est = fit(TLearnerRegressor, outcome, X, y, t, aipw_cv=cv, random_state=rep)
        intervals[f"T_ate_cv{cv}"] = est.ate_interval(X, confidence_level=LEVEL)
        intervals[f"T_att_cv{cv}"] = est.att_aipw_interval(confidence_level=LEVEL)
    est = fit(TLearnerRegressor, outcome, X, y, t, n_bootstrap=args.B, random_state=rep)
    intervals["T_att_interval_boot"] = est.att_interval(
        X, treatment=t, confidence_level=LEVEL
    )
    learners = [("X", XLearnerRegressor)]
    if with_g:
        learners.append(("G", GeodesicCATERegressor))
    for tag, cls in learners:
        est = fit(cls, outcome, X, y, t, random_state=rep)
        intervals[f"{tag}_ate_cv5"] = est.ate_interval(X, confidence_level=LEVEL)
        intervals[f"{tag}_att_cv5"] = est.att_aipw_interval(confidence_level=LEVEL)
    truth = {
        "ate": (float(tau.mean()), SIMULATIONS[name]),
        "att": (float(tau[t == 1].mean()), PATT[name]),
    }
    row = {"sim": name, "rep": rep, "n": args.n, "B": args.B}
    for method, (lo, hi) in intervals.items():
        sample, population = truth["att" if "_att" in method else "ate"]
        row[method] = [float(lo), float(hi)]
        row[f"{method}_s"] = bool(lo <= sample <= hi)
        row[f"{method}_p"] = bool(lo <= population <= hi)
    return row


def summarise(rows):
    lines = [
        (
            f"AIPW ATE / ATT interval coverage at confidence level {LEVEL} "
            "(boosted outcome models; Wilson 95 % band; s = sample, p = population)"
        ),
        "",
    ]
    for name in SIMULATIONS:
        sub = [r for r in rows if r["sim"] == name]
        if not sub:
            continue
        lines.append(f"{name}: n = {sub[0]['n']}, PATT = {PATT[name]:.4f}")
        lines.append(
            f"  {'method':<22}{'reps':>5}  {'cover s [band]':<24}"
            f"{'cover p [band]':<24}width"
        )
        methods = [k[:-2] for k in sub[0] if k.endswith("_s")]
        for key in sorted({k[:-2] for r in sub for k in r if k.endswith("_s")}):
            if key not in methods:
                methods.append(key)
        for method in methods:
            have = [r for r in sub if method in r]
            cells = []
            for target in ("s", "p"):
                k = sum(r[f"{method}_{target}"] for r in have)
                lo, hi = wilson(k, len(have))
                cells.append(f"{k / len(have):.3f} [{lo:.3f}, {hi:.3f}]")
            width = np.mean([r[method][1] - r[method][0] for r in have])
            lines.append(
                f"  {method:<22}{len(have):>5}  {cells[0]:<24}{cells[1]:<24}{width:.3f}"
            )
        lines.append("")
    return "\n".join(lines)


PATT = {}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--g-reps", type=int, default=60)
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--B", type=int, default=20)
    parser.add_argument("--out", default="cate_ate_crossfit_coverage")
    args = parser.parse_args()
    for name in SIMULATIONS:
        PATT[name] = patt(name)
    outcome = LGBMRegressor(n_estimators=30, num_leaves=8, n_jobs=1, verbose=-1)
    RESULTS.mkdir(exist_ok=True)
    jsonl = RESULTS / f"{args.out}.jsonl"
    rows = []
    if jsonl.exists():
        rows = [json.loads(line) for line in jsonl.read_text().splitlines() if line]
    start = time.perf_counter()
    with jsonl.open("a") as fh:
        for rep in range(args.reps):
            for name in SIMULATIONS:
                with_g = rep < args.g_reps
                old = [
                    r
                    for r in rows
                    if (r["sim"], r["rep"], r["n"]) == (name, rep, args.n)
                ]
                if old and (not with_g or "G_ate_cv5" in old[0]):
                    continue
                row = one_replication(name, rep, args, outcome, with_g)
                rows = [r for r in rows if r not in old] + [row]
                fh.write(json.dumps(row) + "\n")
                fh.flush()
            if rep % 10 == 9:
                print(
                    f"{rep + 1} replications, {time.perf_counter() - start:.0f} s",
                    flush=True,
                )
    # a line written twice (G added later) counts once: the last one
    last = {}
    for r in rows:
        if r["n"] == args.n and r["B"] == args.B:
            last[(r["sim"], r["rep"])] = r
    text = summarise(list(last.values()))
    (RESULTS / f"{args.out}.txt").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
