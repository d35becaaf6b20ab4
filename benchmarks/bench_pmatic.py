"""Throughput and size of the coders on the same probabilities.

Encode + decode of ``n`` symbols with random N(0, 3^2)-logit distributions,
alphabets 2 to 1024: this package's integer coder (plain and PMATIC,
compiled by numba and in pure Python) against constriction's range coder
(plain, whole symbols). Prints symbols/s, bits/symbol and the ratios to
constriction; writes ``benchmarks/results/bench_pmatic.txt``. Timings are
wall-clock on a shared machine (median of 3 runs); numba's compilation is
excluded by a warm-up call.

Usage: ``python benchmarks/bench_pmatic.py``; ``SKLEARN_ICLR26_QUICK=1`` uses
fewer symbols.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import os
import time
from pathlib import Path

import numpy as np

from sklearn_iclr26.compression import compress, decompress

QUICK = os.environ.get("SKLEARN_ICLR26_QUICK") == "1"
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


def _time(fn, repeats=3):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times)), out


def main():
    lines = [
        (
            f"{'V':>5} {'coder':<22} {'n':>7} {'enc sym/s':>10} {'dec sym/s':>10} "
            f"{'enc+dec':>10} {'bits/sym':>9} {'ideal':>7} "
            f"{'speed/cx':>9} {'size/cx':>8}"
        )
    ]
    compress(*_model(100, 4), delta=1e-3)  # warm up numba
    decompress(compress(*_model(100, 4)), _model(100, 4)[1])
    decompress(compress(*_model(100, 4), method="plain"), _model(100, 4)[1])
    for V in (2, 16, 256, 1024):
        s_all, P_all = _model(N, V)
        ideal = -np.log2(P_all[np.arange(N), s_all]).mean()
        configs = [
            ("constriction (plain)", N, {"method": "plain", "backend": "constriction"}),
            ("plain, numba", N, {"method": "plain", "backend": "numba"}),
            ("pmatic 1e-3, numba", N, {"delta": 1e-3, "backend": "numba"}),
            ("plain, python", N_PYTHON, {"method": "plain", "backend": "python"}),
            ("pmatic 1e-3, python", N_PYTHON, {"delta": 1e-3, "backend": "python"}),
        ]
        ref = None
        for name, n, kw in configs:
            s, P = s_all[:n], P_all[:n]
            t_enc, payload = _time(lambda s=s, P=P, kw=kw: compress(s, P, **kw))
            backend = "python" if kw.get("backend") == "python" else "auto"
            t_dec, out = _time(
                lambda p=payload, P=P, b=backend: decompress(p, P, backend=b)
            )
            assert np.array_equal(out, s)
            bits = 8 * len(payload) / n
            rate = n / (t_enc + t_dec)
            if ref is None:
                ref = (rate, bits)
            lines.append(
                f"{V:>5} {name:<22} {n:>7} {n / t_enc:>10.0f} {n / t_dec:>10.0f} "
                f"{rate:>10.0f} {bits:>9.4f} {ideal:>7.4f} {rate / ref[0]:>9.2f} "
                f"{bits / ref[1]:>8.3f}"
            )
            print(lines[-1], flush=True)
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
