"""Frozen model: mean (log V)/d and coverage of the ellipsoid and OT-CP
for several calibration fractions of the rows given to fit.

A RidgeCV pipeline is fitted on 40 % of each set and frozen; the regions are
fitted on the next 40 % (``calibration_size`` of them calibrate, the others
estimate the shape) and measured on the last 20 %. The table of doc/cvqr.rst
("A model fitted elsewhere"). Usage:
``python benchmarks/conformal_frozen_split.py 20 enb,jura,slump,andro``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import sys
import warnings

import numpy as np
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import RidgeCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_iclr26.conformal import EllipsoidRegressor, OTCPRegressor
from sklearn_iclr26.datasets import load_multioutput

FRACS = [0.25, 0.5, 0.75]
REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 20
names = sys.argv[2].split(",") if len(sys.argv) > 2 else ["enb", "jura", "slump"]
warnings.simplefilter("ignore")
for name in names:
    X, Y = load_multioutput(name, return_X_y=True)
    n, d = Y.shape
    res = {}
    for rep in range(REPS):
        p = np.random.RandomState(rep).permutation(n)
        cut1, cut2 = int(0.4 * n), int(0.8 * n)
        tr, pool, te = p[:cut1], p[cut1:cut2], p[cut2:]
        m = make_pipeline(StandardScaler(), RidgeCV()).fit(X[tr], Y[tr])
        for kind, cls in (("ellipsoid", EllipsoidRegressor), ("otcp", OTCPRegressor)):
            for f in FRACS:
                est = cls(FrozenEstimator(m), calibration_size=f, random_state=rep)
                est.fit(X[pool], Y[pool])
                lv = est.region_log_volume(X[te]) / d
                cov = est.contains(X[te], Y[te]).mean()
                res.setdefault((kind, f), []).append((np.mean(lv), cov))
    print(f"{name}: n={n}, d={d}, pool={len(pool)}, test={len(te)}, reps={REPS}")
    for (kind, f), v in res.items():
        v = np.array(v)
        fin = np.isfinite(v[:, 0])
        mean = np.mean(v[fin, 0])
        sem = v[fin, 0].std() / np.sqrt(fin.sum())
        print(
            f"  {kind:9s} cal={f:.2f}  logvol/d={mean:8.4f} (+-{sem:.4f}, "
            f"inf in {np.sum(~fin)})  coverage={v[:, 1].mean():.3f}"
        )
    sys.stdout.flush()
