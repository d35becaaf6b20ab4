"""Static checks of the package's structure.

* One torch training engine: no module outside ``utils/_torch.py`` (and the
  skorch nets it trains, ``ENGINE``) calls ``.backward(`` or an optimizer's
  ``.step(``. Gradients of non-parameter quantities use
  ``torch.autograd.grad``, which is allowed anywhere.
* Layering: a family imports only the foundation (``utils``, ``datasets``,
  ``metrics``, the torch base among them) and the public ``neural_network``
  estimators, and never another family's private names.
* scikit-learn coupling: only ``utils/_sklearn_compat.py`` imports a private
  scikit-learn name (a module or a name starting with ``_``), in the package
  and in its tests, so a scikit-learn minor that moves one is a one-file
  change.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import ast
import re
from pathlib import Path

import pytest

import sklearn_iclr26

ROOT = Path(sklearn_iclr26.__file__).parent
ENGINE = {
    "utils/_torch.py",
    "utils/_skorch_net.py",
}
# {relative path: reason}: the one allow-list of modules that may call
# .backward( or .step( outside the engine
ALLOWED_TRAINING_CALLS = {
    "conformal/_cvqr_modules.py": (
        "the L-BFGS conjugate solve of CVQR's solver='lbfgs' minimises over the "
        "rank u of each row (not over parameters): torch.optim.LBFGS needs "
        "backward() in its closure"
    ),
}
FOUNDATION = {"utils", "datasets", "metrics"}

MODULES = sorted(p for p in ROOT.rglob("*.py") if "tests" not in p.parts)


def _rel(path):
    return path.relative_to(ROOT).as_posix()


def _family(rel):
    parts = rel.split("/")
    return parts[0] if len(parts) > 1 else None


@pytest.mark.parametrize("path", MODULES, ids=_rel)
def test_no_training_loop_outside_the_engine(path):
    rel = _rel(path)
    if rel in ENGINE or rel in ALLOWED_TRAINING_CALLS:
        return
    source = path.read_text()
    tree = ast.parse(source)
    offending = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("backward", "step")
        ):
            receiver = ast.unparse(node.func.value)
            if node.func.attr == "step" and not re.search(
                r"optim|opt\b|opt_|_opt|scheduler", receiver, re.IGNORECASE
            ):
                continue
            offending.append(f"line {node.lineno}: {ast.unparse(node)}")
    assert not offending, (
        f"{rel} trains outside utils/_torch.py: {offending}. Train through "
        "train_module; use torch.autograd.grad for gradients of non-parameters."
    )


@pytest.mark.parametrize("path", MODULES, ids=_rel)
def test_families_import_only_the_foundation(path):
    rel = _rel(path)
    family = _family(rel)
    tree = ast.parse(path.read_text())
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            modules = [(node.module, [a.name for a in node.names])]
        elif isinstance(node, ast.Import):
            modules = [(a.name, []) for a in node.names]
        else:
            continue
        for module, names in modules:
            parts = module.split(".")
            if parts[0] != "sklearn_iclr26" or len(parts) < 2:
                continue
            target = parts[1]
            if target == family or family is None:
                continue
            if family in FOUNDATION and target not in FOUNDATION:
                problems.append(f"foundation imports family {module}")
                continue
            if target in FOUNDATION:
                continue
            problems.append(f"imports another family: {module}")
    assert not problems, f"{rel}: {problems}"


def test_every_public_function_validates_its_parameters():
    from sklearn_iclr26.utils.discovery import all_functions

    missing = [
        f"{func.__module__}.{name}"
        for name, func in all_functions()
        if not hasattr(func, "__wrapped__")
    ]
    assert not missing, f"public functions without @validate_params: {missing}"


def test_every_n_jobs_parameter_uses_the_one_constraint():
    # One n_jobs policy (None, >= 1 or <= -1; 0 rejected): every public
    # estimator's constraint is the shared object, not a hand-written copy.
    import sklearn_iclr26
    from sklearn_iclr26.utils._validation import N_JOBS_CONSTRAINT

    copies = [
        name
        for name in sklearn_iclr26.__all__
        if "n_jobs"
        in (
            constraints := getattr(
                getattr(sklearn_iclr26, name), "_parameter_constraints", {}
            )
        )
        and constraints["n_jobs"] is not N_JOBS_CONSTRAINT
    ]
    assert not copies, copies


def test_every_family_has_a_scorers_module():
    # every family ships scorers for what its estimators are for (a
    # ``_scorers.py`` with ``SCORERS``; an empty one says in its docstring why
    # the default scoring is the right target)
    import importlib
    import pkgutil

    for info in pkgutil.iter_modules([str(ROOT)]):
        if not info.ispkg or info.name in FOUNDATION:
            continue
        module = importlib.import_module(f"sklearn_iclr26.{info.name}._scorers")
        assert isinstance(module.SCORERS, dict), info.name
        if not module.SCORERS:
            assert len((module.__doc__ or "").split()) > 40, info.name


SKLEARN_COMPAT = "utils/_sklearn_compat.py"
TESTS = Path(__file__).parent
TEST_MODULES = sorted(TESTS.glob("*.py"))


def _private_sklearn_imports(tree):
    """Private scikit-learn names imported or reached in a module's AST."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            parts = node.module.split(".")
            if parts[0] != "sklearn":
                continue
            private_module = any(p.startswith("_") for p in parts)
            found += [
                f"line {node.lineno}: {node.module}.{a.name}"
                for a in node.names
                if private_module or a.name.startswith("_")
            ]
        elif isinstance(node, ast.Import):
            found += [
                f"line {node.lineno}: import {a.name}"
                for a in node.names
                if a.name.split(".")[0] == "sklearn"
                and any(p.startswith("_") for p in a.name.split("."))
            ]
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            # sklearn.utils._foo reached by attribute from `import sklearn`
            chain, value = [node.attr], node.value
            while isinstance(value, ast.Attribute):
                chain.append(value.attr)
                value = value.value
            if (
                isinstance(value, ast.Name)
                and value.id == "sklearn"
                and not node.attr.startswith("__")
            ):
                found.append(f"line {node.lineno}: sklearn.{'.'.join(chain[::-1])}")
    return found


@pytest.mark.parametrize(
    "path",
    MODULES + TEST_MODULES,
    ids=lambda p: _rel(p) if ROOT in p.parents else f"tests/{p.name}",
)
def test_private_sklearn_names_only_through_the_compat_module(path):
    if ROOT in path.parents and _rel(path) == SKLEARN_COMPAT:
        return
    found = _private_sklearn_imports(ast.parse(path.read_text()))
    assert not found, (
        f"{path.name} imports private scikit-learn names {found}: import them "
        f"from sklearn_iclr26.{SKLEARN_COMPAT[:-3].replace('/', '.')}, the one "
        "module that may (add them there if missing)."
    )


def test_the_private_sklearn_name_check_can_fail():
    # the checker sees every form a private import takes
    source = (
        "from sklearn.utils._param_validation import Interval\n"
        "from sklearn.utils.validation import _num_samples, check_array\n"
        "import sklearn.utils._indexing\n"
        "import sklearn\n"
        "def f():\n"
        "    from sklearn.base import _fit_context\n"
        "    return sklearn.utils._safe_indexing\n"
        "from sklearn.utils.validation import check_is_fitted\n"
    )
    found = _private_sklearn_imports(ast.parse(source))
    assert len(found) == 5, found
    assert not any("check_array" in f or "check_is_fitted" in f for f in found)
    compat = ast.parse((ROOT / SKLEARN_COMPAT).read_text())
    assert _private_sklearn_imports(compat), "the compat module imports nothing?"
