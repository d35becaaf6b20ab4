"""
=====================================================================
How many samples to draw when the verifier is imperfect (resampling)
=====================================================================

A generator samples an answer, an imperfect verifier accepts or rejects it;
with up to ``k`` samples the first accepted one is submitted. Here the
generator samples labels of the KEEL ``letter`` set from a logistic
regression's ``predict_proba``; a weaker model (naive Bayes) accepts a label
when it gives it probability >= 0.05; the true label is the ground truth.
:class:`~sklearn_iclr26.inference.ResamplingUtilityEstimator` turns the
per-sample records into the accuracy, false-positive and utility curves:
accuracy saturates at a ceiling below 1 and, once wrong answers are
penalised, the best ``k`` is small (or 0: abstain). Two ceilings are drawn:
``accuracy_ceiling_`` counts a problem with no accepted sample as 0, and
``conditional_accuracy_ceiling_`` (the one the paper's figures plot) averages
only over the problems with an accepted sample (on this pool almost every
problem has one, so the two nearly coincide). A last section calibrates the
paper's two-type model from the same counts with both soundness estimates
(pooled, and the authors' notebook's product of means) and compares the
optimal ``k``. Set
``SKLEARN_ICLR26_QUICK=1`` for a faster run.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import os

import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.datasets import load_keel
from sklearn_iclr26.inference import ResamplingUtilityEstimator

quick = os.environ.get("SKLEARN_ICLR26_QUICK") == "1"
n_problems, n_samples = (200, 50) if quick else (1000, 200)

X, y = load_keel("letter", return_X_y=True)
X = np.asarray(X, dtype=float)
X_train, X_test, y_train, y_test = train_test_split(
    X, y, train_size=0.5, random_state=0, stratify=y
)
X_test, y_test = X_test[:n_problems], np.asarray(y_test)[:n_problems]
generator = make_pipeline(StandardScaler(), LogisticRegression(max_iter=300))
generator.fit(X_train, y_train)
verifier = GaussianNB().fit(X_train, y_train)

rng = np.random.RandomState(0)
proba = generator.predict_proba(X_test)
cumulative = np.cumsum(proba, axis=1)
u = rng.uniform(size=(n_problems, n_samples, 1))
labels = np.minimum((u > cumulative[:, None, :]).sum(axis=2), proba.shape[1] - 1)
accepted = np.take_along_axis(verifier.predict_proba(X_test), labels, axis=1) >= 0.05
correct = labels == np.searchsorted(generator.classes_, y_test)[:, None]

# %%
# The curves for increasing false-positive penalties (2-D layout: problems x
# samples)
fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(10, 4))
est = ResamplingUtilityEstimator(fp_penalty=0.0, k_max=100).fit(accepted, correct)
ax0.plot(est.accuracy_curve_, label="accuracy")
ax0.plot(est.false_positive_curve_, label="false positives")
ax0.axhline(est.accuracy_ceiling_, ls="--", c="k", label="ceiling (all problems)")
ax0.axhline(
    est.conditional_accuracy_ceiling_,
    ls="-.",
    c="tab:red",
    label="ceiling (problems with an accepted sample)",
)
print(
    f"ceiling {est.accuracy_ceiling_:.3f}, conditional ceiling "
    f"{est.conditional_accuracy_ceiling_:.3f} "
    f"({np.mean(~accepted.any(axis=1)):.1%} of problems never accepted)"
)
ax0.axhline(correct.mean(), ls=":", c="gray", label="single-sample accuracy")
ax0.set(xscale="symlog", xlabel="k (samples)", ylabel="share of problems")
ax0.legend()
for penalty in [0, 1, 2, 4, 8]:
    est = ResamplingUtilityEstimator(fp_penalty=penalty, k_max=100).fit(
        accepted, correct
    )
    ax1.plot(est.utility_curve_, label=f"penalty {penalty}: k*={est.k_opt_}")
    print(f"penalty {penalty}: k*={est.k_opt_}, utility {est.max_utility_:.3f}")
ax1.set(xscale="symlog", xlabel="k (samples)", ylabel="utility")
ax1.legend(fontsize=8)
fig.tight_layout()
plt.show()

# %%
# The two-type model calibrated from the counts
# ---------------------------------------------
# :meth:`~sklearn_iclr26.inference.TwoTypeResamplingModel.from_counts` fits
# the paper's closed-form model (easy and hard problems, a verifier of
# soundness ``s``) from per-problem counts. The paper's model assumes every
# correct sample is accepted, so the problems with a rejected correct sample
# are dropped first, as the paper does. The pooled soundness estimate is
# consistent; the notebook's product of means is what the paper's calibrated
# parameters use, and the optimal ``k`` can move with it.
from sklearn_iclr26.inference import TwoTypeResamplingModel

complete = ~(correct & ~accepted).any(axis=1)
counts = (
    np.full(complete.sum(), n_samples),
    accepted[complete].sum(axis=1),
    (accepted & correct)[complete].sum(axis=1),
)
print(f"{complete.sum()} of {n_problems} problems have no false negative")
for estimate in ("pooled", "notebook"):
    model = TwoTypeResamplingModel.from_counts(
        *counts, soundness_estimate=estimate, fp_penalty=1.0
    )
    print(
        f"{estimate:9s}: soundness {model.soundness:.3f}, "
        f"k* = {model.k_opt_}, expected reward {model.max_reward_:.3f}"
    )
