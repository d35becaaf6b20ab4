"""Common contract of every Display of the package (as scikit-learn's
``test_common_curve_display.py``): built from a fitted estimator and from
precomputed values, drawn on a given ``ax``, ``ax_``/``figure_``/``line_`` set,
``name`` overridable at ``plot``, an unfitted estimator raises
``NotFittedError`` before any training.

Each family's display module declares how to build a small case through a
classmethod-free helper in its ``_test_instances.py``: ``DISPLAY_CASES =
{display name: callable() -> (estimator_unfitted, X, y, fit_kwargs)}``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import inspect
import pkgutil
from importlib import import_module
from pathlib import Path

import matplotlib
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

import sklearn_iclr26
from sklearn_iclr26.utils.discovery import all_displays

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def _cases():
    cases = {}
    root = Path(sklearn_iclr26.__file__).parent
    for info in pkgutil.iter_modules([str(root)]):
        if not info.ispkg:
            continue
        name = f"sklearn_iclr26.{info.name}._test_instances"
        try:
            module = import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        cases.update(getattr(module, "DISPLAY_CASES", {}))
    return cases


DISPLAYS = all_displays()
CASES = _cases()


def test_every_display_declares_a_case():
    assert {name for name, _ in DISPLAYS} == set(CASES)


@pytest.mark.parametrize("name, Display", DISPLAYS, ids=[n for n, _ in DISPLAYS])
def test_display_contract(name, Display):
    estimator, X, y, fit_kwargs = CASES[name]()
    # unfitted estimator: NotFittedError, raised before anything is trained
    with pytest.raises(NotFittedError):
        Display.from_estimator(clone(estimator), X, y)
    fitted = clone(estimator).fit(X, y, **fit_kwargs)

    fig, ax = plt.subplots()
    disp = Display.from_estimator(fitted, X, y, ax=ax)
    assert disp.ax_ is ax
    assert disp.figure_ is fig
    assert disp.line_ is not None
    # name overridable at plot, and the legend/label shows it
    disp.plot(ax=ax, name="my model")
    artists = [*ax.get_lines(), *ax.collections]
    labels = [a.get_label() for a in artists]
    legend = ax.get_legend()
    if legend is not None:
        labels += [t.get_text() for t in legend.texts]
    assert any("my model" in label for label in labels), labels
    plt.close("all")

    # a constructor from precomputed values exists besides from_estimator
    others = [
        n
        for n, _ in inspect.getmembers(Display, inspect.ismethod)
        if n.startswith("from_") and n != "from_estimator"
    ]
    assert others, f"{name} has no from_predictions-style constructor"
    # plot signature: keyword-only ax and name
    params = inspect.signature(Display.plot).parameters
    assert params["ax"].kind is inspect.Parameter.KEYWORD_ONLY
    assert params["name"].kind is inspect.Parameter.KEYWORD_ONLY
