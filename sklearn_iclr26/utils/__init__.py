"""Shared machinery: the torch/skorch training helper, validation, discovery."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.utils._blockwise import block_function
from sklearn_iclr26.utils.discovery import all_displays, all_estimators, all_functions

__all__ = ["all_displays", "all_estimators", "all_functions", "block_function"]
