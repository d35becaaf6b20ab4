"""Reproduction of Prism's ablation shape (backdoor adjustment) on tabular data.

For each data set and seed: a plain torch MLP (``TorchMLPRegressor``, same
hidden layers) and :class:`~sklearn_iclr26.causal.BackdoorAdjustedRegressor`
with ``n_confounders`` in {0, 1, 2, 4}, both ``adjust_in`` values (one fit
for ``n = 1``, where they coincide), and all
three ``predict_mode`` values (free: one fit serves all three), plus the
background-state controls at ``n = 2`` (``background_states="constant"``,
``a_i = 0.5``, and ``"random"``), scored by MSE
and Pearson r on an in-distribution and a shifted test set.

Data sets (the "context" group and the shift are our choice):

* ``scm``: :func:`~sklearn_iclr26.datasets.make_background_confounding`
  (600 training rows, 2,000 per test set); shifted tests ``prior`` (P(C) reversed) and
  ``mapping`` (C -> context centres rolled).
* ``diabetes`` (scikit-learn): context ``age, sex``; subgroup shift on
  ``sex``: training rows are 70 % of one sex and 20 % of the other, the
  in-distribution test is the held-out rows of the majority sex, the shifted
  test the held-out rows of the minority sex.
* ``jura`` (Mulan multi-target set shipped with the package; target ``Cd``):
  context = land-use and rock-type indicators (the geological background);
  subgroup shift on the west/east half (``Xloc`` below/above its median).
* ``enb`` (Mulan, target ``Y1`` heating load): context = orientation and
  glazing ``X6, X7, X8``; subgroup shift on ``Relative_compactness``.

Features are standardised inside a pipeline that keeps column names, so the
context group is selected by name. Rows already in the CSV are skipped
(resumable). Default: 10 seeds, about 19 CPU-minutes (21 minutes wall on a
shared machine; rerun to resume); ``--quick``: 2 seeds.

    python benchmarks/prism_reproduction.py [--quick] [--seeds N] [--datasets ...]
        [--methods ...] [--csv PATH]

The background-state control of issue 30 (learned vs constant vs random states,
SCM, 10 seeds, about 10 minutes on a shared machine)::

    python benchmarks/prism_reproduction.py --datasets scm --seeds 10 \
        --csv benchmarks/results/prism_states.csv --methods prism_n0 \
        prism_n2_hidden prism_n2_hidden_constant prism_n2_hidden_random

The interventional-truth comparison (issue 30; ``--interventional``, 10 seeds,
about 8 CPU-minutes; ``--quick``: 2 seeds): trained on the observational SCM
(600 rows), every model's predictions are scored against the closed-form
``E[Y | do(H = h), P = p]`` of :func:`make_background_confounding`
(``return_truth=True``) at the rows of three test sets: ``id`` (observational
rows), ``do`` (``intervention="random"``: ``H`` independent of ``C``) and
``mapping`` (the ``C -> context`` shift, under which the interventional mean
is unchanged). Models: the plain MLP, ``n = 0`` (unadjusted), ``n = 2``
learned / constant / random states and ``n = 4`` learned, factual and
adjusted branches; the ideal observational regression ``E[Y | H, P]`` (the
best an unadjusted model can do: its error is the confounding bias); and a
positive control, a backdoor adjustment with ``C`` observed (an MLP on ``P, H,
onehot(C)`` averaged over the training frequencies of ``C``)::

    python benchmarks/prism_reproduction.py --interventional [--quick]
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import csv
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.datasets import load_diabetes
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.causal import BackdoorAdjustedRegressor
from sklearn_iclr26.datasets import load_multioutput, make_background_confounding
from sklearn_iclr26.neural_network import TorchMLPRegressor

RESULTS = Path(__file__).parent / "results"
CSV = RESULTS / "prism_reproduction.csv"
FIELDS = ["dataset", "seed", "method", "split", "mse", "pearson", "fit_seconds"]
HIDDEN = (64, 64)
MAX_ITER = 100


def _subgroup_split(X, y, group, seed):
    rng = np.random.RandomState(seed)
    a = rng.permutation(np.flatnonzero(group))
    b = rng.permutation(np.flatnonzero(~group))
    n_a, n_b = int(0.7 * len(a)), int(0.2 * len(b))
    train = np.r_[a[:n_a], b[:n_b]]
    return (
        (X.iloc[train], y[train]),
        {"id": (X.iloc[a[n_a:]], y[a[n_a:]]), "shift": (X.iloc[b[n_b:]], y[b[n_b:]])},
    )


def load(name, seed):
    """``(X_train, y_train), {split: (X, y)}, context column names``."""
    if name == "scm":
        cols = [f"p{i}" for i in range(5)] + [f"c{i}" for i in range(5)]

        def frame(n, shift, rs):
            X, y = make_background_confounding(n, shift=shift, random_state=rs)
            return pd.DataFrame(X, columns=cols), y

        train = frame(600, None, seed)
        tests = {
            "id": frame(2000, None, 10_000 + seed),
            "prior": frame(2000, "prior", 20_000 + seed),
            "mapping": frame(2000, "mapping", 30_000 + seed),
        }
        return train, tests, cols[5:]
    if name == "diabetes":
        data = load_diabetes(as_frame=True)
        X, y = data.data, data.target.to_numpy()
        group = (X["sex"] > X["sex"].mean()).to_numpy()
        return (*_subgroup_split(X, y, group, seed), ["age", "sex"])
    if name == "jura":
        b = load_multioutput("jura")
        X = pd.DataFrame(b.data, columns=b.feature_names)
        y = b.target[:, 0]
        context = [c for c in X.columns if c.startswith(("Landuse", "Rock"))]
        group = (X["Xloc"] < X["Xloc"].median()).to_numpy()
        return (*_subgroup_split(X, y, group, seed), context)
    if name == "enb":
        b = load_multioutput("enb")
        X = pd.DataFrame(b.data, columns=b.feature_names)
        y = b.target[:, 0]
        group = (
            X["Relative_compactness"] < X["Relative_compactness"].median()
        ).to_numpy()
        return (*_subgroup_split(X, y, group, seed), ["X6", "X7", "X8"])
    raise ValueError(name)


def methods(context, seed):
    yield (
        "mlp",
        TorchMLPRegressor(
            HIDDEN,
            learning_rate_init=1e-3,
            batch_size=256,
            max_iter=MAX_ITER,
            random_state=seed,
        ),
        ("factual",),
    )
    common = {
        "feature_groups": {"context": context},
        "hidden_layer_sizes": HIDDEN,
        "embed_dim": 32,
        "max_iter": MAX_ITER,
        "random_state": seed,
    }
    yield (
        "prism_n0",
        BackdoorAdjustedRegressor(n_confounders=0, adjusted_weight=0.0, **common),
        ("factual",),
    )
    for n in (1, 2, 4):
        # with one state both averaging places give the same model (the mean
        # of one copy is that copy): fit it once
        for adjust_in in ("hidden",) if n == 1 else ("hidden", "output"):
            yield (
                f"prism_n{n}_{adjust_in}",
                BackdoorAdjustedRegressor(
                    n_confounders=n, adjust_in=adjust_in, **common
                ),
                ("factual", "adjusted", "mix"),
            )
    # the background-state controls (issue 30): a gain is the learned states'
    # only where it exceeds these (n = 2, hidden-space averaging)
    for states in ("constant", "random"):
        yield (
            f"prism_n2_hidden_{states}",
            BackdoorAdjustedRegressor(
                n_confounders=2, background_states=states, **common
            ),
            ("factual", "adjusted", "mix"),
        )


def _done():
    if not CSV.exists():
        return set()
    with CSV.open() as f:
        return {
            (r["dataset"], r["seed"], r["method"].split(":")[0])
            for r in csv.DictReader(f)
        }


def run(datasets, seeds, only=None):
    RESULTS.mkdir(exist_ok=True)
    done = _done()
    new = not CSV.exists()
    with CSV.open("a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        if new:
            writer.writeheader()
        for name in datasets:
            for seed in range(seeds):
                (X, y), tests, context = load(name, seed)
                for method, est, modes in methods(context, seed):
                    if (name, str(seed), method) in done or (
                        only and method not in only
                    ):
                        continue
                    scaler = StandardScaler().set_output(transform="pandas")
                    pipe = make_pipeline(scaler, est)
                    start = time.perf_counter()
                    pipe.fit(X, y)
                    seconds = time.perf_counter() - start
                    for mode in modes:
                        for split, (Xt, yt) in tests.items():
                            Xs = pipe[0].transform(Xt)
                            if method == "mlp":
                                pred = pipe[-1].predict(Xs)
                            else:
                                pred = pipe[-1].predict(Xs, mode=mode)
                            writer.writerow(
                                {
                                    "dataset": name,
                                    "seed": seed,
                                    "method": f"{method}:{mode}",
                                    "split": split,
                                    "mse": float(np.mean((pred - yt) ** 2)),
                                    "pearson": float(stats.pearsonr(pred, yt)[0]),
                                    "fit_seconds": round(seconds, 3),
                                }
                            )
                    f.flush()
                print(f"{name} seed {seed} done", flush=True)


#: rows of the doc's compact table
DOC_ROWS = (
    "mlp:factual",
    "prism_n0:factual",
    "prism_n1_hidden:factual",
    "prism_n1_hidden:adjusted",
    "prism_n2_hidden:factual",
    "prism_n2_hidden:adjusted",
    "prism_n2_output:adjusted",
    "prism_n4_hidden:factual",
    "prism_n4_hidden:adjusted",
    "prism_n4_output:adjusted",
    "prism_n4_hidden:mix",
    "prism_n2_hidden_constant:factual",
    "prism_n2_hidden_constant:adjusted",
    "prism_n2_hidden_random:factual",
    "prism_n2_hidden_random:adjusted",
)


def _compact_table(name, d):
    """The doc's table: MSE mean and, in brackets, the paired difference to
    ``n = 0`` factual with its 95 % t half-width; then learned - constant."""
    splits = list(d["split"].unique())
    by = d.set_index(["method", "split", "seed"])["mse"].sort_index()
    lines = [
        (
            f"{name} ({d['seed'].nunique()} seeds): MSE mean; paired diff vs "
            "n=0 factual [95% CI] per split"
        )
    ]

    def cell(method, split, ref):
        cur = by.loc[(method, split)]
        text = f"{split}: {cur.mean():9.4g}"
        if method != ref:
            m, half, _ = _paired(cur, by.loc[(ref, split)])
            text += f" ({m:+.3g} ±{half:.2g})"
        return f"{text:36s}"

    for method in DOC_ROWS:
        if method not in d["method"].values:
            continue
        row = "".join(cell(method, split, "prism_n0:factual") for split in splits)
        lines.append(f"  {method:34s} {row}")
    for branch in ("factual", "adjusted"):
        learned = f"prism_n2_hidden:{branch}"
        for control in ("constant", "random"):
            other = f"prism_n2_hidden_{control}:{branch}"
            if other not in d["method"].values:
                continue
            row = ""
            for split in splits:
                m, half, _ = _paired(by.loc[(learned, split)], by.loc[(other, split)])
                row += f"{split}: {m:+.3g} ±{half:.2g}".ljust(36)
            lines.append(f"  {'learned - ' + control + ' (' + branch + ')':34s} {row}")
    return lines


def summarize():
    df = pd.read_csv(CSV)
    lines = []
    for name, d in df.groupby("dataset", sort=False):
        lines += ["", *_compact_table(name, d)]
    for name, d in df.groupby("dataset", sort=False):
        n_seeds = d["seed"].nunique()
        lines.append(f"\n## {name} ({n_seeds} seeds): mean MSE / Pearson r")
        table = d.groupby(["method", "split"])[["mse", "pearson"]].mean().unstack()
        lines.append(table.round(4).to_string())
        lines.append(
            "\npaired MSE difference (method - baseline), mean [95% t-CI] over seeds"
        )
        for base in ("mlp:factual", "prism_n0:factual"):
            for split in d["split"].unique():
                ref = d[(d.method == base) & (d.split == split)].set_index("seed")[
                    "mse"
                ]
                for method in sorted(d.method.unique()):
                    if method == base or not method.startswith("prism_n"):
                        continue
                    if base == "prism_n0:factual" and method.startswith("prism_n0"):
                        continue
                    cur = d[(d.method == method) & (d.split == split)].set_index(
                        "seed"
                    )["mse"]
                    diff = (cur - ref).dropna()
                    if len(diff) < 2:
                        continue
                    half = (
                        stats.t.ppf(0.975, len(diff) - 1)
                        * diff.std(ddof=1)
                        / np.sqrt(len(diff))
                    )
                    m = diff.mean()
                    lines.append(
                        f"  {split:8s} {method:28s} vs {base:17s} "
                        f"{m:+.4f} [{m - half:+.4f}, {m + half:+.4f}]"
                    )
    text = "\n".join(lines)
    CSV.with_suffix(".txt").write_text(text + "\n")
    print(text)


# -- the interventional truth (issue 30) ------------------------------------

INTERVENTIONAL_CSV = RESULTS / "prism_interventional.csv"
INTERVENTIONAL_FIELDS = [
    "seed",
    "method",
    "split",
    "mse_do",
    "mse_observational",
    "mse_y",
    "fit_seconds",
]
SCM_COLUMNS = [f"p{i}" for i in range(5)] + [f"c{i}" for i in range(5)]
#: the Prism models of the comparison (``methods()``'s names)
INTERVENTIONAL_PRISM = (
    "prism_n0",
    "prism_n2_hidden",
    "prism_n2_hidden_constant",
    "prism_n2_hidden_random",
    "prism_n4_hidden",
)


def load_interventional(seed):
    """Training rows with ``C``, and the test splits with their truths."""

    def frame(n, rs, **kwargs):
        X, y, c, truth = make_background_confounding(
            n, return_background=True, return_truth=True, random_state=rs, **kwargs
        )
        return pd.DataFrame(X, columns=SCM_COLUMNS), y, c, truth

    # the training and the id/mapping rows are load("scm")'s
    train = frame(600, seed)
    tests = {
        "id": frame(2000, 10_000 + seed),
        "do": frame(2000, 40_000 + seed, intervention="random"),
        "mapping": frame(2000, 30_000 + seed, shift="mapping"),
    }
    # under the mapping shift, score against the *training* law's E[Y | H, P]
    # (what an ideal unadjusted fit of the training rows predicts there): its
    # confounding term depends on h only, so do(H = h) at the same h under the
    # training law gives it exactly (the interventional means coincide)
    X_map, _, _, truth_map = tests["mapping"]
    _, _, train_law = make_background_confounding(
        len(X_map),
        intervention=X_map[SCM_COLUMNS[5:]].to_numpy(),
        return_truth=True,
        random_state=0,
    )
    truth_map.observational = truth_map.interventional + (
        train_law.observational - train_law.interventional
    )
    return train, tests


class ObservedBackdoor:
    """Backdoor adjustment with ``C`` observed (the positive control).

    Fits ``regressor`` on the standardised ``X`` plus a one-hot ``C`` and
    predicts ``sum_c pi_c m(x, c)`` with ``pi`` the training frequencies of
    ``C``: the backdoor formula, which needs no model of ``C -> H``.
    """

    def __init__(self, regressor, n_states):
        self.regressor = regressor
        self.n_states = n_states

    def _design(self, X, c):
        onehot = np.eye(self.n_states)[np.broadcast_to(c, len(X))]
        return np.hstack([self.scaler_.transform(X), onehot])

    def fit(self, X, y, c):
        self.scaler_ = StandardScaler().fit(np.asarray(X))
        self.pi_ = np.bincount(c, minlength=self.n_states) / len(c)
        self.regressor.fit(self._design(np.asarray(X), c), y)
        return self

    def predict(self, X):
        X = np.asarray(X)
        return sum(
            p * self.regressor.predict(self._design(X, k))
            for k, p in enumerate(self.pi_)
            if p > 0
        )


def _interventional_models(seed):
    """``(name, fit(X, y, c) -> predict(X, mode), modes)`` of the comparison."""
    context = SCM_COLUMNS[5:]
    for method, est, modes in methods(context, seed):
        if method != "mlp" and method not in INTERVENTIONAL_PRISM:
            continue
        pipe = make_pipeline(StandardScaler().set_output(transform="pandas"), est)

        def fit(X, y, c, pipe=pipe):
            pipe.fit(X, y)

            def predict(Xt, mode, pipe=pipe):
                Xs = pipe[0].transform(Xt)
                if mode is None:
                    return pipe[-1].predict(Xs)
                return pipe[-1].predict(Xs, mode=mode)

            return predict

        yield method, fit, modes if method != "mlp" else (None,)
    control = ObservedBackdoor(
        TorchMLPRegressor(
            HIDDEN,
            learning_rate_init=1e-3,
            batch_size=256,
            max_iter=MAX_ITER,
            random_state=seed,
        ),
        n_states=3,
    )

    def fit_control(X, y, c):
        control.fit(X, y, c)
        return lambda Xt, mode: control.predict(Xt)

    yield "backdoor_observed_c", fit_control, (None,)


def _interventional_done(path):
    if not path.exists():
        return set()
    with path.open() as f:
        return {(r["seed"], r["method"].split(":")[0]) for r in csv.DictReader(f)}


def run_interventional(seeds, path, only=None):
    done = _interventional_done(path)
    new = not path.exists()
    with path.open("a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=INTERVENTIONAL_FIELDS)
        if new:
            writer.writeheader()

        def write(seed, method, split, pred, yt, truth, seconds):
            writer.writerow(
                {
                    "seed": seed,
                    "method": method,
                    "split": split,
                    "mse_do": float(np.mean((pred - truth.interventional) ** 2)),
                    "mse_observational": float(
                        np.mean((pred - truth.observational) ** 2)
                    ),
                    "mse_y": float(np.mean((pred - yt) ** 2)),
                    "fit_seconds": round(seconds, 3),
                }
            )

        for seed in range(seeds):
            (X, y, c, _), tests = load_interventional(seed)
            if (str(seed), "ideal_observational") not in done:
                # no fit: the observational regression E[Y | H, P] itself
                for split, (_, yt, _, truth) in tests.items():
                    write(
                        seed,
                        "ideal_observational",
                        split,
                        truth.observational,
                        yt,
                        truth,
                        0.0,
                    )
                f.flush()
            for method, fit, modes in _interventional_models(seed):
                if (str(seed), method) in done or (only and method not in only):
                    continue
                start = time.perf_counter()
                predict = fit(X, y, c)
                seconds = time.perf_counter() - start
                for mode in modes:
                    name = method if mode is None else f"{method}:{mode}"
                    for split, (Xt, yt, _, truth) in tests.items():
                        write(seed, name, split, predict(Xt, mode), yt, truth, seconds)
                f.flush()
            print(f"interventional seed {seed} done", flush=True)


def _paired(cur, ref):
    diff = (cur - ref).dropna()
    if len(diff) < 2:
        return float("nan"), float("nan"), len(diff)
    half = stats.t.ppf(0.975, len(diff) - 1) * diff.std(ddof=1) / np.sqrt(len(diff))
    return diff.mean(), half, len(diff)


def summarize_interventional(path):
    df = pd.read_csv(path)
    n_seeds = df["seed"].nunique()
    lines = [
        (
            f"## SCM, interventional truth ({n_seeds} seeds): MSE of the "
            "prediction to E[Y | do(H), P] (mse_do) and to the training "
            "law's E[Y | H, P] (mse_observational), means over seeds"
        )
    ]
    table = df.groupby(["method", "split"])[["mse_do", "mse_observational"]].mean()
    lines.append(table.unstack().round(3).to_string())
    base = "prism_n0:factual"
    for ref_name in (base, "prism_n2_hidden_constant:adjusted"):
        lines.append(
            f"\npaired mse_do difference (method - {ref_name}), mean +- 95% "
            "t half-width over seeds"
        )
        for split in df["split"].unique():
            d = df[df.split == split]
            ref = d[d.method == ref_name].set_index("seed")["mse_do"]
            for method in sorted(d.method.unique()):
                if method == ref_name:
                    continue
                if ref_name != base and not method.startswith("prism_n2_hidden"):
                    continue
                cur = d[d.method == method].set_index("seed")["mse_do"]
                m, half, n = _paired(cur, ref)
                lines.append(
                    f"  {split:8s} {method:34s} {m:+.3f} +- {half:.3f}  (n={n})"
                )
    text = "\n".join(lines)
    path.with_suffix(".txt").write_text(text + "\n")
    print(text)


def main():
    global CSV
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument(
        "--datasets", nargs="+", default=["diabetes", "jura", "scm", "enb"]
    )
    parser.add_argument(
        "--methods", nargs="+", default=None, help="fit only these (default: all)"
    )
    parser.add_argument(
        "--csv", type=Path, default=CSV, help="results file (resumable)"
    )
    parser.add_argument(
        "--interventional",
        action="store_true",
        help="score against the SCM's interventional truth (own CSV)",
    )
    args = parser.parse_args()
    quick = args.quick or os.environ.get("SKLEARN_ICLR26_QUICK") == "1"
    seeds = 2 if quick else args.seeds
    if args.interventional:
        csv_path = INTERVENTIONAL_CSV if args.csv == CSV else args.csv
        csv_path.parent.mkdir(parents=True, exist_ok=True)
        run_interventional(seeds, csv_path, args.methods)
        summarize_interventional(csv_path)
        return
    CSV = args.csv
    CSV.parent.mkdir(parents=True, exist_ok=True)
    run(args.datasets, seeds, args.methods)
    summarize()


if __name__ == "__main__":
    main()
