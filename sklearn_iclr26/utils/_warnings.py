"""Warnings that point at the user's line, not inside the package."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import os
import sys
import warnings

__all__ = ["warn_user"]


def _internal_dirs():
    import sklearn

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    dirs = [package, os.path.dirname(sklearn.__file__)]
    for name in ("joblib", "skorch", "lightgbm", "torch"):
        module = sys.modules.get(name)
        if module is not None and getattr(module, "__file__", None):
            dirs.append(os.path.dirname(module.__file__))
    return tuple(d + os.sep for d in dirs)


def warn_user(message, category=UserWarning):
    """Warn with the ``stacklevel`` of the first frame outside the libraries.

    Hand-counted stack levels point inside scikit-learn's ``_fit_context`` or
    our own helpers; this walks up to the first caller that is not part of
    ``sklearn_iclr26``, scikit-learn, joblib, skorch, LightGBM or torch (the
    user's line), as Python 3.12's ``skip_file_prefixes`` does.
    """
    internal = _internal_dirs()
    # stacklevel=1 is this function's own line, 2 its caller's
    frame = sys._getframe(1)
    level = 2
    while frame is not None and frame.f_code.co_filename.startswith(internal):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)
