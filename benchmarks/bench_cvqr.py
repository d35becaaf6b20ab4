"""Speed of CVQR ranks: amortized warm start vs cold-start L-BFGS; fit time per epoch.

For 10,000 test pairs ``(x, y)``, the rank ``argmax_u <u, y> - phi(u, x)`` is
computed (a) the estimator's way: amortization network + damped Newton,
(b) by cold-start L-BFGS (strong Wolfe) from ``u = 0`` on the batch, as in the
authors' C-NQR solver, and (c) by damped Newton from ``u = 0``. All stop at the
same accuracy target ``max |grad_u phi(u, x) - y| <= 1e-6`` (float64) and the
achieved accuracy is printed next to the time. The models are the plain
variant (``residual_estimator=None``), as in the runs recorded in
``doc/cvqr.rst``; the rank solve is the same for the residual variant.
Then the training time per epoch on scm20d (d = 16, the authors'
architecture, batch 256).

Run::

    OMP_NUM_THREADS=1 python benchmarks/bench_cvqr.py \\
        --data-home ../shared/data/multioutput
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import time
from functools import partial

import numpy as np
import torch

from sklearn_iclr26.conformal import CVQRRegressor
from sklearn_iclr26.conformal._cvqr_modules import (
    lbfgs_conjugate,
    newton_conjugate,
    potential_grad,
)
from sklearn_iclr26.datasets import load_multioutput


def banana(n, rng):
    X = rng.uniform(0, 2, size=(n, 1))
    s = 0.2 + X[:, 0]
    e = rng.normal(size=(n, 2))
    return X, np.c_[X[:, 0] + s * e[:, 0], s * (0.6 * e[:, 0] ** 2 + 0.3 * e[:, 1])]


def rank_timings(reg, X, Y, tol=1e-6):
    module = reg.net_.module_
    x = torch.as_tensor(reg._scaled_features(X))
    y = torch.as_tensor((Y - reg._center(X) - reg._y_mean) / reg._y_scale)
    rows = []

    def accuracy(u):
        g = potential_grad(module.potential, u, x) - y
        return float(g.abs().max())

    torch.set_num_threads(1)
    t0 = time.perf_counter()
    with torch.no_grad():
        u0 = module.amortizer(x, y)
    t_amortizer = time.perf_counter() - t0
    u_amort, it_amort = newton_conjugate(module.potential, x, y, u0, tol=tol)
    t_amort = time.perf_counter() - t0
    rows.append(("amortized + Newton (default)", t_amort, accuracy(u_amort), it_amort))
    rows.append(("amortizer guess alone", t_amortizer, accuracy(u0), 0))
    t0 = time.perf_counter()
    u_cold, it_cold = newton_conjugate(
        module.potential, x, y, torch.zeros_like(y), tol=tol
    )
    rows.append(
        ("cold-start Newton", time.perf_counter() - t0, accuracy(u_cold), it_cold)
    )
    t0 = time.perf_counter()
    u_lbfgs = lbfgs_conjugate(
        module.potential, x, y, torch.zeros_like(y), max_iter=1000, tol=tol
    )
    rows.append(
        ("cold-start L-BFGS (C-NQR)", time.perf_counter() - t0, accuracy(u_lbfgs), "")
    )
    return rows


def breakdown(reg, X, Y, tol=1e-6, autograd_hessian=False):
    """Where the time of the default rank solve goes (amortized + Newton).

    Wraps the solver's derivative routine (``phi``, gradient and Hessian in
    closed form, ``PICNN.derivatives_u``; ``--autograd-hessian``: the former
    d backward passes of autograd) and ``torch.linalg.solve`` with timers, and
    records how many rows are still active at each Newton iteration: the
    solver runs until the slowest row converges, so the active-row profile
    shows whether the time goes to all rows or to a tail of hard ones.
    """
    from sklearn_iclr26.conformal import _cvqr_modules as mod

    module = reg.net_.module_
    x = torch.as_tensor(reg._scaled_features(X))
    y = torch.as_tensor((Y - reg._center(X) - reg._y_mean) / reg._y_scale)
    timers = {"derivatives (phi, grad, Hessian)": 0.0, "linear solve": 0.0}
    active = []
    orig_solve = torch.linalg.solve_ex
    orig_closed = mod.PICNN.derivatives_u

    def deriv(self, u, terms):
        active.append(u.shape[0])
        t0 = time.perf_counter()
        if autograd_hessian:
            with torch.enable_grad():
                out = mod._derivatives(partial(self.forward_u, terms=terms), u)
        else:
            out = orig_closed(self, u, terms)
        timers["derivatives (phi, grad, Hessian)"] += time.perf_counter() - t0
        return out

    def solve(*a, **k):
        t0 = time.perf_counter()
        out = orig_solve(*a, **k)
        timers["linear solve"] += time.perf_counter() - t0
        return out

    mod.PICNN.derivatives_u, torch.linalg.solve_ex = deriv, solve
    try:
        t0 = time.perf_counter()
        with torch.no_grad():
            u0 = module.amortizer(x, y)
        t_amort = time.perf_counter() - t0
        t0 = time.perf_counter()
        _, n_iter = mod.newton_conjugate(module.potential, x, y, u0, tol=tol)
        total = time.perf_counter() - t0
    finally:
        mod.PICNN.derivatives_u, torch.linalg.solve_ex = orig_closed, orig_solve
    rest = total - sum(timers.values())
    print(f"amortizer forward: {t_amort:.2f}s; Newton total {total:.2f}s")
    for name, t in {**timers, "line search + bookkeeping": rest}.items():
        print(f"  {name}: {t:.2f}s ({100 * t / total:.0f}%)")
    n = x.shape[0]
    print(f"  Newton iterations: {n_iter}; active rows per iteration (of {n}):")
    print("  " + ", ".join(str(a) for a in active))
    work = sum(active)
    print(
        f"  row-iterations: {work} = {work / n:.1f} per row on average; the "
        f"iterations with < 10% of the rows active take "
        f"{sum(a for a in active if a < 0.1 * n) / work:.0%} of the row-work"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-home", default="../shared/data/multioutput")
    parser.add_argument("--n-test", type=int, default=10000)
    parser.add_argument(
        "--epochs", type=int, default=60, help="max_iter of the scm20d model"
    )
    parser.add_argument(
        "--breakdown-only",
        action="store_true",
        help="only the scm20d model: where the rank time goes",
    )
    args = parser.parse_args()
    rng = np.random.RandomState(0)

    if args.breakdown_only:
        Xs, Ys = load_multioutput("scm20d", data_home=args.data_home, return_X_y=True)
        Ys = (Ys - Ys.mean(0)) / Ys.std(0)
        perm = rng.permutation(len(Xs))
        reg16 = CVQRRegressor(
            hidden_layer_sizes=(10,),
            batch_size=256,
            max_iter=args.epochs,
            warmup_epochs=max(1, args.epochs // 10),
            train_inner_iter=3,
            early_stopping=False,
            residual_estimator=None,
            random_state=0,
        ).fit(Xs[perm[:6000]], Ys[perm[:6000]])
        idx = np.resize(perm[6000:], args.n_test)
        torch.set_num_threads(1)
        print("== scm20d, d=16: breakdown of the default rank solve ==")
        breakdown(reg16, Xs[idx], Ys[idx])
        print("== the same with the Hessian by d autograd backward passes ==")
        breakdown(reg16, Xs[idx], Ys[idx], autograd_hessian=True)
        return
    print("== ranks of 10,000 test pairs (float64, 1 thread) ==")
    X, Y = banana(3000, rng)
    reg = CVQRRegressor(
        max_iter=30,
        warmup_epochs=10,
        learning_rate_init=3e-2,
        residual_estimator=None,
        random_state=0,
    ).fit(X, Y)
    Xt, Yt = banana(args.n_test, rng)
    cases = [("banana, d=2", reg, Xt, Yt)]

    Xs, Ys = load_multioutput("scm20d", data_home=args.data_home, return_X_y=True)
    Ys = (Ys - Ys.mean(0)) / Ys.std(0)
    perm = rng.permutation(len(Xs))
    fit, test = perm[:6000], perm[6000:]
    t0 = time.perf_counter()
    reg16 = CVQRRegressor(
        hidden_layer_sizes=(10,),
        batch_size=256,
        max_iter=args.epochs,
        warmup_epochs=max(1, args.epochs // 10),
        train_inner_iter=3,
        residual_estimator=None,
        random_state=0,
    ).fit(Xs[fit], Ys[fit])
    fit_time = time.perf_counter() - t0
    n_epochs = len(reg16.net_.history)
    idx = np.resize(test, args.n_test)  # repeat test rows up to n_test
    cases.append(("scm20d, d=16", reg16, Xs[idx], Ys[idx]))

    print(
        "| case | solver | time (s) | max abs grad residual | Newton iters | speed-up |"
    )
    print("|---|---|---|---|---|---|")
    for case, model, Xc, Yc in cases:
        rows = rank_timings(model, Xc, Yc)
        ref = rows[-1][1]
        for name, t, acc, it in rows:
            print(f"| {case} | {name} | {t:.2f} | {acc:.1e} | {it} | {ref / t:.1f}x |")

    print()
    print("== training on scm20d (4500 train rows, d=16, hidden 10, 1 layer) ==")
    print(
        f"{n_epochs} epochs (early stopping), {fit_time / n_epochs:.2f} s/epoch "
        f"on average (warm-up included); total fit incl. calibration of 1500 "
        f"points: {fit_time:.1f}s"
    )


if __name__ == "__main__":
    main()
