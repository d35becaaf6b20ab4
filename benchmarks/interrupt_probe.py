"""Classify interrupted fits of every public estimator: ok / new / mixed / lost.

A real SIGINT at the first call into the package, at 1/4, 1/2 and 3/4 of a
clean fit's calls and at the return of ``fit`` (the probe of
``tests/test_common_contracts.py``), for a first fit and a refit. Verdicts:
``ok`` (KeyboardInterrupt and the previous state), ``new`` (KeyboardInterrupt
but the complete new fit), ``changed`` (a refit's outputs changed), ``mixed``
(a half-fitted estimator), ``lost`` (no exception). Measure any checkout with
``PYTHONPATH=<checkout> python benchmarks/interrupt_probe.py out.json`` (the
probe code is read from this checkout's test file; the older policies, the
``fit_or_restore`` wrapper and ``conformal/_transaction.py``, are left out of
the call count as ``utils/_atomic.py`` is). ``ONLY=Name1,Name2`` restricts it.
"""

import importlib.util
import json
import os
import pickle
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

src = (Path(__file__).parents[1] / "tests" / "test_common_contracts.py").read_text()
src = src.replace(
    """        if not filename.startswith(_PACKAGE) or filename == _POLICY:
            return None""",
    """        if not filename.startswith(_PACKAGE) or filename == _POLICY:
            return None
        if filename.endswith(os.path.join("utils", "_torch.py")) and (
            frame.f_code.co_name in ("wrapper", "user_interrupts")
        ):
            return None
        if filename.endswith("_transaction.py"):
            return None""",
)
path = os.path.join(tempfile.mkdtemp(), "_contracts.py")
Path(path).write_text(src)
spec = importlib.util.spec_from_file_location("contracts", path)
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
from sklearn.base import clone

warnings.simplefilter("ignore")


def same(a, b):
    if a.keys() != b.keys():
        return False
    return all(np.array_equal(np.asarray(a[k]), np.asarray(b[k])) for k in a)


def outs(est, X):
    try:
        return m._outputs(est, X)
    except Exception as e:  # noqa: BLE001 (a half-fitted model may fail anyhow)
        return {"error": type(e).__name__}


results = {}
for name in [
    n
    for n in m.NAMES
    if not os.environ.get("ONLY") or n in os.environ["ONLY"].split(",")
]:
    est = clone(m._FIRST[name]).set_params(**m._INTERRUPT_PARAMS.get(name, {}))
    if "random_state" in est.get_params():
        est.set_params(random_state=0)
    X, y = m._data(est)
    X_b, y_b = m._refit_data(est)
    counter = m._SigintAtCall()
    fitted = counter.run(clone(est).fit, X, y)
    n = counter.calls
    points = [
        *sorted({1, *[max(1, round(n * f)) for f in (0.25, 0.5, 0.75)]}),
        m._AT_RETURN,
    ]
    verdicts = []
    for at in points:
        # fresh
        fresh = clone(est)
        keys0 = set(vars(fresh))
        t = m._SigintAtCall(at)
        try:
            t.run(fresh.fit, X, y)
            raised = False
        except KeyboardInterrupt:
            raised = True
        if not raised:
            v = "lost"
        elif set(vars(fresh)) == keys0:
            v = "ok"
        else:
            v = (
                "new"
                if same(outs(fresh, X), outs(fitted, X))
                and set(vars(fresh)) == set(vars(fitted))
                else "mixed"
            )
        verdicts.append(("fresh", str(at), v))
        # refit
        f2 = pickle.loads(pickle.dumps(fitted))
        before = outs(f2, X)
        keys = set(vars(f2))
        t = m._SigintAtCall(at)
        try:
            t.run(f2.fit, X_b, y_b)
            raised = False
        except KeyboardInterrupt:
            raised = True
        after = outs(f2, X)
        if not raised:
            v = "lost"
        elif set(vars(f2)) == keys and same(after, before):
            v = "ok"
        else:
            v = "changed"
        verdicts.append(("refit", str(at), v))
    worst = (
        "changed"
        if any(v[2] == "changed" for v in verdicts)
        and not any(v[2] == "mixed" for v in verdicts)
        else "mixed"
        if any(v[2] == "mixed" for v in verdicts)
        else "lost"
        if any(v[2] == "lost" for v in verdicts)
        else "new"
        if any(v[2] == "new" for v in verdicts)
        else "ok"
    )
    results[name] = {"worst": worst, "points": verdicts}
    print(
        name,
        worst,
        " ".join(f"{k[0]}@{k[1]}:{k[2]}" for k in verdicts if k[2] != "ok"),
        flush=True,
    )
Path(sys.argv[1]).write_text(json.dumps(results, indent=1))
from collections import Counter

print(Counter(r["worst"] for r in results.values()))
