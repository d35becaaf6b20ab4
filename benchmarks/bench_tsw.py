"""Speed of ``tree_sliced_wasserstein`` against POT, and its scaling in n and d.

1. Equal numbers of projections: ``tree_sliced_wasserstein`` with ``n_trees *
   n_lines`` lines against ``ot.sliced_wasserstein_distance`` with the same
   number of projections (and ``ot.emd2``, the exact distance, where it fits),
   on the same Gaussian data, timed in interleaved rounds (each round runs
   every method once, so load on the shared machine hits all alike); the
   median time per method and the ratio TSW / SW.
2. Scaling in ``n`` (``n = m``, d = 10) and in ``d`` (n = m = 10^4): the
   complexity is O(L k (n + m)(d + log(n + m))); the table reports the time
   per line per point.
3. ``--large``: n = m = 10^6 at d = 10 with a few trees, peak memory bounded by
   chunking over trees (``working_memory``), reported as the peak RSS.

5. ``--part default_test``: the default test's wall time at n = m = 200,
   d = 10, with the load average at each call (goal: under 1 s), to
   ``benchmarks/results/bench_tsw_default_test.txt``.

4. ``--part two_sample``: the two-sample test at n = m = 200, d = 10 (issue
   30): the default ``tree_sliced_two_sample_test`` (999 permutations, 250
   trees of 4 lines); the unbatched path it replaced (``tree_costs`` over the
   rows of permuted masses, the same trees and permutations) for the speed-up;
   the same batched test with ``splitting="uniform"`` (exactly SW1 with the
   same 1000 directions: the sliced test with projections and sorts computed
   once); and ``statistic="sliced"`` (POT's ``sliced_wasserstein_distance``
   per permutation) timed per statistic evaluation. Results go to
   ``benchmarks/results/bench_tsw_two_sample.txt``.

Target (issue 18): within 2x of POT's sliced Wasserstein at equal numbers of
projections; 10^6 x 10^6 at d = 10 in bounded memory. Nothing here is
asserted. Run: ``python benchmarks/bench_tsw.py [--rounds 3] [--large]
[--part all|distance|two_sample|default_test]``;
results go to ``benchmarks/results/bench_tsw.txt``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from sklearn_iclr26.ot import tree_sliced_two_sample_test, tree_sliced_wasserstein

RESULTS = Path(__file__).parent / "results" / "bench_tsw.txt"
TWO_SAMPLE = Path(__file__).parent / "results" / "bench_tsw_two_sample.txt"
DEFAULT_TEST = Path(__file__).parent / "results" / "bench_tsw_default_test.txt"


def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def interleaved(methods, rounds):
    times = {name: [] for name in methods}
    for _ in range(rounds):
        for name, fn in methods.items():
            times[name].append(timed(fn))
    return {name: float(np.median(t)) for name, t in times.items()}


def main():
    import ot

    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--large", action="store_true")
    parser.add_argument(
        "--part",
        default="all",
        choices=["all", "distance", "two_sample", "default_test"],
    )
    args = parser.parse_args()
    if args.part == "default_test":
        default_test(args.rounds)
        return
    if args.part in ("all", "two_sample"):
        two_sample(args.rounds)
    if args.part == "two_sample":
        return
    lines = []

    def say(text=""):
        print(text, flush=True)
        lines.append(text)

    rng = np.random.RandomState(0)
    say("1. equal numbers of projections (L*k = n_projections), d = 10, p = 1")
    say(f"{'n=m':>7} {'proj':>5} {'TSW s':>8} {'SW s':>8} {'ratio':>6} {'emd2 s':>8}")
    for n in (1000, 10_000):
        for n_trees, n_lines in ((25, 4), (250, 4)):
            X, Y = rng.normal(size=(n, 10)), rng.normal(size=(n, 10)) + 0.5
            n_proj = n_trees * n_lines
            methods = {
                "tsw": lambda X=X, Y=Y, L=n_trees, k=n_lines: tree_sliced_wasserstein(
                    X, Y, n_trees=L, n_lines=k, random_state=0
                ),
                "sw": lambda X=X, Y=Y, P=n_proj: ot.sliced_wasserstein_distance(
                    X, Y, n_projections=P, p=1, seed=0
                ),
            }
            if n <= 1000:
                methods["emd"] = lambda X=X, Y=Y: ot.emd2(
                    [], [], ot.dist(X, Y, metric="euclidean")
                )
            t = interleaved(methods, args.rounds)
            emd = f"{t['emd']:8.3f}" if "emd" in t else f"{'-':>8}"
            say(
                f"{n:>7} {n_proj:>5} {t['tsw']:8.3f} {t['sw']:8.3f} "
                f"{t['tsw'] / t['sw']:6.2f} {emd}"
            )

    say()
    say("2a. scaling in n (d = 10, L = 25, k = 4): time / (L k (n+m))")
    say(f"{'n=m':>8} {'TSW s':>8} {'ns/line/pt':>11} {'SW s':>8}")
    for n in (1000, 10_000, 100_000):
        X, Y = rng.normal(size=(n, 10)), rng.normal(size=(n, 10))
        t = interleaved(
            {
                "tsw": lambda X=X, Y=Y: tree_sliced_wasserstein(
                    X, Y, n_trees=25, n_lines=4, random_state=0
                ),
                "sw": lambda X=X, Y=Y: ot.sliced_wasserstein_distance(
                    X, Y, n_projections=100, p=1, seed=0
                ),
            },
            args.rounds,
        )
        per = 1e9 * t["tsw"] / (100 * 2 * n)
        say(f"{n:>8} {t['tsw']:8.3f} {per:11.1f} {t['sw']:8.3f}")

    say()
    say("2b. scaling in d (n = m = 10^4, L = 25, k = 4)")
    say(f"{'d':>5} {'TSW s':>8} {'SW s':>8} {'ratio':>6}")
    for d in (2, 10, 50, 200):
        X, Y = rng.normal(size=(10_000, d)), rng.normal(size=(10_000, d))
        t = interleaved(
            {
                "tsw": lambda X=X, Y=Y: tree_sliced_wasserstein(
                    X, Y, n_trees=25, n_lines=4, random_state=0
                ),
                "sw": lambda X=X, Y=Y: ot.sliced_wasserstein_distance(
                    X, Y, n_projections=100, p=1, seed=0
                ),
            },
            args.rounds,
        )
        say(f"{d:>5} {t['tsw']:8.3f} {t['sw']:8.3f} {t['tsw'] / t['sw']:6.2f}")

    if args.large:
        say()
        # a fresh process; its peak RSS is read from the kernel's high-water
        # mark (VmHWM) reset after the data are created (getrusage's ru_maxrss
        # is carried over from this parent process across fork/exec on Linux,
        # so it would report this process's peak instead)
        code = (
            "import time, numpy as np\n"
            "from sklearn_iclr26.ot import tree_sliced_wasserstein as tsw\n"
            "def status(key):\n"
            "    for line in open('/proc/self/status'):\n"
            "        if line.startswith(key + ':'):\n"
            "            return int(line.split()[1]) / 1024\n"
            "rng = np.random.RandomState(0); n = 10**6\n"
            "X = rng.normal(size=(n, 10)); Y = rng.normal(size=(n, 10)) + 0.1\n"
            "open('/proc/self/clear_refs', 'w').write('5')\n"
            "base = status('VmRSS')\n"
            "t = time.perf_counter(); d = tsw(X, Y, n_trees=4, n_lines=4,"
            " random_state=0)\n"
            "t = time.perf_counter() - t\n"
            "print(f\"{t:.1f} {status('VmHWM'):.0f} {base:.0f} {d:.4f}\")\n"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout.split()
        say(
            f"3. n = m = 10^6, d = 10, L = 4, k = 4 (working_memory 1024 MiB, own "
            f"process): {out[0]} s, peak RSS {out[1]} MiB, {out[2]} MiB after "
            f"creating the data (X and Y are 153 MiB): increase "
            f"{int(out[1]) - int(out[2])} MiB; TSW = {out[3]}"
        )
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text("\n".join(lines) + "\n")


def default_test(rounds):
    """5. The default test's wall time at n = m = 200, d = 10, with the load.

    ``tree_sliced_two_sample_test(X, Y)`` with its defaults (999 permutations,
    250 trees of 4 lines): the median over ``rounds`` calls after a warm-up,
    and the 1-minute load average before each call (the machine is shared).
    """
    import os
    import platform

    rng = np.random.RandomState(0)
    X, Y = rng.normal(size=(200, 10)), rng.normal(size=(200, 10)) + 0.1
    tree_sliced_two_sample_test(X[:20], Y[:20], n_permutations=9, random_state=0)
    times, loads = [], []
    for r in range(rounds):
        loads.append(os.getloadavg()[0])
        times.append(
            timed(lambda r=r: tree_sliced_two_sample_test(X, Y, random_state=r))
        )
    cpu = platform.processor() or platform.machine()
    threads = os.environ.get("OMP_NUM_THREADS", "unset")
    lines = [
        "5. default tree_sliced_two_sample_test, n = m = 200, d = 10 "
        + "(999 permutations, 250 trees x 4 lines)",
        f"   {cpu}, OMP_NUM_THREADS={threads}, {os.cpu_count()} CPUs",
        f"   rounds: {rounds}; seconds: " + ", ".join(f"{t:.3f}" for t in times),
        f"   median {np.median(times):.3f} s; 1-min load average before each: "
        + ", ".join(f"{v:.2f}" for v in loads),
    ]
    print("\n".join(lines), flush=True)
    DEFAULT_TEST.parent.mkdir(exist_ok=True)
    DEFAULT_TEST.write_text("\n".join(lines) + "\n")


def two_sample(rounds):
    """Section 4: the permutation test, batched against unbatched and POT."""
    from sklearn_iclr26.ot._trees import draw_trees, tree_costs
    from sklearn_iclr26.ot._two_sample import _permuted_masses

    lines = []

    def say(text=""):
        print(text, flush=True)
        lines.append(text)

    rng = np.random.RandomState(0)
    X, Y = rng.normal(size=(200, 10)), rng.normal(size=(200, 10)) + 0.1
    Z = np.concatenate([X, Y])

    def unbatched(n_permutations, n_trees):
        r = np.random.RandomState(0)
        trees = draw_trees(
            Z, np.full(400, 1 / 400), n_trees=n_trees, n_lines=4, root="median",
            root_std=0.1, directions="gaussian", random_state=r,
        )  # fmt: skip
        W = _permuted_masses(r, 200, 200, n_permutations)
        return tree_costs(Z, W, trees, splitting="distance", delta=2.0, p=1)

    def test(n_permutations, n_trees, **kw):
        return tree_sliced_two_sample_test(
            X, Y, n_permutations=n_permutations, n_trees=n_trees, random_state=0, **kw
        )

    say("4. two-sample test, n = m = 200, d = 10, 4 lines per tree, p = 1")
    say(f"   interleaved rounds: {rounds}; median seconds")
    for B, L in ((199, 250), (999, 250)):
        methods = {
            "batched FW-TSW": lambda B=B, L=L: test(B, L),
            "unbatched FW-TSW": lambda B=B, L=L: unbatched(B, L),
            "batched SW1 (uniform split)": lambda B=B, L=L: test(
                B, L, splitting="uniform"
            ),
        }
        t = interleaved(methods, rounds)
        ratio = t["unbatched FW-TSW"] / t["batched FW-TSW"]
        say(f"   {B} permutations, {L * 4} lines:")
        for name, v in t.items():
            say(f"     {name:28s} {v:8.3f} s  ({1e3 * v / (B + 1):.2f} ms/statistic)")
        say(f"     speed-up batched / unbatched: {ratio:.1f}x")
    B = 19
    t = interleaved(
        {
            "POT sliced (per permutation)": lambda: test(B, 250, statistic="sliced"),
            "batched SW1 (uniform split)": lambda: test(B, 250, splitting="uniform"),
        },
        rounds,
    )
    say(f"   {B} permutations, 1000 directions (POT recomputes every permutation):")
    for name, v in t.items():
        say(f"     {name:28s} {v:8.3f} s  ({1e3 * v / (B + 1):.2f} ms/statistic)")
    TWO_SAMPLE.parent.mkdir(exist_ok=True)
    TWO_SAMPLE.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
