"""
==========================================================
Compressing a label column that survives model mismatch
==========================================================

A fitted classifier's ``predict_proba`` is a probability model for a label
column: arithmetic coding with it stores the labels in about
``-log2 p(label)`` bits each. But the decoder must recompute *exactly* the
same floats. Here the decoder runs the same model in float32, a mismatch of
about 1e-7, and plain arithmetic coding breaks, while PMATIC
(:class:`~sklearn_iclr26.compression.PMATICEncoder`) decodes for any
mismatch up to its tolerance ``delta``, at a price in bits that grows with
``delta``. We plot the size against ``delta`` and the decode success rate
against simulated logit noise. Set ``SKLEARN_ICLR26_QUICK=1`` for a faster
run.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import os

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.compression import (
    ArithmeticDecoder,
    PMATICDecoder,
    compress,
    compress_column,
    decompress,
    decompress_column,
    expected_overhead_bits,
)

quick = os.environ.get("SKLEARN_ICLR26_QUICK") == "1"
n_draws = 4 if quick else 10

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(
    X, y, test_size=0.5, random_state=0, stratify=y
)
model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=500))
model.fit(X_train, y_train)


# %%
# A real mismatch: the decoder's model in float32
# -----------------------------------------------
def bits_per_label(payload, method="pmatic"):
    """Coded bits per label, without the header and chunk table."""
    decoder = (PMATICDecoder if method == "pmatic" else ArithmeticDecoder)(payload)
    return 8 * (len(payload) - decoder.header_bytes_) / len(s)


P = model.predict_proba(X_test)
s = np.searchsorted(model.classes_, y_test)
Q32 = P.astype(np.float32).astype(np.float64)
Q32 /= Q32.sum(axis=1, keepdims=True)
ideal = -np.log2(P[np.arange(len(s)), s]).sum()
print(f"ideal: {ideal / len(s):.3f} bits/label ({len(s)} labels)")
for method, delta in [("plain", None), ("pmatic", 1e-5), ("pmatic", 1e-3)]:
    payload = compress(s, P, method=method, delta=delta or 1e-3, chunk_size=100)
    decoded, ok = decompress(payload, Q32, return_chunk_status=True)
    print(
        f"{method:>6} delta={delta!s:>6}: {bits_per_label(payload, method):.3f} "
        f"bits/label, float32 decoder: {ok.mean():.0%} of chunks decoded"
    )

# %%
# The convenience functions do the same from the estimator itself.
payload = compress_column(model, X_test, y_test, delta=1e-3)
assert (decompress_column(model, X_test, payload) == y_test).all()

# %%
# Size against delta, decode success against noise
# ------------------------------------------------
deltas = np.array([1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 5e-2])
body = []
expected = []
for delta in deltas:
    payload = compress(s, P, delta=delta)
    body.append(bits_per_label(payload))
    expected.append((ideal / len(s)) + expected_overhead_bits(P, delta=delta))
plain_bits = bits_per_label(compress(s, P, method="plain"), "plain")

rng = np.random.default_rng(0)
logits = np.log(P)
delta = 1e-3
noise = np.array([0, 0.5, 1, 2, 4, 10, 40]) * delta
success = {"plain": [], "pmatic": []}
payloads = {
    "plain": compress(s, P, method="plain"),
    "pmatic": compress(s, P, delta=delta),
}
for eps in noise:
    for method, payload in payloads.items():
        wins = 0
        for _ in range(n_draws):
            Q = np.exp(logits + rng.uniform(-eps, eps, size=logits.shape))
            Q /= Q.sum(axis=1, keepdims=True)
            try:
                wins += np.array_equal(decompress(payload, Q), s)
            except ValueError:  # the CRC detected a desync
                pass
        success[method].append(wins / n_draws)

fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(10, 4))
ax0.semilogx(deltas, body, "o-", label="PMATIC (coded bits)")
ax0.semilogx(deltas, expected, "x--", label="ideal + expected_overhead_bits")
ax0.axhline(plain_bits, color="k", ls=":", label="plain arithmetic coding")
ax0.axhline(ideal / len(s), color="grey", ls="-.", label="ideal -log2 p")
ax0.set_xlabel("delta")
ax0.set_ylabel("bits per label")
ax0.legend(fontsize=8)
ax1.semilogx(np.maximum(noise / delta, 0.1), success["plain"], "s-", label="plain")
ax1.semilogx(
    np.maximum(noise / delta, 0.1), success["pmatic"], "o-", label="PMATIC delta=1e-3"
)
ax1.axvline(2, color="grey", ls="--", label="bound: eps = 2 delta")
ax1.set_xlabel("logit noise half-width / delta (0 drawn at 0.1)")
ax1.set_ylabel("decode success rate")
ax1.legend(fontsize=8)
fig.tight_layout()
plt.show()
