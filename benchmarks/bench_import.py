"""Import time of the package against ``import mapie.classification``.

Whole fresh interpreters (``python -c "<statement>"``), in interleaved rounds:
each round runs every statement once, the order rotating; the per-round
ratio to MAPIE's import is reported as median (min-max). Statements:
``import sklearn_iclr26``, ``from sklearn_iclr26.conformal import
SOCOPClassifier`` and ``from sklearn_iclr26 import SOCOPClassifier`` (this
checkout), and optionally the same against another checkout (``--before
PATH``, e.g. an export of an earlier commit) so that before and after are
timed in the same rounds. Also the number of modules each statement loads.
Results are appended to ``benchmarks/results/bench_import.jsonl``.

Usage: ``python benchmarks/bench_import.py [--rounds 7] [--before PATH]``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
STATEMENTS = {
    "top": "import sklearn_iclr26",
    "conformal": "from sklearn_iclr26.conformal import SOCOPClassifier",
    "top_name": "from sklearn_iclr26 import SOCOPClassifier",
}


def _run(statement, path, count=False):
    env = dict(os.environ, PYTHONPATH=str(path))
    code = statement + ("; import sys; print(len(sys.modules))" if count else "")
    t = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=path,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - t
    if out.returncode:
        raise RuntimeError(out.stderr)
    return elapsed, (int(out.stdout.split()[-1]) if count else None)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--before", default=None)
    args = parser.parse_args()
    jobs = {"mapie": ("import mapie.classification", ROOT)}
    for name, statement in STATEMENTS.items():
        jobs[f"after_{name}"] = (statement, ROOT)
        if args.before:
            jobs[f"before_{name}"] = (statement, Path(args.before))
    names = list(jobs)
    modules = {name: _run(*jobs[name], count=True)[1] for name in names}  # warm
    times = {name: [] for name in names}
    for r in range(args.rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            times[name].append(_run(*jobs[name])[0])
    ref = np.array(times["mapie"])
    row = {"rounds": args.rounds, "modules": modules}
    for name in names:
        ratio = np.array(times[name]) / ref
        row[name] = {
            "median_s": float(np.median(times[name])),
            "ratio_to_mapie": [
                float(np.median(ratio)),
                float(ratio.min()),
                float(ratio.max()),
            ],
        }
        print(name, modules[name], row[name], flush=True)
    out = Path(__file__).parent / "results" / "bench_import.jsonl"
    out.parent.mkdir(exist_ok=True)
    with out.open("a") as f:
        f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
