"""Label-noise-robust training: loss correction for noisy labels."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.label_noise._class_conditional import ClassConditionalNoiseCorrector
from sklearn_iclr26.label_noise._display import LabelIssuesDisplay
from sklearn_iclr26.label_noise._instance import InstanceNoiseCorrector
from sklearn_iclr26.label_noise._label_issues import find_label_issues

__all__ = [
    "ClassConditionalNoiseCorrector",
    "InstanceNoiseCorrector",
    "LabelIssuesDisplay",
    "find_label_issues",
]
