"""Test instances of the compression family (see utils/_test_common).

The family has no scikit-learn estimators: its coders are streaming objects
and its entry points functions, tested in ``tests/test_compression.py``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

TEST_PARAMS = {}

EXPECTED_FAILED_CHECKS = {}
