"""sklearn-iclr26: scikit-learn estimators for methods from ICLR 2026 papers.

torch, skorch and LightGBM are imported lazily, inside the estimators that use
them, so importing the package is fast.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.conformal import (
    BonferroniBoxRegressor,
    CVQRRegressor,
    EllipsoidRegressor,
)
from sklearn_iclr26.neural_network import TorchMLPClassifier, TorchMLPRegressor

__version__ = "0.1.0.dev0"

__all__ = [
    "BonferroniBoxRegressor",
    "CVQRRegressor",
    "EllipsoidRegressor",
    "TorchMLPClassifier",
    "TorchMLPRegressor",
    "__version__",
]
