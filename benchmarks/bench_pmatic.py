"""Throughput and size of the coders on the same probabilities.

Encode + decode of ``n`` symbols with random N(0, 3^2)-logit distributions,
alphabets 2 to 1024: this package's integer coder (plain and PMATIC,
compiled by numba and in pure Python) against constriction's range coder
(plain, whole symbols), called directly as its documentation shows (the
reference; the package's ``backend="constriction"`` wrapper is timed as a
contender). Prints symbols/s, bits/symbol and the ratios to
constriction (to the plain numba coder when constriction is not installed);
writes ``benchmarks/results/bench_pmatic.txt`` after each alphabet. Timings are
wall-clock on a shared machine: the coders run in interleaved rounds (each
round times every coder once, in turn, so load drifts hit all of them alike)
and each coder's median over the rounds is reported; the speed ratio to
constriction is the median of the per-round ratios (their range over the
rounds in brackets). numba's compilation is
excluded by a warm-up call.

A second table reports size over the ideal ``-sum log2 p`` by how predictable
the column is: 3,000 symbols over 10 classes whose logits are scaled so that
the ideal ranges from near-deterministic (a good classifier's labels) to
near-uniform, then real label columns (digits under cross-validated and
in-sample logistic regression, wine under an in-sample random forest), coded
plain and with PMATIC at delta = 1e-5, 1e-4, 1e-3 with the default adaptive
helper and end bins and, at 1e-4 and 1e-3, the paper's fixed helper rate and
bin centres (payload bytes, header bytes, and body bytes over the ideal).

Usage: ``python benchmarks/bench_pmatic.py``; ``--quick`` (or
``SKLEARN_ICLR26_QUICK=1``) uses fewer symbols and rounds.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import os
import sys
import time
from pathlib import Path

import numpy as np

from sklearn_iclr26.compression import compress, decompress
from sklearn_iclr26.compression._base import unpack_payload

QUICK = os.environ.get("SKLEARN_ICLR26_QUICK") == "1" or "--quick" in sys.argv
N = 20_000 if QUICK else 100_000
N_PYTHON = 5_000 if QUICK else 20_000
OUT = Path(__file__).parent / "results" / "bench_pmatic.txt"


def _model(n, V, seed=0):
    rng = np.random.default_rng(seed)
    z = rng.normal(scale=3, size=(n, V))
    P = np.exp(z - z.max(1, keepdims=True))
    P /= P.sum(1, keepdims=True)
    s = (P.cumsum(1) < rng.random((n, 1))).sum(1).clip(0, V - 1)
    return s, P


ROUNDS = 3 if QUICK else 7

#: The reference: constriction called directly, never through this package.
DIRECT = {"constriction": "direct"}


def _cx_encode(s, P):
    import constriction

    encoder = constriction.stream.queue.RangeEncoder()
    model = constriction.stream.model.Categorical(perfect=False)
    encoder.encode(s.astype(np.int32), model, P)
    return encoder.get_compressed()


def _cx_decode(words, P):
    import constriction

    decoder = constriction.stream.queue.RangeDecoder(words)
    model = constriction.stream.model.Categorical(perfect=False)
    return decoder.decode(model, P)


def _elapsed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def _speed_rows(V, s_all, P_all, configs):
    """Interleaved rounds: every round times each coder once, in turn."""
    t_enc = {name: [] for name, _, _ in configs}
    t_dec = {name: [] for name, _, _ in configs}
    payloads = {}
    for _ in range(ROUNDS):
        for name, n, kw in configs:
            s, P = s_all[:n], P_all[:n]
            if kw is DIRECT:  # constriction as its documentation shows
                te, words = _elapsed(lambda s=s, P=P: _cx_encode(s, P))
                td, out = _elapsed(lambda w=words, P=P: _cx_decode(w, P))
                payload = words.tobytes()
            else:
                te, payload = _elapsed(lambda s=s, P=P, kw=kw: compress(s, P, **kw))
                backend = "python" if kw.get("backend") == "python" else "auto"
                td, out = _elapsed(
                    lambda p=payload, P=P, b=backend: decompress(p, P, backend=b)
                )
            assert np.array_equal(out, s)
            t_enc[name].append(te)
            t_dec[name].append(td)
            payloads[name] = payload
    ref_name, n_ref, _ = configs[0]
    ref_rate = [n_ref / (a + b) for a, b in zip(t_enc[ref_name], t_dec[ref_name])]
    ref_bits = 8 * len(payloads[ref_name]) / n_ref
    rows = []
    for name, n, _ in configs:
        rate = [n / (a + b) for a, b in zip(t_enc[name], t_dec[name])]
        per_round = np.array(rate) / np.array(ref_rate)
        ratio = (float(np.median(per_round)), per_round.min(), per_round.max())
        bits = 8 * len(payloads[name]) / n
        rows.append(
            (
                name,
                n,
                n / float(np.median(t_enc[name])),
                n / float(np.median(t_dec[name])),
                float(np.median(rate)),
                bits,
                ratio,
                bits / ref_bits,
            )
        )
    return rows


PREDICTABILITY_CODERS = (
    ("plain", {"method": "plain"}),
    ("1e-5", {"delta": 1e-5}),
    ("1e-4", {"delta": 1e-4}),
    ("1e-4 paper", {"delta": 1e-4, "helper_prob": "uniform", "end_bins": "centre"}),
    ("1e-3", {"delta": 1e-3}),
    ("1e-3 paper", {"delta": 1e-3, "helper_prob": "uniform", "end_bins": "centre"}),
)


def _size_cells(P, s):
    n = len(s)
    ideal_bits = -np.log2(P[np.arange(n), s]).sum()
    cells = []
    for _, kw in PREDICTABILITY_CODERS:
        payload = compress(s, P, **kw)
        assert np.array_equal(decompress(payload, P), s)
        size = len(payload)
        body = sum(len(b) for b, _, _ in unpack_payload(payload)[1])
        cells.append(f"{size:>5d} {size - body:>3d} {body - ideal_bits / 8:+5.0f}")
    return ideal_bits, " ".join(f"{c:>15}" for c in cells)


def _real_columns():
    """Labels of real multi-class sets under a cross-validated classifier."""
    from sklearn.datasets import load_digits, load_wine
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_predict
    from sklearn.preprocessing import StandardScaler

    X, y = load_digits(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    yield (
        "digits LR",
        y,
        cross_val_predict(
            LogisticRegression(max_iter=2000), X, y, cv=5, method="predict_proba"
        ),
    )
    yield (
        "digits LR fit",
        y,
        LogisticRegression(max_iter=2000).fit(X, y).predict_proba(X),
    )
    Xw, yw = load_wine(return_X_y=True)
    yield (
        "wine RF fit",
        yw,
        RandomForestClassifier(random_state=0).fit(Xw, yw).predict_proba(Xw),
    )


def _predictability_table():
    n, V = 3000, 10
    rng = np.random.default_rng(0)
    z = rng.normal(size=(n, V))
    lines = [
        "",
        (
            "Size over the ideal by predictability: n = 3000 symbols, V = 10, logits "
            "N(0, 1) * scale with the symbol drawn from the model, then real label "
            "columns; per coder the bytes of the whole payload, of its header, and of "
            "the body over the ideal -sum log2 p / 8 (total / header / body - ideal). "
            "PMATIC columns use the defaults (helper_prob='adaptive', "
            "end_bins='adaptive'); 'paper' is helper_prob='uniform', "
            "end_bins='centre' (the paper's fixed delta/r helper rate and bin "
            "centres) in the same payload format."
        ),
        f"{'column':>14} {'n':>5} {'ideal b/sym':>11} {'ideal B':>8} "
        + " ".join(f"{name:>15}" for name, _ in PREDICTABILITY_CODERS),
    ]
    for scale in (160.0, 80.0, 40.0, 20.0, 10.0, 5.0, 3.0, 1.0):
        P = np.exp(scale * (z - z.max(1, keepdims=True)))
        P /= P.sum(1, keepdims=True)
        s = (P.cumsum(1) < rng.random((n, 1))).sum(1).clip(0, V - 1)
        ideal_bits, cells = _size_cells(P, s)
        lines.append(
            f"{'scale ' + format(scale, '.0f'):>14} {n:>5} {ideal_bits / n:>11.4f} "
            f"{ideal_bits / 8:>8.0f} {cells}"
        )
        print(lines[-1], flush=True)
    for name, y, P in _real_columns():
        s = np.searchsorted(np.unique(y), y)
        ideal_bits, cells = _size_cells(P, s)
        lines.append(
            f"{name:>14} {len(s):>5} {ideal_bits / len(s):>11.4f} "
            f"{ideal_bits / 8:>8.0f} {cells}"
        )
        print(lines[-1], flush=True)
    return lines


def main():
    lines = [
        (
            f"{'V':>5} {'coder':<22} {'n':>7} {'enc sym/s':>10} {'dec sym/s':>10} "
            f"{'enc+dec':>10} {'bits/sym':>9} {'ideal':>7} "
            f"{'speed/cx':>9} {'[min-max]':<11} {'size/cx':>8}"
        )
    ]
    compress(*_model(100, 4), delta=1e-3)  # warm up numba
    decompress(compress(*_model(100, 4)), _model(100, 4)[1])
    decompress(compress(*_model(100, 4), method="plain"), _model(100, 4)[1])
    try:
        import constriction  # noqa: F401

        reference = [
            ("constriction (direct)", N, DIRECT),
            (
                "our constriction wrap",
                N,
                {"method": "plain", "backend": "constriction"},
            ),
        ]
    except ImportError:
        print("constriction is not installed: ratios are to 'plain, numba'.")
        reference = []
    OUT.parent.mkdir(exist_ok=True)
    for V in (2, 16, 256, 1024):
        s_all, P_all = _model(N, V)
        ideal = -np.log2(P_all[np.arange(N), s_all]).mean()
        configs = [
            *reference,
            ("plain, numba", N, {"method": "plain", "backend": "numba"}),
            ("pmatic 1e-3, numba", N, {"delta": 1e-3, "backend": "numba"}),
            ("plain, python", N_PYTHON, {"method": "plain", "backend": "python"}),
            ("pmatic 1e-3, python", N_PYTHON, {"delta": 1e-3, "backend": "python"}),
        ]
        for name, n, enc, dec, rate, bits, ratio, size in _speed_rows(
            V, s_all, P_all, configs
        ):
            lines.append(
                f"{V:>5} {name:<22} {n:>7} {enc:>10.0f} {dec:>10.0f} "
                f"{rate:>10.0f} {bits:>9.4f} {ideal:>7.4f} {ratio[0]:>9.2f} "
                f"{ratio[1]:>5.2f}-{ratio[2]:<5.2f} {size:>8.3f}"
            )
            print(lines[-1], flush=True)
        OUT.write_text("\n".join(lines) + "\n")  # results as they go
    lines += _predictability_table()
    OUT.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
