"""skorch callbacks of the torch estimators (imported lazily, inside ``fit``).

The progress callback is the engine's (``utils/_skorch_net.py``); it is
re-exported here for the estimators of this family.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.utils._skorch_net import EpochProgress

__all__ = ["EpochProgress"]
