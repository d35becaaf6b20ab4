"""The authors' CVQR implementation side by side with ours, on the same splits.

Runs the public reference implementation
(https://github.com/VldKnd/conditional_quantile_function, MIT licence) from a
checkout whose path is given on the command line; nothing of it is copied into
this project. Its ``AmortizedNeuralQuantileRegression`` is trained with the
authors' selected configuration for the data set (``selected_params.py`` of
the checkout: width, depth, batch size, epochs, warm-up, learning rate; AdamW
with betas (0.5, 0.5), weight decay 1e-4, cosine annealing), exactly as their
``CVQRegressor.fit`` does, and its ranks are computed as their
``calculate_scores`` does: one batch L-BFGS over the whole calibration set and
one over the whole test set (``push_y_given_x``).

On the same split (the reproduction's ``split``: n_test = n_cal = 2000, the
rest for training, capped by ``--max-train``; X and Y standardized with
training statistics), both are conformalized by the exact order statistic of
their own rank norms, and we report: coverage, worst-slab coverage, (log V)/d
as MEAN and MEDIAN over ``--n-volume`` test points (the same change-of-
variables estimator, ``vol(B_q) E_u[det Hessian_u phi(u, x)]``, for both), and
the accuracy of the rank solves (the fraction of rows whose conjugate gradient
``||grad_u phi(u, x) - y||`` exceeds 1e-3, calibration vs test).

Needs the reference's own dependencies for the parts used: torch, pydantic and
tqdm. Usage::

    git clone https://github.com/VldKnd/conditional_quantile_function /path/cqf
    OMP_NUM_THREADS=1 python benchmarks/cvqr_reference.py /path/cqf \\
        --dataset scm20d --seeds 0 --output benchmarks/results/cvqr_ref.jsonl
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import importlib.util
import json
import math
import os
import sys
import time
import types
import warnings

import numpy as np
from sklearn.impute import SimpleImputer

from sklearn_iclr26.conformal import CVQRRegressor, conformal_quantile
from sklearn_iclr26.datasets import load_multioutput
from sklearn_iclr26.metrics import rank_calibration, worst_slab_coverage_score

HERE = os.path.dirname(os.path.abspath(__file__))


def _split():
    spec = importlib.util.spec_from_file_location(
        "cvqr_reproduction", os.path.join(HERE, "cvqr_reproduction.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.split


def load_reference(path):
    """Import the reference's amortized model from a checkout, or exit clearly."""
    src = os.path.join(path, "src")
    target = os.path.join(
        src,
        "pushforward_operators",
        "neural_quantile_regression",
        "amortized_neural_quantile_regression.py",
    )
    if not os.path.isfile(target):
        sys.exit(
            f"No checkout of the reference implementation at {path!r} (missing "
            f"{target}). Clone https://github.com/VldKnd/conditional_quantile_function"
            " and pass its path."
        )
    sys.path.insert(0, src)
    # the packages' __init__ files import every model of the repository (and
    # their optional dependencies); register bare packages so that only the
    # modules used here are imported
    for name in (
        "pushforward_operators",
        "pushforward_operators.neural_quantile_regression",
    ):
        pkg = types.ModuleType(name)
        pkg.__path__ = [os.path.join(src, *name.split("."))]
        sys.modules.setdefault(name, pkg)
    try:
        from infrastructure.classes import TrainParameters
        from pushforward_operators.neural_quantile_regression.amortized_neural_quantile_regression import (  # noqa: E501
            AmortizedNeuralQuantileRegression,
        )
    except ImportError as exc:
        sys.exit(
            f"The reference implementation at {path!r} could not be imported ({exc}); "
            "install its dependencies (torch, pydantic, tqdm)."
        )
    params_file = os.path.join(
        src, "conformal", "score_calculators", "selected_params.py"
    )
    spec = importlib.util.spec_from_file_location("selected_params", params_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return AmortizedNeuralQuantileRegression, TrainParameters, module.selected_params


def _log_det_hessians(potential, X, U):
    """``log det Hessian_u phi(u, x)`` row by row (rows are independent)."""
    import torch

    d = U.shape[1]
    u = U.detach().clone().requires_grad_(True)
    with torch.enable_grad():
        phi = potential(X, u)
        (grad,) = torch.autograd.grad(phi.sum(), u, create_graph=True)
        rows = [
            torch.autograd.grad(grad[:, j].sum(), u, retain_graph=j < d - 1)[0]
            for j in range(d)
        ]
    return torch.linalg.slogdet(torch.stack(rows, 1))[1].detach()


def _reference_run(classes, config, Xtr, Ytr, Xc, Yc, Xt, Yt, args, seed):
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    Model, TrainParameters, _ = classes
    dtype = config.get("dtype", torch.float64)
    torch.manual_seed(seed)
    model = Model(
        feature_dimension=Xtr.shape[1],
        response_dimension=Ytr.shape[1],
        hidden_dimension=config["hidden_dimension"],
        number_of_hidden_layers=config["number_of_hidden_layers"],
    ).to(dtype)
    epochs = args.epochs or config["n_epochs"]
    params = TrainParameters(
        number_of_epochs_to_train=epochs,
        optimizer_parameters={
            "lr": config["learning_rate"],
            "betas": (0.5, 0.5),
            "weight_decay": 1e-4,
        },
        scheduler_parameters={"eta_min": 0.0},
        verbose=False,
        warmup_iterations=config["warmup_iterations"],
    )
    loader = DataLoader(
        TensorDataset(torch.tensor(Xtr, dtype=dtype), torch.tensor(Ytr, dtype=dtype)),
        batch_size=config["batch_size"],
    )
    t0 = time.time()
    model.train()
    model.fit(loader, train_parameters=params)
    model.eval()
    fit_time = time.time() - t0

    def ranks(X, Y):
        x, y = torch.tensor(X, dtype=dtype), torch.tensor(Y, dtype=dtype)
        u = model.push_y_given_x(y=y, x=x)  # one batch L-BFGS, as theirs
        ys = model.Y_scaler(y)
        with torch.enable_grad():
            uu = u.clone().requires_grad_(True)
            (g,) = torch.autograd.grad(model.potential_network(x, uu).sum(), uu)
        return u.numpy().astype(np.float64), (g - ys).norm(dim=1).detach().numpy()

    t0 = time.time()
    Uc, gc = ranks(Xc, Yc)
    Ut, gt = ranks(Xt, Yt)
    rank_time = time.time() - t0
    scale = torch.sqrt(model.Y_scaler.running_var).to(dtype)

    def log_volume(Xv, q):
        d = Ytr.shape[1]
        gen = torch.Generator().manual_seed(0)
        z = torch.randn(args.n_mc, d, generator=gen, dtype=torch.float64)
        r = torch.rand(args.n_mc, 1, generator=gen, dtype=torch.float64) ** (1 / d)
        U = (q * r * z / z.norm(dim=1, keepdim=True)).to(dtype)
        x = torch.tensor(Xv, dtype=dtype).repeat_interleave(args.n_mc, 0)
        logdet = _log_det_hessians(model.potential_network, x, U.repeat(len(Xv), 1))
        logdet = logdet.double().reshape(len(Xv), args.n_mc)
        log_mean = torch.logsumexp(logdet, 1) - math.log(args.n_mc)
        log_ball = 0.5 * d * math.log(math.pi) - math.lgamma(0.5 * d + 1)
        return (log_mean + log_ball + d * math.log(q)).numpy() + float(
            torch.log(scale.double()).sum()
        )

    return Uc, Ut, gc, gt, log_volume, fit_time, rank_time, epochs


def _ours(config, Xtr, Ytr, Xc, Yc, Xt, Yt, args, seed):
    reg = CVQRRegressor(
        hidden_layer_sizes=(config["hidden_dimension"],)
        * config["number_of_hidden_layers"],
        batch_size=config["batch_size"],
        max_iter=args.our_epochs,
        warmup_epochs=max(1, args.our_epochs // 10),
        learning_rate_init=1e-2,
        train_inner_iter=3,
        dtype="float32",
        # the map is trained on the same training rows as the reference's
        # (one row is held out, as fit requires a calibration part); the
        # comparison's calibration set is Xc for both
        calibration_size=1,
        residual_estimator=None,  # the reference's plain map
        random_state=seed,
    )
    t0 = time.time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # 1 calibration row
        reg.fit(Xtr, Ytr)
    fit_time = time.time() - t0
    t0 = time.time()
    Uc, Ut = reg.rank(Xc, Yc), reg.rank(Xt, Yt)
    rank_time = time.time() - t0

    def grad_norms(X, Y, U):
        import torch

        from sklearn_iclr26.conformal._cvqr_modules import potential_grad

        module = reg.net_.module_
        Xs = torch.as_tensor(reg._scaled_features(X), dtype=torch.float32)
        Ys = torch.as_tensor((Y - reg._y_mean) / reg._y_scale, dtype=torch.float32)
        g = potential_grad(
            module.potential, torch.as_tensor(U, dtype=torch.float32), Xs
        )
        return (g - Ys).norm(dim=1).numpy()

    def log_volume(Xv, q):
        return reg._log_volume_batch(Xv, q, n_samples=args.n_mc)

    gc, gt = grad_norms(Xc, Yc, Uc), grad_norms(Xt, Yt, Ut)
    return Uc, Ut, gc, gt, log_volume, fit_time, rank_time, reg.n_iter_


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("reference", help="path of a checkout of the reference")
    parser.add_argument("--data-home", default="../shared/data/multioutput")
    parser.add_argument("--dataset", default="scm20d")
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument(
        "--epochs", type=int, default=None, help="reference epochs (theirs if unset)"
    )
    parser.add_argument("--our-epochs", type=int, default=200)
    parser.add_argument("--max-train", type=int, default=10000)
    parser.add_argument("--n-volume", type=int, default=200)
    parser.add_argument("--n-mc", type=int, default=64)
    parser.add_argument("--level", type=float, default=0.9)
    parser.add_argument("--output", default="benchmarks/results/cvqr_reference.jsonl")
    args = parser.parse_args()
    classes = load_reference(args.reference)
    config = classes[2][args.dataset]
    X, Y = load_multioutput(args.dataset, data_home=args.data_home, return_X_y=True)
    X = SimpleImputer(strategy="median").fit_transform(X)
    split = _split()
    os.makedirs(os.path.dirname(args.output) or ".", exist_ok=True)
    alpha = 1 - args.level
    for seed in args.seeds:
        train, cal, test = split(len(X), seed, max_train=args.max_train)
        mx, sx = X[train].mean(0), X[train].std(0) + 1e-12
        my, sy = Y[train].mean(0), Y[train].std(0) + 1e-12
        Xtr, Xc, Xt = ((X[i] - mx) / sx for i in (train, cal, test))
        Ytr, Yc, Yt = ((Y[i] - my) / sy for i in (train, cal, test))
        vol_idx = np.random.RandomState(seed).permutation(len(Xt))[: args.n_volume]
        for name, run in (("reference", _reference_run), ("ours", _ours)):
            if name == "reference":
                out = run(classes, config, Xtr, Ytr, Xc, Yc, Xt, Yt, args, seed)
            else:
                out = run(config, Xtr, Ytr, Xc, Yc, Xt, Yt, args, seed)
            Uc, Ut, gc, gt, log_volume, fit_time, rank_time, epochs = out
            q = conformal_quantile(np.sort(np.linalg.norm(Uc, axis=1)), 1 - alpha)
            covered = np.linalg.norm(Ut, axis=1) <= q
            log_v = log_volume(Xt[vol_idx], q) / Y.shape[1]
            diag = rank_calibration(Ut)
            row = {
                "dataset": args.dataset,
                "seed": seed,
                "implementation": name,
                "epochs": epochs,
                "coverage": float(covered.mean()),
                "wsc": worst_slab_coverage_score(
                    Xt, covered, n_directions=200, random_state=seed
                ),
                "logV_d_mean": float(np.mean(log_v)),
                "logV_d_median": float(np.median(log_v)),
                "rank_ratio": diag.squared_norm_ratio,
                "rank_ks": diag.ks_statistic,
                "cal_unconverged": float(np.mean(gc > 1e-3)),
                "test_unconverged": float(np.mean(gt > 1e-3)),
                "fit_s": fit_time,
                "rank_s": rank_time,
            }
            print(json.dumps(row), flush=True)
            with open(args.output, "a") as f:
                f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
