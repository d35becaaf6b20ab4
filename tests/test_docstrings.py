"""Every public estimator and function documents itself with a runnable example."""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import doctest
import importlib
import inspect
import pkgutil

import numpy as np
import pytest

import sklearn_iclr26
from sklearn_iclr26.utils.discovery import all_displays, all_estimators, all_functions

PUBLIC = [*all_estimators(), *all_functions()]


@pytest.mark.parametrize("name, obj", PUBLIC, ids=[name for name, _ in PUBLIC])
def test_public_object_has_numpydoc_sections_and_an_example(name, obj):
    doc = inspect.getdoc(obj) or ""
    assert "Examples\n--------" in doc, f"{name} has no Examples section"
    if inspect.isclass(obj):
        assert "Parameters\n----------" in doc or not inspect.signature(
            obj.__init__
        ).parameters.keys() - {"self"}
        assert "Attributes\n----------" in doc, f"{name} documents no attributes"


def _modules():
    names = []
    for info in pkgutil.walk_packages(sklearn_iclr26.__path__, "sklearn_iclr26."):
        if ".tests" in info.name or info.name.endswith("demo"):
            continue
        names.append(info.name)
    return names


@pytest.mark.parametrize("module_name", _modules())
def test_doctests(module_name):
    module = importlib.import_module(module_name)
    with np.printoptions(legacy="1.25"):
        result = doctest.testmod(
            module, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS
        )
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {module_name}"


def test_displays_are_discovered():
    assert all(name.endswith("Display") for name, _ in all_displays())


def test_api_reference_lists_every_public_object():
    """doc/api.rst is checked against the package, so it cannot fall behind."""
    from pathlib import Path

    api = Path(__file__).resolve().parent.parent / "doc" / "api.rst"
    listed = {
        line.strip()
        for line in api.read_text().splitlines()
        if line.startswith("   ") and not line.strip().startswith(":")
    }
    public = {name for name, _ in [*PUBLIC, *all_displays()]}
    missing = sorted(public - listed)
    assert not missing, f"doc/api.rst does not list {missing}"


def test_api_reference_names_resolve_in_their_section_module():
    """Every name of an autosummary in doc/api.rst is an attribute of the
    module of its section's ``currentmodule`` (sphinx would not find it)."""
    import importlib
    from pathlib import Path

    api = Path(__file__).resolve().parent.parent / "doc" / "api.rst"
    module, unresolved = None, []
    for line in api.read_text().splitlines():
        if line.startswith(".. currentmodule::"):
            module = importlib.import_module(line.split("::")[1].strip())
        elif line.startswith("   ") and line.strip() and not line.strip()[0] in ":.":
            name = line.strip()
            if module is None or not hasattr(module, name):
                unresolved.append((getattr(module, "__name__", None), name))
    assert not unresolved, f"doc/api.rst names outside their module: {unresolved}"


def _package_trees():
    import ast
    from pathlib import Path

    root = Path(sklearn_iclr26.__file__).parent
    for path in sorted(root.rglob("*.py")):
        yield path.relative_to(root).as_posix(), ast.parse(path.read_text())


def test_docstrings_are_literal_with_placeholders_not_spliced():
    """One docstring mechanism (``utils/_docstrings.py``): a docstring is a
    literal whose shared texts are ``%(name)s`` lines; no class body builds
    its ``__doc__`` (an f-string, ``str.format`` or ``+``), so doctests carry
    no ``{{`` escapes."""
    import ast

    spliced, escaped = [], []
    for rel, tree in _package_trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                for stmt in node.body:
                    targets = getattr(stmt, "targets", [getattr(stmt, "target", None)])
                    if any(getattr(t, "id", None) == "__doc__" for t in targets):
                        spliced.append(f"{rel}:{stmt.lineno} {node.name}")
            if isinstance(
                node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
            ):
                doc = ast.get_docstring(node, clean=False)
                if doc and "{{" in doc:
                    escaped.append(f"{rel} {getattr(node, 'name', '<module>')}")
    assert not spliced, f"__doc__ built in a class body: {spliced}"
    assert not escaped, f"'{{{{' escapes in docstrings: {escaped}"
