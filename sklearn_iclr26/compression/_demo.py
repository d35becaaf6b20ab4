"""Demo rows for the compression family (see ``python -m sklearn_iclr26.demo``)."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

__all__ = ["run_demo"]


def run_demo():
    """PMATIC on the digits label column, coded with a logistic regression.

    The labels of 899 test digits are coded with the ``predict_proba`` of a
    logistic regression fitted on the other half, in chunks of 100 labels;
    the decoder runs the same model in float32 (a mismatch of about 1e-7).
    Rows: the share of chunks the float32 decoder recovers, PMATIC
    (``delta=1e-3``) against plain arithmetic coding; the payload size
    against plain arithmetic coding (what the tolerance costs) and against
    ``lzma`` of the labels as bytes (the tool a practitioner would use).
    """
    import lzma

    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from sklearn_iclr26.compression import compress, decompress

    X, y = load_digits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.5, random_state=0, stratify=y
    )
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=500))
    model.fit(X_train, y_train)
    P = model.predict_proba(X_test)
    s = np.searchsorted(model.classes_, y_test)
    Q32 = P.astype(np.float32).astype(np.float64)
    Q32 /= Q32.sum(axis=1, keepdims=True)
    payloads = {
        method: compress(s, P, method=method, delta=1e-3, chunk_size=100)
        for method in ("pmatic", "plain")
    }
    decoded = {}
    for method, payload in payloads.items():
        _, ok = decompress(payload, Q32, return_chunk_status=True)
        decoded[method] = float(np.mean(ok))
    lzma_bytes = len(lzma.compress(s.astype(np.uint8).tobytes(), preset=9))
    row = {
        "method": "PMATIC",
        "estimator": "PMATICEncoder(delta=1e-3) via compress",
        "dataset": f"digits labels ({len(s)}), logistic predict_proba",
    }
    return [
        {
            **row,
            "metric": "chunks decoded by a float32 decoder",
            "value": decoded["pmatic"],
            "baseline": "plain arithmetic coding",
            "baseline_value": decoded["plain"],
        },
        {
            **row,
            "metric": "payload bytes (header and chunk table included)",
            "value": float(len(payloads["pmatic"])),
            "baseline": "plain arithmetic coding",
            "baseline_value": float(len(payloads["plain"])),
        },
        {
            **row,
            "metric": "payload bytes (header and chunk table included)",
            "value": float(len(payloads["pmatic"])),
            "baseline": "lzma (preset 9) of the labels as bytes",
            "baseline_value": float(lzma_bytes),
        },
    ]
