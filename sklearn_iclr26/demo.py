"""Run every method of the package on real data and print a results table.

Usage: ``python -m sklearn_iclr26.demo`` (or ``make demo``). Each subpackage
contributes rows from its private ``_demo*.py`` modules (a ``run_demo()``
returning dicts with ``method`` (the paper's short name), ``estimator``,
``dataset``, ``metric``, ``value``, ``baseline`` and ``baseline_value``); every
one of the 19 methods has at least one row, next to its baseline.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import pkgutil
import sys
import time
from importlib import import_module
from pathlib import Path

__all__ = ["collect_demos", "main"]


def collect_demos():
    """Import every ``sklearn_iclr26.<subpackage>._demo*`` module, sorted by name."""
    root = Path(__file__).parent
    modules = []
    for package in sorted(pkgutil.iter_modules([str(root)]), key=lambda m: m.name):
        if not package.ispkg:
            continue
        for module in sorted(
            pkgutil.iter_modules([str(root / package.name)]), key=lambda m: m.name
        ):
            if module.name.startswith("_demo"):
                modules.append(
                    import_module(f"sklearn_iclr26.{package.name}.{module.name}")
                )
    return modules


def _format(value):
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def main(argv=None):
    """Run the demos and print one table."""
    columns = [
        "method",
        "estimator",
        "dataset",
        "metric",
        "value",
        "baseline",
        "baseline_value",
    ]
    rows = []
    total = time.perf_counter()
    for module in collect_demos():
        start = time.perf_counter()
        print(f"running {module.__name__} ...", file=sys.stderr, flush=True)
        rows.extend(module.run_demo())
        print(
            f"  done in {time.perf_counter() - start:.1f} s",
            file=sys.stderr,
            flush=True,
        )
    print(
        f"{len(rows)} rows, {len({row['method'] for row in rows})} methods in "
        f"{time.perf_counter() - total:.1f} s",
        file=sys.stderr,
        flush=True,
    )
    table = [[_format(row.get(c, "")) for c in columns] for row in rows]
    widths = [
        max(len(c), *(len(r[i]) for r in table)) if table else len(c)
        for i, c in enumerate(columns)
    ]
    print("  ".join(c.ljust(w) for c, w in zip(columns, widths)))
    print("  ".join("-" * w for w in widths))
    for row in table:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths)))
    return rows


if __name__ == "__main__":
    main()
