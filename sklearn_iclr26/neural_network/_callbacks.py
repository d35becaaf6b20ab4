"""skorch callbacks of the torch estimators (imported lazily, inside ``fit``).

Module level so that fitted nets pickle.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import time

from skorch.callbacks import Callback

from sklearn_iclr26.utils._verbose import log_progress

__all__ = ["EpochProgress"]


class EpochProgress(Callback):
    """Plain-text progress, one line per epoch, through ``log_progress``.

    Replaces skorch's ``PrintLog`` table, which colours its best values with
    raw ANSI escape codes (unreadable in log files). The line is printed as
    ``[OwnerClass] <prefix>epoch i/n: train_loss x (t s)`` when the owner's
    ``verbose`` is at least ``level``; every ``every``-th epoch and the last
    one are printed. The reference to the owner is dropped when training
    ends, so the fitted net does not keep the owner alive.

    Parameters
    ----------
    owner : estimator
        The estimator whose ``verbose`` and class name are used.
    total : int
        Number of epochs, for the ``i/n`` display.
    prefix : str, default=""
        Text before ``epoch`` (e.g. ``"sub-problem 1/3, "``).
    every : int, default=1
        Print every ``every``-th epoch.
    level : int, default=1
        Minimum ``verbose`` of the owner.
    """

    def __init__(self, owner, total, *, prefix="", every=1, level=1):
        self.owner = owner
        self.total = total
        self.prefix = prefix
        self.every = every
        self.level = level

    def on_train_begin(self, net, **kwargs):
        self.start_ = time.perf_counter()

    def on_epoch_end(self, net, **kwargs):
        if self.owner is None:
            return
        epoch = len(net.history)
        if epoch % max(int(self.every), 1) and epoch != self.total:
            return
        loss = net.history[-1].get("train_loss")
        loss_text = "" if loss is None else f": train_loss {float(loss):.5g}"
        elapsed = time.perf_counter() - getattr(self, "start_", time.perf_counter())
        log_progress(
            self.owner,
            f"{self.prefix}epoch {epoch}/{self.total}{loss_text} ({elapsed:.2f} s)",
            level=self.level,
        )

    def on_train_end(self, net, **kwargs):
        self.owner = None
