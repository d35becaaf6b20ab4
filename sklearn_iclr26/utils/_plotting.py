"""The matplotlib steps that open and close every display's ``plot``."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn_iclr26.utils._sklearn_compat import check_matplotlib_support

__all__ = ["finish_plot", "start_plot"]


def start_plot(display, ax):
    """Check that matplotlib is installed; return ``ax`` or a new figure's axes."""
    check_matplotlib_support(f"{type(display).__name__}.plot")
    import matplotlib.pyplot as plt

    return plt.subplots()[1] if ax is None else ax


def finish_plot(display, ax, legend_loc="best"):
    """Draw the legend, set ``display.ax_`` and ``display.figure_``; return it."""
    ax.legend(loc=legend_loc)
    display.ax_ = ax
    display.figure_ = ax.figure
    return display
