"""Timing of the spurious-feature estimators against their anchors.

* ``BackdoorAdjustedRegressor`` (n = 2 and 4) against the same network without
  the backdoor branch (``n_confounders=0``): fit time (expected about
  ``(1 + n)x``) and factual predict time (expected about ``1x``).
* ``TwoKeyAttentionRegressor.fit`` (4,000 steps) against
  ``LinearRegression`` on ``[x, z]``, with the weight share each puts on ``z``
  (the gate's ``1 - p`` and OLS's ``sum |coef_z| / sum |coef|``).

Median of 3 repetitions; results appended to
``benchmarks/results/bench_spurious.txt``.

    python benchmarks/bench_spurious.py
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.linear_model import LinearRegression

from sklearn_iclr26.causal import BackdoorAdjustedRegressor, TwoKeyAttentionRegressor
from sklearn_iclr26.datasets import make_background_confounding, make_causal_chain

OUT = Path(__file__).parent / "results" / "bench_spurious.txt"


def _median_time(func, repeats=3):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main():
    lines = []
    X, y = make_background_confounding(2000, random_state=0)
    groups = {"context": [5, 6, 7, 8, 9]}
    base = BackdoorAdjustedRegressor(
        groups, n_confounders=0, adjusted_weight=0, max_iter=50, random_state=0
    )
    t_fit0 = _median_time(lambda: base.fit(X, y))
    t_pred0 = _median_time(lambda: base.predict(X))
    for n in (2, 4):
        model = BackdoorAdjustedRegressor(
            groups, n_confounders=n, max_iter=50, random_state=0
        )
        t_fit = _median_time(lambda m=model: m.fit(X, y))
        t_pred = _median_time(lambda m=model: m.predict(X))
        t_adj = _median_time(lambda m=model: m.predict(X, mode="adjusted"))
        lines.append(
            f"prism n={n}: fit {t_fit:.2f}s vs {t_fit0:.2f}s (ratio "
            f"{t_fit / t_fit0:.2f}, expected ~{1 + n}); factual predict ratio "
            f"{t_pred / t_pred0:.2f}, adjusted predict ratio {t_adj / t_pred0:.2f}"
        )
    d = 5
    Xc, yc = make_causal_chain(20000, d, random_state=0)
    two_key = TwoKeyAttentionRegressor((list(range(d)), list(range(d, 2 * d))))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        t_tk = _median_time(lambda: two_key.set_params(random_state=0).fit(Xc, yc))
    ols = LinearRegression()
    t_ols = _median_time(lambda: ols.fit(Xc, yc))
    share_tk = float(np.mean(two_key.attention(Xc)[:, 1]))
    share_ols = float(np.abs(ols.coef_[d:]).sum() / np.abs(ols.coef_).sum())
    lines.append(
        f"two-key fit {t_tk:.2f}s vs LinearRegression {t_ols:.4f}s (ratio "
        f"{t_tk / t_ols:.0f}); weight share on z: two-key {share_tk:.3f}, "
        f"OLS {share_ols:.3f}"
    )
    text = "\n".join(lines)
    print(text)
    OUT.parent.mkdir(exist_ok=True)
    with OUT.open("a") as f:
        f.write(time.strftime("%Y-%m-%d %H:%M\n") + text + "\n\n")


if __name__ == "__main__":
    main()
