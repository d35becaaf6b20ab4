"""Fingerprint every test instance's fitted outputs (a refactor changes no number).

For each instance of every public estimator (the subpackages'
``_test_instances.py``, as ``tests/test_common.py`` builds them) this fits the
instance on the small data of ``tests/test_common_contracts.py`` with
``random_state=0`` and hashes every X-only prediction method's output and every
numeric fitted attribute (sha256 of the array bytes, dtype and shape). Two runs
on two commits are then compared with ``--compare``::

    PYTHONPATH=. python benchmarks/fingerprint_outputs.py --out before.json
    PYTHONPATH=. python benchmarks/fingerprint_outputs.py --out after.json
    python benchmarks/fingerprint_outputs.py --compare before.json after.json

Results are written after each instance, so a killed run resumes.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np


def _digest(value):
    a = np.asarray(value)
    if a.dtype == object:
        return hashlib.sha256(repr(a.tolist()).encode()).hexdigest()
    if hasattr(value, "toarray"):
        a = value.toarray()
    h = hashlib.sha256(np.ascontiguousarray(a).tobytes())
    h.update(f"{a.dtype}{a.shape}".encode())
    return h.hexdigest()


def run(out):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    import test_common_contracts as contracts
    from sklearn.base import clone

    from sklearn_iclr26.utils._test_common import _registries
    from sklearn_iclr26.utils.discovery import all_estimators

    path = Path(out)
    done = json.loads(path.read_text()) if path.exists() else {}
    params, _ = _registries()
    for name, cls in all_estimators():
        for i, kwargs in enumerate(params.get(name, [{}])):
            key = f"{name}[{i}]"
            if key in done:
                continue
            estimator = clone(cls(**kwargs))
            X, y = contracts._data(estimator)
            try:
                fitted = contracts._fit(estimator, X, y)
                outputs = contracts._outputs(fitted, X)
                done[key] = {m: _digest(v) for m, v in sorted(outputs.items())}
            except Exception as exc:  # noqa: BLE001 (recorded: the comparison shows it)
                done[key] = {"error": f"{type(exc).__name__}: {exc}"[:200]}
            path.write_text(json.dumps(done, indent=1, sort_keys=True))
            print(key, len(done[key]), flush=True)


def compare(a, b):
    a, b = json.loads(Path(a).read_text()), json.loads(Path(b).read_text())
    same = differ = 0
    for key in sorted(set(a) | set(b)):
        if a.get(key) == b.get(key):
            same += 1
            continue
        differ += 1
        left, right = a.get(key, {}), b.get(key, {})
        changed = sorted(
            m for m in set(left) | set(right) if left.get(m) != right.get(m)
        )
        print(f"DIFFERS {key}: {changed}")
    print(f"{same} instances identical, {differ} differ")
    return differ


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="fingerprints.json")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    if args.compare:
        sys.exit(1 if compare(*args.compare) else 0)
    run(args.out)
