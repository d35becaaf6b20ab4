"""Conformal prediction: multivariate conformal regions for multi-output regression."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.conformal._box_region import BonferroniBoxRegressor
from sklearn_iclr26.conformal._cvqr import CVQRRegressor
from sklearn_iclr26.conformal._ellipsoid_region import EllipsoidRegressor

__all__ = ["BonferroniBoxRegressor", "CVQRRegressor", "EllipsoidRegressor"]
