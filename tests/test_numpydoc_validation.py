"""numpydoc validation of every public docstring, as scikit-learn does it.

The rules and the filter are scikit-learn's own
(``sklearn/tests/test_docstrings.py``): every public estimator and display
class, each of its public methods and properties, and every public function
is validated by :func:`numpydoc.validate.validate`; RT02, GL01 and GL02 are
ignored everywhere, ES01, SA01 and EX01 on methods, PR02 and GL08 on
properties.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

from inspect import signature

import pytest

from sklearn_iclr26.utils.discovery import all_displays, all_estimators, all_functions

numpydoc_validation = pytest.importorskip("numpydoc.validate")


def _all_methods():
    for name, Klass in [*all_estimators(), *all_displays()]:
        methods = []
        for attr in dir(Klass):
            if attr.startswith("_"):
                continue
            obj = getattr(Klass, attr)
            if callable(obj) or isinstance(obj, property):
                methods.append(attr)
        for method in [None, *sorted(methods)]:
            yield Klass, method


def filter_errors(errors, method, Klass=None):
    """Drop the errors scikit-learn ignores (its own rules, unchanged).

    Parameters
    ----------
    errors : list of tuple
        ``(code, message)`` pairs from :func:`numpydoc.validate.validate`.
    method : str or None
        Method name, ``"function"`` for a function, ``None`` for a class.
    Klass : type, default=None
        The class of the method.

    Yields
    ------
    code : str
        Error code.
    message : str
        Error message.
    """
    for code, message in errors:
        # RT02: the first Returns line may name the returned object;
        # GL01 / GL02: placement of blank lines around the summary
        if code in ("RT02", "GL01", "GL02"):
            continue
        # PR02 / GL08 on a property: no signature to check
        if (
            code in ("PR02", "GL08")
            and Klass is not None
            and method is not None
            and isinstance(getattr(Klass, method), property)
        ):
            continue
        # ES01, SA01, EX01 are asked of class docstrings only
        if method is not None and code in ("EX01", "SA01", "ES01"):
            continue
        yield code, message


def _repr_errors(res, obj_name, obj=None):
    try:
        obj_signature = str(signature(obj)) if obj is not None else ""
    except (TypeError, ValueError):
        obj_signature = " (no signature: a property?)"
    return "\n\n" + "\n\n".join(
        [
            str(res["file"]),
            obj_name + obj_signature,
            res["docstring"],
            "# Errors",
            "\n".join(f" - {code}: {message}" for code, message in res["errors"]),
        ]
    )


@pytest.mark.parametrize(
    "function_name",
    [f"{func.__module__}.{func.__name__}" for _, func in all_functions()],
)
def test_function_docstring(function_name):
    res = numpydoc_validation.validate(function_name)
    res["errors"] = list(filter_errors(res["errors"], method="function"))
    if res["errors"]:
        raise ValueError(_repr_errors(res, function_name))


@pytest.mark.parametrize(
    "Klass, method",
    list(_all_methods()),
    ids=lambda v: v.__name__ if isinstance(v, type) else str(v),
)
def test_docstring(Klass, method):
    import_path = ".".join(
        [Klass.__module__, Klass.__name__, *([method] if method else [])]
    )
    res = numpydoc_validation.validate(import_path)
    res["errors"] = list(filter_errors(res["errors"], method, Klass=Klass))
    if res["errors"]:
        obj = getattr(Klass, method or "__init__")
        raise ValueError(_repr_errors(res, import_path, obj))
