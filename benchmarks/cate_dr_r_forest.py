"""sqrt(PEHE) and interval coverage of the DR-, R-learner and causal forest.

Issue 45 item 7. Two parts, each appending one JSON line per (part, data
set, replication, method) to ``benchmarks/results/cate_dr_r_forest.jsonl``
as it is computed (a rerun skips the lines already there); the tables go to
``benchmarks/results/cate_dr_r_forest.txt``.

``pehe``: held-out sqrt(PEHE) (30 % of the rows, stratified by treatment)
and the error of the doubly robust ATE, on two semi-synthetic tables:

* ``ihdp``: IHDP response surface B (``load_ihdp``; 747 units, 25 real
  covariates; skipped with a message when the covariate file is missing);
* ``diabetes``: the 442 x 10 real covariates of scikit-learn's bundled
  diabetes table (standardised ``z``) with a known design in the style of
  the practitioner review's ``rwm1984`` table:
  ``e = sigmoid(-0.2 + 0.9 z_age - 0.7 z_bmi + 0.6 [sex])`` (clipped to
  [0.05, 0.95]), ``mu0 = 2 + z_age + 0.8 sin(1.5 z_bmi) + 0.5 z_bp + 0.2
  z_s5^2``, ``tau = 1 + 0.8 tanh(z_s5) + 0.6 [sex] - 0.5 [z_age > 0.5] + 0.3
  z_bp``, ``y = mu0 + t tau + N(0, 1)``.

Methods (one boosted model for every learner,
``LGBMRegressor(n_estimators=100, num_leaves=15, min_child_samples=10)``;
propensity: standardised ``LogisticRegression``): the package's T-, X-,
DR- and R-learners (the DR and R with the boosted final model and with a
linear one, ``RidgeCV``, suffix ``-lin``; ``clip``: propensities clipped
at 0.05 instead of econml's 1e-6, as econml's docs advise under weak
overlap) and its causal forest; econml's
``LinearDML`` and ``CausalForestDML`` with the same nuisance models (its
DR-learner and NonParamDML give the package's numbers on the same folds:
``tests/test_causal_dr_r_forest.py``).

``coverage``: over ``--reps-coverage`` replications (default 100) of the
``nonlinear`` simulation of ``benchmarks/cate_ate_coverage.py`` (n = 500,
d = 5, PATE 1.25), the coverage at 0.9 of the true sample ATE by
``ate_interval`` (the cross-fitted AIPW interval) of the DR-, R-learner and
the forest, and of the true effects of 200 fresh rows by the forest's own
``effect_interval`` (its mean coverage over rows); smaller boosted models
(``n_estimators=30, num_leaves=8``) keep it cheap.

Usage (from the repository root)::

    PYTHONPATH=. OMP_NUM_THREADS=1 python benchmarks/cate_dr_r_forest.py

Default: 20 replications of each table and 100 coverage replications, about
2 CPU-minutes. ``--reps-pehe`` and ``--reps-coverage`` override;
``--part pehe`` or ``--part coverage`` runs one part.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import importlib.util
import json
import time
import warnings
from pathlib import Path

import numpy as np
from lightgbm import LGBMRegressor
from scipy.stats import t as t_dist
from sklearn.base import clone
from sklearn.datasets import load_diabetes
from sklearn.linear_model import LogisticRegression, RidgeCV
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.causal import (
    CausalForestRegressor,
    DRLearnerRegressor,
    RLearnerRegressor,
    TLearnerRegressor,
    XLearnerRegressor,
)
from sklearn_iclr26.datasets import load_ihdp

RESULTS = Path(__file__).resolve().parent / "results"
PAIRS = [
    ("ours forest", "econml CausalForestDML"),
    ("ours R-lin", "econml LinearDML"),
    ("ours forest", "ours T"),
    ("ours forest", "ours X"),
    ("ours R-lin", "ours X"),
    ("ours DR-lin clip", "ours T"),
]
OUT = RESULTS / "cate_dr_r_forest.jsonl"
TABLE = RESULTS / "cate_dr_r_forest.txt"


def boosted(small=False):
    if small:
        return LGBMRegressor(
            n_estimators=30, num_leaves=8, min_child_samples=10, n_jobs=1, verbose=-1
        )
    return LGBMRegressor(
        n_estimators=100, num_leaves=15, min_child_samples=10, n_jobs=1, verbose=-1
    )


def propensity():
    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))


def linear_final():
    return make_pipeline(StandardScaler(), RidgeCV(alphas=np.logspace(-2, 3, 12)))


def diabetes(rep):
    X = load_diabetes(scaled=False).data
    z = (X - X.mean(0)) / X.std(0)
    age, sex, bmi, bp, s5 = (
        z[:, 0],
        (X[:, 1] == X[:, 1].max()),
        z[:, 2],
        z[:, 3],
        z[:, 8],
    )
    rng = np.random.RandomState(10_000 + rep)
    e = 1 / (1 + np.exp(-(-0.2 + 0.9 * age - 0.7 * bmi + 0.6 * sex)))
    e = np.clip(e, 0.05, 0.95)
    t = (rng.uniform(size=len(e)) < e).astype(int)
    mu0 = 2 + age + 0.8 * np.sin(1.5 * bmi) + 0.5 * bp + 0.2 * s5**2
    tau = 1 + 0.8 * np.tanh(s5) + 0.6 * sex - 0.5 * (age > 0.5) + 0.3 * bp
    y = mu0 + t * tau + rng.normal(size=len(e))
    return X, y, t, tau


def ihdp(rep):
    X, y, t, tau = load_ihdp(surface="B", random_state=rep, return_X_y=True)
    return np.asarray(X, dtype=np.float64), y, t, tau


def pehe_methods():
    out = boosted()
    common = {"propensity_estimator": propensity(), "random_state": 0}
    ours = {
        "ours T": TLearnerRegressor(out, **common),
        "ours X": XLearnerRegressor(out, **common),
        "ours DR": DRLearnerRegressor(out, **common),
        "ours DR-lin": DRLearnerRegressor(
            out, final_estimator=linear_final(), **common
        ),
        "ours DR-lin clip": DRLearnerRegressor(
            out, final_estimator=linear_final(), min_propensity=0.05, **common
        ),
        "ours R": RLearnerRegressor(out, **common),
        "ours R-lin": RLearnerRegressor(out, final_estimator=linear_final(), **common),
        "ours forest": CausalForestRegressor(out, **common),
    }
    return ours


def econml_methods():
    from econml.dml import CausalForestDML, LinearDML

    return {
        "econml LinearDML": LinearDML(
            model_y=boosted(),
            model_t=propensity(),
            discrete_treatment=True,
            random_state=0,
        ),
        "econml CausalForestDML": CausalForestDML(
            model_y=boosted(),
            model_t=propensity(),
            discrete_treatment=True,
            random_state=0,
            n_jobs=1,
        ),
    }


def run_pehe(data, rep, done, fh):
    loader = {"ihdp": ihdp, "diabetes": diabetes}[data]
    X, y, t, tau = loader(rep)
    idx = np.arange(len(y))
    tr, te = train_test_split(idx, test_size=0.3, stratify=t, random_state=rep)
    methods = dict(pehe_methods())
    try:
        methods.update(econml_methods())
    except ImportError:
        print("econml missing: its methods are skipped")
    for name, est in methods.items():
        key = ("pehe", data, rep, name)
        if key in done:
            continue
        if name == "ours forest" and importlib.util.find_spec("econml") is None:
            print("econml missing: the causal forest is skipped")
            continue
        start = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if name.startswith("econml"):
                est.fit(y[tr], t[tr], X=X[tr])
                pred = np.ravel(est.effect(X[te]))
                ate = float(np.ravel(est.ate(X[tr]))[0])
            else:
                est = clone(est).fit(X[tr], y[tr], treatment=t[tr])
                pred = est.predict(X[te])
                ate = float(est.ate_aipw_)
        row = {
            "part": "pehe",
            "data": data,
            "rep": rep,
            "method": name,
            "sqrt_pehe": float(np.sqrt(np.mean((pred - tau[te]) ** 2))),
            "ate_error": ate - float(tau[tr].mean()),
            "cpu_s": time.process_time() - start,
        }
        fh.write(json.dumps(row) + "\n")
        fh.flush()
        print(row)


def simulate(rep, n, d=5):
    # the "nonlinear" simulation of benchmarks/cate_ate_coverage.py
    rng = np.random.RandomState(1_000 + rep)
    X = rng.normal(size=(n, d))
    e = 1 / (1 + np.exp(-(0.6 * X[:, 0] - 0.4 * X[:, 1])))
    mu0 = 1 + X[:, 0] + np.sin(2 * X[:, 1]) + 0.5 * X[:, 2] ** 2
    tau = 1 + 0.8 * np.tanh(X[:, 1]) + 0.5 * (X[:, 3] > 0)
    t = (rng.uniform(size=n) < e).astype(int)
    y = mu0 + t * tau + rng.normal(size=n)
    return X, y, t, tau


def run_coverage(rep, done, fh, level=0.9):
    X, y, t, tau = simulate(rep, 700)
    X, y, t, tau, Xnew, taunew = (
        X[:500],
        y[:500],
        t[:500],
        tau[:500],
        X[500:],
        tau[500:],
    )
    common = {"propensity_estimator": propensity(), "random_state": rep}
    out = boosted(small=True)
    methods = {
        "ours DR": DRLearnerRegressor(out, final_estimator=linear_final(), **common),
        "ours R": RLearnerRegressor(out, final_estimator=linear_final(), **common),
        "ours forest": CausalForestRegressor(out, **common),
    }
    if importlib.util.find_spec("econml") is None:
        del methods["ours forest"]
    for name, est in methods.items():
        key = ("coverage", "nonlinear", rep, name)
        if key in done:
            continue
        start = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y, treatment=t)
            lo, hi = est.ate_interval(X, confidence_level=level)
        sate = float(tau.mean())
        row = {
            "part": "coverage",
            "data": "nonlinear",
            "rep": rep,
            "method": name,
            "ate_covered": bool(lo <= sate <= hi),
            "ate_width": float(hi - lo),
        }
        if name == "ours forest":
            elo, ehi = est.effect_interval(Xnew, confidence_level=level)
            row["cate_coverage"] = float(np.mean((elo <= taunew) & (taunew <= ehi)))
            row["cate_width"] = float(np.mean(ehi - elo))
        row["cpu_s"] = time.process_time() - start
        fh.write(json.dumps(row) + "\n")
        fh.flush()
        print(row)


def wilson(k, n, z=1.96):
    p = k / n
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / (1 + z**2 / n)
    return centre - half, centre + half


def table(rows):
    lines = []
    pehe = [r for r in rows if r["part"] == "pehe"]
    for data in ("ihdp", "diabetes"):
        sub = [r for r in pehe if r["data"] == data]
        if not sub:
            continue
        reps = sorted({r["rep"] for r in sub})
        lines.append(
            f"\n{data}: held-out sqrt(PEHE), mean (sd) over {len(reps)} replications"
        )
        lines.append(
            f"{'method':26s} {'sqrt(PEHE)':>16s} {'ATE error':>16s} {'cpu s':>7s}"
        )
        names = list(dict.fromkeys(r["method"] for r in sub))
        for name in names:
            v = np.array([r["sqrt_pehe"] for r in sub if r["method"] == name])
            a = np.array([r["ate_error"] for r in sub if r["method"] == name])
            c = np.array([r["cpu_s"] for r in sub if r["method"] == name])
            lines.append(
                f"{name:26s} {v.mean():8.3f} ({v.std():5.3f}) "
                f"{a.mean():+8.3f} ({a.std():5.3f}) {c.mean():7.2f}"
            )
        lines.append("paired differences of sqrt(PEHE), mean [95 % t-interval]")
        values = {}
        for r in sub:
            values.setdefault(r["method"], {})[r["rep"]] = r["sqrt_pehe"]
        for a, b in PAIRS:
            if a not in values or b not in values:
                continue
            common = sorted(set(values[a]) & set(values[b]))
            if len(common) < 2:
                continue
            d = np.array([values[a][r] - values[b][r] for r in common])
            half = t_dist.ppf(0.975, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d))
            lines.append(
                f"  {a} - {b}: {d.mean():+.3f} [{d.mean() - half:+.3f}, "
                f"{d.mean() + half:+.3f}] ({len(d)} replications)"
            )
    cov = [r for r in rows if r["part"] == "coverage"]
    if cov:
        lines.append(
            "\nnonlinear simulation (n = 500): coverage at 0.9 (Wilson 95 % band)"
        )
        for name in dict.fromkeys(r["method"] for r in cov):
            sub = [r for r in cov if r["method"] == name]
            k, n = sum(r["ate_covered"] for r in sub), len(sub)
            lo, hi = wilson(k, n)
            width = np.mean([r["ate_width"] for r in sub])
            line = (
                f"{name:14s} ATE: {k}/{n} = {k / n:.3f} [{lo:.3f}, {hi:.3f}], "
                f"width {width:.3f}"
            )
            if "cate_coverage" in sub[0]:
                cc = np.array([r["cate_coverage"] for r in sub])
                cw = np.mean([r["cate_width"] for r in sub])
                line += (
                    f"; effects of 200 new rows: mean coverage {cc.mean():.3f} "
                    f"(sd {cc.std():.3f}), width {cw:.3f}"
                )
            lines.append(line)
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["pehe", "coverage", "both"], default="both")
    parser.add_argument("--reps-pehe", type=int, default=20)
    parser.add_argument("--reps-coverage", type=int, default=100)
    args = parser.parse_args()
    RESULTS.mkdir(exist_ok=True)
    rows = []
    if OUT.exists():
        rows = [json.loads(line) for line in OUT.read_text().splitlines() if line]
    done = {(r["part"], r["data"], r["rep"], r["method"]) for r in rows}
    with OUT.open("a") as fh:
        if args.part in ("pehe", "both"):
            for data in ("ihdp", "diabetes"):
                for rep in range(args.reps_pehe):
                    try:
                        run_pehe(data, rep, done, fh)
                    except (FileNotFoundError, ImportError, OSError) as exc:
                        print(f"{data} skipped: {exc}")
                        break
        if args.part in ("coverage", "both"):
            for rep in range(args.reps_coverage):
                run_coverage(rep, done, fh)
    rows = [json.loads(line) for line in OUT.read_text().splitlines() if line]
    text = table(rows)
    TABLE.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
