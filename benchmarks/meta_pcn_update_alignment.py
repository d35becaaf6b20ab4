"""Sign of Meta-PCN's local weight updates against backprop, for every T.

At fixed weights (a depth-8 MetaPCNClassifier, hidden layers of 64, trained 3
epochs as PCN + weight norm on the standardised breast_cancer data), one batch
of 64 rows: run the estimator's inference (SGD with momentum on the hidden
activities, ``pc_inference_objective``) for T steps, take the local weight
gradients ``pc_weight_grads`` and compare each layer's with the backprop
gradient of the feed-forward cross-entropy: cosine and norm ratio.

Rules (``meta_pe``): the paper's meta-PE (``"paper"``: frozen feed-forward
predictions, each layer chasing the stop-gradient error from the layer above,
learning at the feed-forward inputs) at step 1.0, 0.5 and 0.1 (momentum 0 and
0.3), for every T from 1 to 30; vanilla PCN and the package's earlier
reconstruction (``"gauss_newton"``, ``meta_pe_weight`` 0.1) at step 0.1,
momentum 0.3, T in 7, 15, 30, 100. A layer the inference has not reached has
a zero update (cosine printed as +0.00). The script checks that the paper's
rule gives no negative cosine for any T wherever its linear inference does
not oscillate, i.e. step ``gamma <= (1 - sqrt(momentum)) ** 2`` (the roots of
``z^2 - (1 - gamma + momentum) z + momentum`` are then real: every momentum-0
step up to 1, and step 0.1 at momentum 0.3), and that at step 1, momentum 0
and T >= depth every cosine and norm ratio is 1 to 1e-9 (exit status 1
otherwise). Step 1 with momentum 0.3 oscillates and is reported, not
checked. About 30 CPU-seconds.

Run::

    OMP_NUM_THREADS=1 python benchmarks/meta_pcn_update_alignment.py

Writes ``benchmarks/results/meta_pcn_update_alignment.txt``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import sys
import warnings
from pathlib import Path

import numpy as np
import torch
from sklearn.datasets import load_breast_cancer
from sklearn.preprocessing import StandardScaler
from torch.nn import functional as F

from sklearn_iclr26.neural_network import MetaPCNClassifier

RESULTS = Path(__file__).parent / "results" / "meta_pcn_update_alignment.txt"
DEPTH = 8


def alignment(module, X, y, backprop, *, rule, n_steps, lr, momentum, weight=0.1):
    """Per-layer cosine and norm ratio of the PC update to backprop."""
    module.meta_pe, module.meta_pe_weight = rule, weight
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
        (64,) * DEPTH,
        meta_pe=False,
        inference_learning_rate=0.1,
        inference_momentum=0.3,
        batch_size=64,
        learning_rate_init=1e-3,
        max_iter=3,
        random_state=0,
    ).fit(X, y)
    module = clf.net_.module_
    Xb, yb = torch.as_tensor(X[:64]), torch.as_tensor(y[:64])
    weights = [layer.weight for layer in module.layers]
    backprop = torch.autograd.grad(F.cross_entropy(module(Xb), yb), weights)
    title = (
        "cos(local PC update, backprop gradient) per weight layer "
        f"(0 = input layer, {DEPTH} = output), breast_cancer, depth {DEPTH}, "
        "one batch of 64"
    )
    header = f"{'rule':<22} {'lr':>4} {'mom':>4} {'T':>4}  cosines, layers 0..{DEPTH}"
    lines = [title, header + " " * 31 + "|g|/|bp| layer 0, 3"]
    settings = [("paper", 1.0, 0.0), ("paper", 0.5, 0.0), ("paper", 0.1, 0.0)]
    settings += [("paper", 1.0, 0.3), ("paper", 0.1, 0.3)]
    failures = []
    min_cos = {}
    for rule, lr, momentum in settings:
        for n_steps in range(1, 31):
            cos, ratio = alignment(
                module,
                Xb,
                yb,
                backprop,
                rule=rule,
                n_steps=n_steps,
                lr=lr,
                momentum=momentum,
            )
            checked = lr <= (1 - np.sqrt(momentum)) ** 2
            key = f"paper lr={lr} mom={momentum}" + ("" if checked else " (oscillates)")
            if cos.min() < min_cos.get(key, (1.0,))[0]:
                min_cos[key] = (float(cos.min()), int(cos.argmin()), n_steps)
            if checked and cos.min() < 0:
                failures.append(f"{key} T={n_steps}: min cosine {cos.min():+.3f}")
            exact = np.abs(cos - 1).max() <= 1e-9 and np.abs(ratio - 1).max() <= 1e-9
            if lr == 1.0 and momentum == 0.0 and n_steps >= DEPTH and not exact:
                failures.append(f"{key} T={n_steps}: not backprop's update")
            if n_steps in (1, 4, 7, 8, 15, 30):
                lines.append(
                    f"{'meta-PE (paper)':<22} {lr:>4} {momentum:>4} {n_steps:>4}  "
                    + " ".join(f"{c:+.2f}" for c in cos)
                    + f"   {ratio[0]:.1e} {ratio[3]:.1e}"
                )
    for rule in (None, "gauss_newton"):
        for n_steps in (7, 15, 30, 100):
            cos, ratio = alignment(
                module,
                Xb,
                yb,
                backprop,
                rule=rule,
                n_steps=n_steps,
                lr=0.1,
                momentum=0.3,
            )
            name = "gauss_newton l=0.1" if rule else "vanilla PCN"
            lines.append(
                f"{name:<22} {0.1:>4} {0.3:>4} {n_steps:>4}  "
                + " ".join(f"{c:+.2f}" for c in cos)
                + f"   {ratio[0]:.1e} {ratio[3]:.1e}"
            )
    lines.append("")
    lines.append("paper rule, minimum cosine over all layers and T = 1..30:")
    lines += [
        f"  {key}: {c:+.4f} (layer {layer}, T={t})"
        for key, (c, layer, t) in min_cos.items()
    ]
    lines.append(
        "check (no negative cosine for any T where the inference does not "
        "oscillate; exact at lr=1, mom=0, T>=depth): "
        + ("passed" if not failures else "FAILED: " + "; ".join(failures))
    )
    text = "\n".join(lines)
    print(text)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(text + "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
