"""``socop_sets`` and ``lac_sets`` against one ``np.max`` pass over the matrix.

n rows of K-class softmax probabilities (N(0, 2^2) logits), K = 10 / 100 /
1000; contenders timed in interleaved rounds in one process (the order
rotating, one warm-up each): ``np.max(P, axis=1)`` (the anchor: one read of
the matrix), ``socop_sets(P, lam=0.05, quantile=q)`` (public, validating),
``lac_sets(P, q)`` and ``SOCOPClassifier``'s set path on validated
probabilities (``_sets``). Ratio = contender / ``np.max`` per round, median
(min-max), wall-clock and process CPU time. With numba installed
``socop_sets`` takes the compiled pass (``conformal/_socop_kernels.py``).
Results are appended to ``benchmarks/results/bench_socop_fused.jsonl``.

Usage: ``python benchmarks/bench_socop_fused.py [--n 100000] [--rounds 7]
[--tag before|after]``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import json
import time
from pathlib import Path

import numpy as np

from sklearn_iclr26.conformal import SOCOPClassifier, lac_sets, socop_sets


def _proba(n, K, seed=0):
    rng = np.random.default_rng(seed)
    z = rng.normal(scale=2.0, size=(n, K))
    P = np.exp(z - z.max(1, keepdims=True))
    return P / P.sum(1, keepdims=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--classes", default="10,100,1000")
    parser.add_argument("--tag", default="")
    args = parser.parse_args()
    out = Path(__file__).parent / "results" / "bench_socop_fused.jsonl"
    out.parent.mkdir(exist_ok=True)
    for K in map(int, args.classes.split(",")):
        P = _proba(args.n, K)
        est = SOCOPClassifier(lam=0.05)
        est.lam_, est.k0 = 0.05, 1
        contenders = {
            "np_max": lambda P=P: np.max(P, axis=1),
            "socop_sets": lambda P=P: socop_sets(P, lam=0.05, quantile=1.0),
            "lac_sets": lambda P=P: lac_sets(P, 0.9),
            "socop_estimator_sets": lambda P=P, est=est: est._sets(P, 1.0),
        }
        names = list(contenders)
        for fn in contenders.values():
            fn()
        times = {k: [] for k in names}
        for r in range(args.rounds):
            for name in names[r % len(names) :] + names[: r % len(names)]:
                t, c = time.perf_counter(), time.process_time()
                contenders[name]()
                times[name].append((time.perf_counter() - t, time.process_time() - c))
        row = {"n": args.n, "K": K, "rounds": args.rounds, "tag": args.tag}
        for clock, i in (("wall", 0), ("cpu", 1)):
            ref = np.array([x[i] for x in times["np_max"]])
            for name in names[1:]:
                ratio = np.array([x[i] for x in times[name]]) / np.maximum(ref, 1e-9)
                row[f"{clock}_{name}_over_max"] = [
                    float(np.median(ratio)),
                    float(ratio.min()),
                    float(ratio.max()),
                ]
        with out.open("a") as f:
            f.write(json.dumps(row) + "\n")
        print(
            K,
            {k: [round(x, 2) for x in v] for k, v in row.items() if "_over_" in k},
            flush=True,
        )


if __name__ == "__main__":
    main()
