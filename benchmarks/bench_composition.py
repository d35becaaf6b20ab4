"""Speed and accuracy anchors of the ensemble and decomposition families.

1. ``simplex_least_squares`` (exact active set) against cvxpy (its default
   open-source solver) on MoMa-shaped problems: m = 800 proxy rows (the
   official QUOTA), N modules whose predictions are correlated noisy copies of
   the target. Printed: median relative objective gap (ours - cvxpy) and the
   time ratio. The kNN proxy (one module, 800 x 64 embedding) is timed too.
2. ``SparseAutoencoder`` (TopK) against scikit-learn's
   ``MiniBatchDictionaryLearning`` (``transform_algorithm="omp"``,
   ``transform_n_nonzero_coefs=k``) at equal ``n_components``: MBDL's fit time
   and reconstruction error, then the SAE trained for 1, 2, 4, ... epochs
   until it reaches MBDL's error; the time of that SAE fit is compared.
   The data: a sparse dictionary model (n x d, ``n_components`` atoms,
   ``k`` active per row, plus noise).

Results go to ``benchmarks/results/bench_composition.txt``. Usage:
``python benchmarks/bench_composition.py [--n 50000 --d 256]``;
``SKLEARN_ICLR26_QUICK=1`` uses 5,000 x 64.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import os
import time
from pathlib import Path

import numpy as np
from sklearn.decomposition import MiniBatchDictionaryLearning

from sklearn_iclr26.decomposition import SparseAutoencoder
from sklearn_iclr26.ensemble import simplex_least_squares
from sklearn_iclr26.ensemble._proxy import knn_proxy_predictions

RESULTS = Path(__file__).parent / "results"
QUICK = os.environ.get("SKLEARN_ICLR26_QUICK") == "1"


def _problem(rng, m, n):
    y, common = rng.normal(size=m), rng.normal(size=m)
    P = np.column_stack(
        [
            rng.uniform(0.5, 1.5) * y
            + rng.normal(0, 0.5)
            + rng.uniform(0.3, 2) * (0.6 * common + 0.8 * rng.normal(size=m))
            for _ in range(n)
        ]
    )
    return P, y


def bench_solver(lines):
    try:
        import cvxpy as cp
    except ImportError:
        lines.append("cvxpy not installed (pip install sklearn-iclr26[ensemble])")
        cp = None
    rng = np.random.RandomState(0)
    lines.append("simplex_least_squares vs cvxpy, m = 800, 20 problems each")
    lines.append(
        f"{'N':>4s} {'ours ms':>9s} {'cvxpy ms':>9s} {'ratio':>7s} "
        f"{'median rel gap':>15s} {'max rel gap':>12s}"
    )
    for n in (8, 18, 50):
        t_ours, t_cvx, gaps = [], [], []
        for _ in range(5 if QUICK else 20):
            P, y = _problem(rng, 800, n)
            t0 = time.perf_counter()
            w = simplex_least_squares(P, y)
            t_ours.append(time.perf_counter() - t0)
            f_ours = np.sum((P @ w - y) ** 2)
            if cp is not None:
                v = cp.Variable(n)
                prob = cp.Problem(
                    cp.Minimize(cp.sum_squares(P @ v - y)), [v >= 0, cp.sum(v) == 1]
                )
                t0 = time.perf_counter()
                prob.solve()
                t_cvx.append(time.perf_counter() - t0)
                wc = np.clip(v.value, 0, None)
                wc /= wc.sum()
                f_cvx = np.sum((P @ wc - y) ** 2)
                gaps.append((f_ours - f_cvx) / f_cvx)
        if cp is None:
            lines.append(f"{n:4d} {1e3 * np.median(t_ours):9.2f}")
            continue
        lines.append(
            f"{n:4d} {1e3 * np.median(t_ours):9.2f} {1e3 * np.median(t_cvx):9.2f} "
            f"{np.median(t_cvx) / np.median(t_ours):7.1f} {np.median(gaps):15.2e} "
            f"{np.max(gaps):12.2e}"
        )
    E, y = rng.normal(size=(800, 64)), rng.normal(size=800)
    t0 = time.perf_counter()
    for _ in range(5):
        knn_proxy_predictions(E, y)
    lines.append(
        f"kNN proxy, 800 x 64 embedding: {1e3 * (time.perf_counter() - t0) / 5:.1f} ms"
    )


def bench_sae(lines, n, d, n_components, k):
    rng = np.random.RandomState(0)
    D = rng.normal(size=(n_components, d))
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    codes = np.zeros((n, n_components))
    for i in range(n):
        codes[i, rng.choice(n_components, k, replace=False)] = rng.exponential(size=k)
    X = codes @ D + 0.05 * rng.normal(size=(n, d))
    t0 = time.perf_counter()
    mbdl = MiniBatchDictionaryLearning(
        n_components,
        batch_size=256,
        max_iter=5,
        transform_algorithm="omp",
        transform_n_nonzero_coefs=k,
        random_state=0,
    ).fit(X)
    t_mbdl = time.perf_counter() - t0
    err_mbdl = np.mean(np.sum((X - mbdl.transform(X) @ mbdl.components_) ** 2, 1))
    lines.append(
        f"\nSAE vs MiniBatchDictionaryLearning, {n} x {d}, n_components "
        f"{n_components}, k {k}"
    )
    lines.append(
        f"MBDL (5 epochs, OMP): {t_mbdl:.1f} s, reconstruction error {err_mbdl:.4f}"
    )
    reached = None
    for epochs in (1, 2, 4, 8, 16, 32, 64, 128):
        t0 = time.perf_counter()
        sae = SparseAutoencoder(
            n_components,
            k=k,
            max_iter=epochs,
            batch_size=256,
            learning_rate_init=1e-2,
            dtype="float32",
            random_state=0,
        ).fit(X)
        t_sae = time.perf_counter() - t0
        lines.append(
            f"SAE {epochs:2d} epochs: {t_sae:.1f} s, reconstruction error "
            f"{sae.reconstruction_error_:.4f}"
        )
        if sae.reconstruction_error_ <= err_mbdl:
            reached = t_sae
            break
    if reached is None:
        lines.append("SAE did not reach MBDL's error within 128 epochs.")
    else:
        lines.append(
            f"time to MBDL's error: SAE {reached:.1f} s vs MBDL {t_mbdl:.1f} s "
            f"(MBDL / SAE = {t_mbdl / reached:.1f}x)"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=50_000)
    parser.add_argument("--d", type=int, default=256)
    parser.add_argument("--n-components", type=int, default=512)
    parser.add_argument("--k", type=int, default=16)
    args = parser.parse_args()
    n, d, c = (5000, 64, 128) if QUICK else (args.n, args.d, args.n_components)
    lines = []
    bench_solver(lines)
    bench_sae(lines, n, d, c, args.k)
    text = "\n".join(lines) + "\n"
    print(text)
    if not QUICK:
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "bench_composition.txt").write_text(text)


if __name__ == "__main__":
    main()
