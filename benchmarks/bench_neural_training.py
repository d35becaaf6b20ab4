"""Training cost of MetaPCN and Bayesian augmentation against backprop MLPs.

* MetaPCNClassifier (vanilla PCN, PCN + weight norm, full Meta-PCN) vs the
  same network trained by backprop through the shared engine
  (TorchMLPClassifier) vs scikit-learn's MLPClassifier: seconds per epoch on
  digits (1,347 training rows, 3 hidden layers of 64, batch 64; CPU seconds,
  best of 3). Expected:
  PCN about (T + 1) x backprop per batch, T = n_inference_steps.
* BayesianAugmentationClassifier (OPTIMA-style, n_aug_samples 1 and 4, and a
  fixed-strength augmenter) vs a plain TorchMLPClassifier with the same
  network, epochs and batch (breast_cancer, hidden (64,), 200 full-batch
  epochs, float64, one torch thread): CPU seconds per fit, median over
  interleaved rounds in one process (the machine's load drifts; CPU time and
  interleaving keep the ratios fair).
  Target: OPTIMA-style at n_aug_samples=1 <= 2x the plain MLP.
* A Laplace marginal-likelihood baseline (``laplace.marglik_training``, the
  training loop LILA builds on: Kronecker-factored GGN Laplace, layer-wise
  prior precisions tuned by the marginal likelihood, 10 hyper-steps every
  ``marglik_frequency`` epochs), same network and epochs, if laplace-torch is
  installed (``pip install sklearn-iclr26[laplace]``; laplace-torch 0.3 pulls
  torchvision, whose wheels pin a torch version, so with an existing torch
  install ``laplace-torch asdfghjkl==0.1a4 backpack-for-pytorch
  curvlinops-for-pytorch einconv unfoldNd einops opt_einsum torchmetrics
  lightning-utilities linear_operator`` with ``--no-deps``: it imports and
  runs without torchvision). It tunes prior
  precisions, not augmentation parameters: LILA's augmentation-aware version
  is a fork of it). One fit each (it is slow).

Run::

    OMP_NUM_THREADS=1 python benchmarks/bench_neural_training.py
    OMP_NUM_THREADS=1 python benchmarks/bench_neural_training.py --ratio-check 9

``--ratio-check N`` only alternates the plain and the OPTIMA-style fit (the
target's configuration) for N rounds in one process and prints every
round's ratio and the median (a quick check of the target under the
machine's present load).
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import time
import warnings

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPClassifier
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.neural_network import (
    BayesianAugmentationClassifier,
    MetaPCNClassifier,
    TorchMLPClassifier,
)


def interleaved(fits, rounds=5):
    """Median CPU seconds of each fit over ``rounds`` interleaved rounds."""
    for fit in fits.values():  # warm-up
        fit()
    times = {name: [] for name in fits}
    for _ in range(rounds):
        for name, fit in fits.items():
            start = time.process_time()  # CPU seconds: robust to a busy machine
            fit()
            times[name].append(time.process_time() - start)
    return {name: float(np.median(t)) for name, t in times.items()}


def laplace_fit(X, y, marglik_frequency):
    import torch
    from laplace import marglik_training
    from torch.utils.data import DataLoader, TensorDataset

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        model = torch.nn.Sequential(
            torch.nn.Linear(X.shape[1], 64), torch.nn.ReLU(), torch.nn.Linear(64, 2)
        ).to(torch.float64)
        data = TensorDataset(torch.tensor(X), torch.tensor(y))
        loader = DataLoader(data, batch_size=len(y))
        marglik_training(
            model,
            loader,
            likelihood="classification",
            hessian_structure="kron",
            n_epochs=200,
            optimizer_kwargs={"lr": 1e-2},
            marglik_frequency=marglik_frequency,
            n_hypersteps=10,
        )


STEPS = ("plain step", "OPTIMA-style step")


def optima_step_breakdown(X, y, rounds=9, reps=100):
    """Where the OPTIMA-style step's extra time goes (microseconds per step).

    One full-batch training step (skorch ``train_step``: forward, loss,
    backward, Adam) of the plain MLP and of the OPTIMA-style net, fitted for
    one epoch on ``X, y``, and the pieces the OPTIMA-style step adds, each
    timed alone on the same shapes: the noise and posterior draws, the fused
    augmentation node's forward (``m + s eps``, softplus, the noisy input and
    the KL) and backward (gradients to ``m`` and ``log s``), the input-gradient
    matrix product of the first layer (the data term reaches the noise scale
    through the input), and an Adam step of the augmenter's own parameter
    group. CPU microseconds, minimum over interleaved rounds (the least
    disturbed by other load). "rest" is the step difference minus the pieces:
    autograd and Python bookkeeping of the larger graph and module.
    """
    import torch

    def step_of(est):
        est.fit(X, y)
        net = est.net_
        data = net.get_dataset({"X": X}, np.searchsorted(est.classes_, y))
        batch = next(iter(net.get_iterator(data, training=True)))
        return net, batch

    plain, plain_batch = step_of(TorchMLPClassifier((64,), random_state=0, max_iter=1))
    optima, optima_batch = step_of(
        BayesianAugmentationClassifier((64,), random_state=0, max_iter=1)
    )
    aug = optima.module_.augmenter
    Xt = torch.as_tensor(X)
    # float32 draws, as the training forward makes them
    eps, noise = torch.randn((2, *Xt.shape)).unbind(0)
    X_aug, kl = aug.gaussian_noise(Xt, eps, noise)
    grad_out = torch.randn_like(X_aug)
    grad_hidden = torch.randn(X.shape[0], 64, dtype=torch.float64)
    weight = optima.module_.mlp.layers[0].weight.detach()
    params = [aug.q_mean, aug.q_log_std]
    aug_params = [torch.nn.Parameter(p.detach().clone()) for p in params]
    for p in aug_params:
        p.grad = torch.randn_like(p)
    aug_adam = torch.optim.Adam(aug_params, lr=0.1, weight_decay=0.0)

    pieces = {
        "plain step": lambda: plain.train_step(plain_batch),
        "OPTIMA-style step": lambda: optima.train_step(optima_batch),
        "noise + posterior draws (2, n, d)": lambda: torch.randn((2, *Xt.shape)),
        "fused node forward (softplus, KL)": lambda: aug.gaussian_noise(Xt, eps, noise),
        "fused node backward": lambda: torch.autograd.grad(
            [X_aug, kl], params, [grad_out, torch.ones(())], retain_graph=True
        ),
        "input-gradient matmul (n, 64) @ (64, d)": lambda: grad_hidden.mm(weight),
        "Adam step of the augmenter group": aug_adam.step,
    }
    times = {name: [] for name in pieces}
    with torch.random.fork_rng():
        for _ in range(rounds):
            for name, piece in pieces.items():
                for _ in range(5):
                    piece()
                start = time.process_time()
                for _ in range(reps):
                    piece()
                times[name].append((time.process_time() - start) / reps * 1e6)
    best = {name: float(np.min(t)) for name, t in times.items()}
    extra = best["OPTIMA-style step"] - best["plain step"]
    best["rest (autograd, Python, loss)"] = extra - sum(
        t for name, t in best.items() if name not in STEPS
    )
    return best, extra


def best_of(fit, repeats=3):
    times = []
    for _ in range(repeats):
        start = time.process_time()
        fit()
        times.append(time.process_time() - start)
    return min(times)


def ratio_check(rounds):
    """Per-round CPU-time ratio OPTIMA-style / plain on the target's setting."""
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    fits = {
        "plain": lambda: TorchMLPClassifier((64,), random_state=0).fit(X, y),
        "optima": lambda: BayesianAugmentationClassifier((64,), random_state=0).fit(
            X, y
        ),
    }
    for fit in fits.values():  # warm-up
        fit()
    times = {name: [] for name in fits}
    for _ in range(rounds):
        for name, fit in fits.items():
            start = time.process_time()
            fit()
            times[name].append(time.process_time() - start)
    plain, optima = np.array(times["plain"]), np.array(times["optima"])
    print(
        "breast_cancer, hidden (64,), 200 full-batch epochs: OPTIMA-style / plain "
        f"CPU time per round: {np.round(optima / plain, 2).tolist()}"
    )
    p, o = np.median(plain), np.median(optima)
    print(f"median plain {p:.3f} s, OPTIMA-style {o:.3f} s, ratio {o / p:.2f}x")


def main():
    X, y = load_digits(return_X_y=True)
    X = StandardScaler().fit_transform(X)[:1347]
    y = y[:1347]
    epochs, hidden = 5, (64, 64, 64)
    common = {"hidden_layer_sizes": hidden, "batch_size": 64, "max_iter": epochs}
    rows = {}
    rows["backprop (TorchMLPClassifier)"] = best_of(
        lambda: TorchMLPClassifier(activation="gelu", random_state=0, **common).fit(
            X, y
        )
    )

    def sk():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            MLPClassifier(hidden, batch_size=64, max_iter=epochs, random_state=0).fit(
                X, y
            )

    rows["sklearn MLPClassifier"] = best_of(sk)
    pcn_step = {"inference_learning_rate": 0.1, "inference_momentum": 0.3}
    for name, params in {
        "vanilla PCN": {"meta_pe": False, "weight_norm": False, **pcn_step},
        "PCN + weight norm": {"meta_pe": False, **pcn_step},
        "Meta-PCN (meta_pe=True)": {"meta_pe": True},
    }.items():
        rows[name] = best_of(
            lambda p=params: MetaPCNClassifier(random_state=0, **common, **p).fit(X, y),
            repeats=2,
        )
    base = rows["backprop (TorchMLPClassifier)"]
    print(f"digits, {len(y)} rows, hidden {hidden}, batch 64, T=7: CPU s/epoch, ratio")
    for name, t in rows.items():
        print(f"  {name:32s} {t / epochs:8.4f}  {t / base:6.2f}x")

    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    fits = {
        "plain TorchMLPClassifier": lambda: TorchMLPClassifier(
            (64,), random_state=0
        ).fit(X, y),
        "OPTIMA-style, n_aug_samples=1": lambda: BayesianAugmentationClassifier(
            (64,), random_state=0
        ).fit(X, y),
        "fixed gaussian noise 0.1": lambda: BayesianAugmentationClassifier(
            (64,), learn_augmentation=False, q_init_std=0.0, random_state=0
        ).fit(X, y),
        "OPTIMA-style, n_aug_samples=4": lambda: BayesianAugmentationClassifier(
            (64,), n_aug_samples=4, random_state=0
        ).fit(X, y),
    }
    times = interleaved(fits)
    try:
        import laplace  # noqa: F401
    except ImportError:
        print("\n(laplace-torch not installed: no Laplace marginal-likelihood row)")
    else:
        for freq in (1, 10):
            start = time.process_time()
            laplace_fit(X, y, freq)
            name = f"Laplace marglik, kron, every {freq} ep"
            times[name] = time.process_time() - start
    base = times["plain TorchMLPClassifier"]
    print(
        "\nbreast_cancer, 569 rows, hidden (64,), 200 full-batch epochs: "
        "CPU s/fit (median of 5 interleaved rounds; Laplace rows one fit), ratio"
    )
    for name, t in times.items():
        print(f"  {name:38s} {t:8.3f}  {t / base:6.2f}x")

    best, extra = optima_step_breakdown(X, y)
    plain_step = best["plain step"]
    print(
        "\nper full-batch step (569 x 30, hidden (64,), float64): CPU us, "
        "min of 9 interleaved rounds of 100 steps; pieces timed alone"
    )
    for name, t in best.items():
        share = "" if name in STEPS else f"  {t / extra:5.0%} of the extra"
        print(f"  {name:42s} {t:8.1f}  {t / plain_step:5.2f}x plain{share}")

    # The same ratio at a mid-size network with mini-batches: the augmentation's
    # per-step cost is a fixed number of small ops, so the ratio falls as the
    # network's own compute grows.
    X, y = load_digits(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    mid = {
        "hidden_layer_sizes": (256, 256),
        "batch_size": 128,
        "max_iter": 30,
        "random_state": 0,
    }
    times = interleaved(
        {
            "plain TorchMLPClassifier": lambda: TorchMLPClassifier(**mid).fit(X, y),
            "OPTIMA-style, n_aug_samples=1": lambda: BayesianAugmentationClassifier(
                **mid
            ).fit(X, y),
        }
    )
    base = times["plain TorchMLPClassifier"]
    print(
        f"\ndigits, {len(y)} rows, hidden (256, 256), batch 128, 30 epochs: "
        "CPU s/fit (median of 5 interleaved rounds), ratio"
    )
    for name, t in times.items():
        print(f"  {name:38s} {t:8.3f}  {t / base:6.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ratio-check", type=int, default=0, metavar="ROUNDS")
    args = parser.parse_args()
    if args.ratio_check:
        ratio_check(args.ratio_check)
    else:
        main()
