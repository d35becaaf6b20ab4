"""Does dask's worker setting ``MALLOC_TRIM_THRESHOLD_=65536`` slow torch fits?

dask's nanny sets ``MALLOC_TRIM_THRESHOLD_=65536`` in every worker process
(``distributed.nanny.pre-spawn-environ``). This benchmark fits the same torch
estimator in fresh processes with and without it, in interleaved rounds, and
reports the time ratio. Run::

    OMP_NUM_THREADS=1 python benchmarks/bench_malloc_trim.py --rounds 5

The supported way to turn the setting off for dask workers::

    import dask
    key = "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_"
    dask.config.set({key: None})

(set before the cluster starts), or use threads (``processes=False``).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import time, numpy as np
from sklearn.datasets import make_classification
from sklearn_iclr26.neural_network import TorchMLPClassifier
X, y = make_classification(n_samples={n}, n_features=20, random_state=0)
est = TorchMLPClassifier(hidden_layer_sizes=(64, 64), max_iter={epochs},
                         batch_size=128, random_state=0)
start = time.perf_counter()
est.fit(X, y)
print(time.perf_counter() - start)
"""


def run(env_value, n, epochs):
    env = dict(os.environ)
    env.pop("MALLOC_TRIM_THRESHOLD_", None)
    if env_value is not None:
        env["MALLOC_TRIM_THRESHOLD_"] = env_value
    out = subprocess.run(
        [sys.executable, "-c", CHILD.format(n=n, epochs=epochs)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument(
        "--out", default=str(Path(__file__).parent / "results" / "malloc_trim.json")
    )
    args = parser.parse_args()
    times = {"unset": [], "65536": []}
    for r in range(args.rounds):  # interleaved rounds
        times["unset"].append(run(None, args.n, args.epochs))
        times["65536"].append(run("65536", args.n, args.epochs))
        print(
            f"round {r}: unset {times['unset'][-1]:.2f} s, "
            f"65536 {times['65536'][-1]:.2f} s",
            flush=True,
        )
    ratios = [b / a for a, b in zip(times["unset"], times["65536"])]
    summary = {
        "n": args.n,
        "epochs": args.epochs,
        "times": times,
        "median_ratio_65536_over_unset": sorted(ratios)[len(ratios) // 2],
        "ratios": ratios,
    }
    Path(args.out).write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
