"""The one progress printer: ``verbose`` output of every estimator."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import sys

__all__ = ["log_progress"]


def log_progress(estimator, message, *, level=1):
    """Print ``[ClassName] message`` when ``estimator.verbose >= level``.

    Plain text (no ANSI colours), flushed at once so that progress shows in
    log files and notebooks while a long fit runs.
    """
    verbose = getattr(estimator, "verbose", 0) or 0
    if verbose >= level:
        print(f"[{type(estimator).__name__}] {message}", file=sys.stdout, flush=True)
