"""Why PCN + meta-PE trains unstably: sign of the local updates vs backprop.

At fixed weights (a depth-8 MetaPCNClassifier, hidden layers of 64, trained 3
epochs as PCN + weight norm on the standardised breast_cancer data), one batch
of 64 rows: run the estimator's inference (SGD with momentum 0.3 on the hidden
activities, ``pc_inference_objective``) for T steps, take the local weight
gradients ``pc_weight_grads`` at the inferred activities and compare each
layer's with the backprop gradient of the feed-forward cross-entropy: cosine
and norm ratio. Vanilla PCN (``meta_pe=False``) vs meta-PE with
``meta_pe_weight`` 0.1 and 0.01, inference steps 0.1 and 0.03, T from 7 (the
default) to 400. About 30 CPU-seconds.

Run::

    OMP_NUM_THREADS=1 python benchmarks/meta_pcn_update_alignment.py

Writes ``benchmarks/results/meta_pcn_update_alignment.txt``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import warnings
from pathlib import Path

import numpy as np
import torch
from sklearn.datasets import load_breast_cancer
from sklearn.preprocessing import StandardScaler
from torch.nn import functional as F

from sklearn_iclr26.neural_network import MetaPCNClassifier

RESULTS = Path(__file__).parent / "results" / "meta_pcn_update_alignment.txt"


def alignment(module, X, y, backprop, *, meta_pe, weight, n_steps, lr, momentum=0.3):
    """Per-layer cosine and norm ratio of the PC update to backprop."""
    module.meta_pe, module.meta_pe_weight = meta_pe, weight
    acts = [a.detach() for a in module.pc_init(X)]
    vel = [torch.zeros_like(a) for a in acts]
    for _ in range(n_steps):  # the estimator's inference loop
        acts = [a.detach().requires_grad_(True) for a in acts]
        objective = module.pc_inference_objective(X, acts, y).sum()
        grads = torch.autograd.grad(objective, acts)
        with torch.no_grad():
            acts = [
                a - lr * v.mul_(momentum).add_(g) for a, g, v in zip(acts, grads, vel)
            ]
    pairs = module.pc_weight_grads(X, [a.detach() for a in acts], y)
    cos, ratio = [], []
    for (_, g), b in zip(pairs[0::2], backprop):
        g, b = g.ravel(), b.ravel()
        cos.append(float(g @ b / (g.norm() * b.norm() + 1e-300)))
        ratio.append(float(g.norm() / b.norm()))
    return np.array(cos), np.array(ratio)


def main():
    warnings.simplefilter("ignore")
    torch.manual_seed(0)
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    clf = MetaPCNClassifier(
        (64,) * 8, batch_size=64, learning_rate_init=1e-3, max_iter=3, random_state=0
    ).fit(X, y)
    module = clf.net_.module_
    Xb, yb = torch.as_tensor(X[:64]), torch.as_tensor(y[:64])
    weights = [layer.weight for layer in module.layers]
    backprop = torch.autograd.grad(F.cross_entropy(module(Xb), yb), weights)
    title = (
        "cos(local PC update, backprop gradient) per weight layer "
        "(0 = input layer, 8 = output), breast_cancer, depth 8, one batch of 64"
    )
    header = f"{'variant':<22} {'lr':>5} {'T':>4}  cosines, layers 0..8"
    lines = [title, header + " " * 33 + "|g|/|bp| layer 0, 3"]
    settings = [(False, 0.0), (True, 0.1), (True, 0.01)]
    for lr in (0.1, 0.03):
        for meta_pe, weight in settings:
            for n_steps in (7, 15, 30, 100, 400) if lr == 0.1 else (7, 30):
                cos, ratio = alignment(
                    module,
                    Xb,
                    yb,
                    backprop,
                    meta_pe=meta_pe,
                    weight=weight,
                    n_steps=n_steps,
                    lr=lr,
                )
                name = f"meta-PE lambda={weight}" if meta_pe else "vanilla PCN"
                lines.append(
                    f"{name:<22} {lr:>5} {n_steps:>4}  "
                    + " ".join(f"{c:+.2f}" for c in cos)
                    + f"   {ratio[0]:.1e} {ratio[3]:.1e}"
                )
    text = "\n".join(lines)
    print(text)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(text + "\n")


if __name__ == "__main__":
    main()
