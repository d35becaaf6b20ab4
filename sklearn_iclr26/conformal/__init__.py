"""Conformal prediction: multivariate conformal regions for multi-output regression."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.conformal._cvqr import CVQRRegressor

__all__ = ["CVQRRegressor"]
