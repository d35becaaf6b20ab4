"""Frozen model: coverage spread of the regions over many calibrations (issue 40, 8).

With a ``FrozenEstimator``, ``BonferroniBoxRegressor.calibrate`` calibrates
on every row, while the ellipsoid and OT-CP regressors calibrate on
``calibration_size`` of them (default 0.25) and fit the shape (covariance,
transport map, local scale) on the rest. The shape cannot be cross-fitted
into the calibration rows without breaking exchangeability (a row's score
would depend on a shape fitted with the other calibration rows), so the
split stays; this measures its cost: for ``S`` calibrations of ``n`` rows
(a fixed 2-target model fitted once on separate rows; test rows fresh), the
mean, standard deviation, 5 % quantile and share below 0.85 of the joint
coverage at 0.9, for the box and for the ellipsoid/OT-CP at calibration
fractions 0.25, 0.5 and 0.75.

    python benchmarks/conformal_frozen_spread.py            # S=100, n=400
    python benchmarks/conformal_frozen_spread.py 200 400
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import sys
import warnings

import numpy as np
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LinearRegression

from sklearn_iclr26.conformal import (
    BonferroniBoxRegressor,
    EllipsoidRegressor,
    OTCPRegressor,
)

S = int(sys.argv[1]) if len(sys.argv) > 1 else 100
N = int(sys.argv[2]) if len(sys.argv) > 2 else 400
warnings.simplefilter("ignore")


def sample(n, rng):
    X = rng.normal(size=(n, 4))
    noise = rng.multivariate_normal([0, 0], [[1, 0.6], [0.6, 1]], size=n)
    scale = 0.5 + np.abs(X[:, :1])
    Y = np.c_[X[:, 0] + X[:, 1], X[:, 2] - X[:, 3]] + noise * scale
    return X, Y


rng = np.random.default_rng(0)
X0, Y0 = sample(2000, rng)
model = LinearRegression().fit(X0, Y0)
methods = {
    "box (split, every row)": lambda: BonferroniBoxRegressor(FrozenEstimator(model))
}
for frac in (0.25, 0.5, 0.75):
    methods[f"ellipsoid global, cal {frac}"] = lambda f=frac: EllipsoidRegressor(
        FrozenEstimator(model), calibration_size=f
    )
    methods[f"ellipsoid local, cal {frac}"] = lambda f=frac: EllipsoidRegressor(
        FrozenEstimator(model), covariance="local", calibration_size=f
    )
    methods[f"OT-CP global, cal {frac}"] = lambda f=frac: OTCPRegressor(
        FrozenEstimator(model), calibration_size=f
    )
cov = {name: [] for name in methods}
for s in range(S):
    X, Y = sample(N, rng)
    Xt, Yt = sample(2000, rng)
    for name, make in methods.items():
        reg = make().set_params(random_state=s).calibrate(X, Y)
        cov[name].append(reg.contains(Xt, Yt).mean())
print(f"S={S} calibrations of n={N} rows, level 0.9, 2000 test rows each")
print(f"{'method':32s} mean    sd     q05    <0.85")
for name, c in cov.items():
    c = np.asarray(c)
    print(
        f"{name:32s} {c.mean():.4f} {c.std(ddof=1):.4f} "
        f"{np.quantile(c, 0.05):.4f} {(c < 0.85).mean():.3f}"
    )
