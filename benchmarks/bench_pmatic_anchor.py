"""PMATIC and the constriction backend against constriction called directly.

The anchor is constriction's range coder used the way its documentation
shows: one ``RangeEncoder``, ``encode(symbols, Categorical(perfect=False),
probabilities)``, ``get_compressed()``; one ``RangeDecoder`` on those words,
``decode(Categorical(perfect=False), probabilities)``. Never this package's
wrapper. Same ``n`` symbols with random N(0, 3^2)-logit distributions at
V = 2 / 16 / 256 / 1024 (``bench_pmatic._model``).

Contenders, each timed encode and decode separately, in interleaved rounds in
one process (every round times every contender once, the order rotating from
round to round; one warm-up call each first):

- ``pmatic``: ``compress(s, P, delta=1e-3, backend="numba")`` and
  ``decompress(payload, P)``;
- ``wrapper``: ``compress(s, P, method="plain", backend="constriction")`` and
  its ``decompress``;
- ``cx``: constriction called directly.

Each ratio is (anchor seconds / contender seconds) per round, so > 1 is
faster than the anchor; the median over rounds and the min-max are
reported, for wall-clock time and, less sensitive to the shared machine's
load (a millisecond call is easily preempted), for the process's CPU time.
Results are appended to ``benchmarks/results/<--out>`` (JSON lines),
one line per alphabet.

Usage: ``python benchmarks/bench_pmatic_anchor.py [--quick] [--n N]
[--rounds R] [--tag before|after]``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import json
import time
from pathlib import Path

import numpy as np

from sklearn_iclr26.compression import compress, decompress


def _model(n, V, seed=0):
    rng = np.random.default_rng(seed)
    z = rng.normal(scale=3, size=(n, V))
    P = np.exp(z - z.max(1, keepdims=True))
    P /= P.sum(1, keepdims=True)
    s = (P.cumsum(1) < rng.random((n, 1))).sum(1).clip(0, V - 1)
    return s, P


def _cx_encode(s, P):
    import constriction

    encoder = constriction.stream.queue.RangeEncoder()
    model = constriction.stream.model.Categorical(perfect=False)
    encoder.encode(s, model, P)
    return encoder.get_compressed()


def _cx_decode(words, P):
    import constriction

    decoder = constriction.stream.queue.RangeDecoder(words)
    model = constriction.stream.model.Categorical(perfect=False)
    return decoder.decode(model, P)


def _contenders(s, P):
    s32 = s.astype(np.int32)
    return {
        "cx": (lambda: _cx_encode(s32, P), lambda w: _cx_decode(w, P)),
        "pmatic": (
            lambda: compress(s, P, delta=1e-3, backend="numba"),
            lambda p: decompress(p, P, backend="numba"),
        ),
        "wrapper": (
            lambda: compress(s, P, method="plain", backend="constriction"),
            lambda p: decompress(p, P),
        ),
    }


def _time(fn, *args):
    t, c = time.perf_counter(), time.process_time()
    out = fn(*args)
    return (time.perf_counter() - t, time.process_time() - c), out


def run_alphabet(V, n, rounds):
    s, P = _model(n, V)
    contenders = _contenders(s, P)
    names = list(contenders)
    for name in names:  # warm-up (numba compilation, caches)
        enc, dec = contenders[name]
        out = dec(enc())
        assert np.array_equal(np.asarray(out), s), name
    t_enc = {k: [] for k in names}  # (wall, cpu) per round
    t_dec = {k: [] for k in names}
    for r in range(rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            enc, dec = contenders[name]
            te, payload = _time(enc)
            td, _ = _time(dec, payload)
            t_enc[name].append(te)
            t_dec[name].append(td)
    row = {"V": V, "n": n, "rounds": rounds}
    for clock, c in (("", 0), ("cpu_", 1)):
        for name in names:
            row[f"{clock}{name}_enc_s"] = float(np.median([x[c] for x in t_enc[name]]))
            row[f"{clock}{name}_dec_s"] = float(np.median([x[c] for x in t_dec[name]]))
        for name in ("pmatic", "wrapper"):
            for part, t in (("enc", t_enc), ("dec", t_dec)):
                ref = np.array([x[c] for x in t["cx"]])
                ratio = ref / np.maximum([x[c] for x in t[name]], 1e-9)
                row[f"{clock}{name}_{part}_over_cx"] = [
                    float(np.median(ratio)),
                    float(ratio.min()),
                    float(ratio.max()),
                ]
    return row


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n", type=int, default=None)
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--alphabets", default="2,16,256,1024")
    parser.add_argument("--tag", default="")
    args = parser.parse_args()
    n = args.n or (20_000 if args.quick else 100_000)
    rounds = args.rounds or (3 if args.quick else 7)
    out = Path(__file__).parent / "results" / "bench_pmatic_anchor.jsonl"
    out.parent.mkdir(exist_ok=True)
    for V in map(int, args.alphabets.split(",")):
        row = run_alphabet(V, n, rounds)
        row["tag"] = args.tag
        with out.open("a") as f:
            f.write(json.dumps(row) + "\n")
        cells = "  ".join(
            f"{k[:-8]} {v[0]:.3f} ({v[1]:.3f}-{v[2]:.3f})"
            for k, v in row.items()
            if k.endswith("_over_cx") and not k.startswith("cpu_")
        )
        cpu = "  ".join(
            f"{k[4:-8]} {v[0]:.3f} ({v[1]:.3f}-{v[2]:.3f})"
            for k, v in row.items()
            if k.startswith("cpu_") and k.endswith("_over_cx")
        )
        print(f"V={V:>5} n={n} wall: {cells}", flush=True)
        print(f"{'':>13} cpu:  {cpu}", flush=True)


if __name__ == "__main__":
    main()
