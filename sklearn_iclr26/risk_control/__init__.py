"""Risk control of decisions: selective classification with a certified risk."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.risk_control._selective import SelectiveClassifier

__all__ = ["SelectiveClassifier"]
