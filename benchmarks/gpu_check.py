"""GPU check of every torch estimator of the package, in one short run.

Every public estimator with a ``device`` parameter (directly, or in a nested
torch child such as ``estimator__device``) is discovered from
``all_estimators()`` and its fast test instance (``<family>/_test_instances.py``).
For each, at batch sizes 256 and 4096 (every ``batch_size`` parameter, nested
ones too, where the estimator has one), it records:

* fit and predict times on the CPU and on the device;
* CPU-vs-device agreement (largest absolute difference of ``predict_proba``
  or ``predict``);
* bit-identical repeats on the device with the same ``random_state``;
* that outputs are float64 numpy arrays and the caller's torch RNG (CPU, and
  CUDA on a CUDA device) is untouched.

Run on a GPU machine::

    python benchmarks/gpu_check.py --device cuda

and, with no GPU, a smoke run of the same code on the CPU::

    python benchmarks/gpu_check.py --device cpu --n-samples 600 --quick

Results go to ``$OUT/gpu_check.json`` (or ``--output``); a recorded H200 run
of the previous version is ``benchmarks/results/gpu_check_h200.json``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import json
import os
import time
import traceback
import warnings

import numpy as np


def _device_params(estimator):
    return sorted(
        k
        for k in estimator.get_params(deep=True)
        if k == "device" or k.endswith("__device")
    )


def _batch_params(estimator):
    return sorted(
        k
        for k in estimator.get_params(deep=True)
        if k == "batch_size" or k.endswith("__batch_size")
    )


def _data(estimator, n_samples, n_features=10, seed=0):
    from sklearn.base import is_classifier
    from sklearn.utils import get_tags

    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n_samples, n_features))
    signal = X[:, 0] + 0.5 * X[:, 1] * X[:, 2]
    if is_classifier(estimator):
        y = (signal + 0.5 * rng.normal(size=n_samples) > 0).astype(int)
        y += (X[:, 3] > 1).astype(int)  # 3 classes
        return X, y
    tags = get_tags(estimator).target_tags
    if tags.multi_output and not tags.single_output:
        noise = rng.normal(size=(n_samples, 2))
        return X, np.c_[signal, X[:, 1] - X[:, 4]] + 0.3 * noise
    return X, signal + 0.3 * rng.normal(size=n_samples)


def _outputs(estimator, X):
    method = "predict_proba" if hasattr(estimator, "predict_proba") else "predict"
    start = time.perf_counter()
    out = getattr(estimator, method)(X)
    return method, out, time.perf_counter() - start


def _fit(template, device, batch, X, y):
    import torch
    from sklearn.base import clone

    est = clone(template)
    est.set_params(**dict.fromkeys(_device_params(est), device))
    params = dict.fromkeys(_batch_params(est), batch)
    est.set_params(**params)
    # a fixed seed everywhere: CPU and device runs must be comparable
    seeds = [
        k
        for k in est.get_params(deep=True)
        if k == "random_state" or k.endswith("__random_state")
    ]
    est.set_params(**dict.fromkeys(seeds, 0))
    cpu_state = torch.random.get_rng_state()
    cuda = device.startswith("cuda") and torch.cuda.is_available()
    cuda_state = torch.cuda.get_rng_state() if cuda else None
    if cuda:
        torch.cuda.synchronize()
    start = time.perf_counter()
    est.fit(X, y)
    if cuda:
        torch.cuda.synchronize()
    fit_s = time.perf_counter() - start
    method, out, predict_s = _outputs(est, X)
    rng_untouched = bool(torch.equal(cpu_state, torch.random.get_rng_state()))
    if cuda:
        rng_untouched &= bool(torch.equal(cuda_state, torch.cuda.get_rng_state()))
    return {
        "estimator": est,
        "fit_s": fit_s,
        "predict_s": predict_s,
        "method": method,
        "out": out,
        "rng_untouched": rng_untouched,
        "batch_params": sorted(params),
    }


def check_estimator_on_device(template, device, batch, n_samples):
    X, y = _data(template, n_samples)
    on_cpu = _fit(template, "cpu", batch, X, y)
    on_dev = _fit(template, device, batch, X, y)
    again = _fit(template, device, batch, X, y)
    out_cpu, out_dev = np.asarray(on_cpu["out"]), np.asarray(on_dev["out"])
    numeric = out_dev.dtype.kind == "f"
    return {
        "batch_params": on_dev["batch_params"],
        "method": on_dev["method"],
        "fit_s_cpu": round(on_cpu["fit_s"], 3),
        "fit_s_device": round(on_dev["fit_s"], 3),
        "speedup": round(on_cpu["fit_s"] / max(on_dev["fit_s"], 1e-9), 2),
        "predict_s_cpu": round(on_cpu["predict_s"], 3),
        "predict_s_device": round(on_dev["predict_s"], 3),
        "cpu_vs_device_max_diff": float(np.max(np.abs(out_cpu - out_dev)))
        if numeric
        else float(np.mean(out_cpu != out_dev)),
        "device_repeat_identical": bool(
            np.array_equal(out_dev, np.asarray(again["out"]))
        ),
        "output_float64_numpy": bool(
            isinstance(on_dev["out"], np.ndarray)
            and (not numeric or out_dev.dtype == np.float64)
        ),
        "rng_untouched": on_dev["rng_untouched"],
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--n-samples", type=int, default=8192)
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[256, 4096])
    parser.add_argument(
        "--quick", action="store_true", help="one batch size, for a smoke run"
    )
    parser.add_argument("--only", default="", help="comma-separated class names")
    parser.add_argument("--output", default=None)
    args = parser.parse_args(argv)

    import sklearn
    import skorch
    import torch

    from sklearn_iclr26.utils._test_common import yield_test_instances

    meta = {
        "torch": torch.__version__,
        "cuda_available": torch.cuda.is_available(),
        "device_name": torch.cuda.get_device_name(0)
        if torch.cuda.is_available()
        else "cpu",
        "sklearn": sklearn.__version__,
        "skorch": skorch.__version__,
        "n_samples": args.n_samples,
    }
    print(json.dumps(meta), flush=True)
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit("CUDA is not available; use --device cpu for a smoke run.")
    only = {name for name in args.only.split(",") if name}
    batches = args.batch_sizes[:1] if args.quick else args.batch_sizes
    results = {"meta": meta, "checks": []}
    for template in yield_test_instances():
        name = type(template).__name__
        if not _device_params(template) or (only and name not in only):
            continue
        for batch in batches:
            row = {
                "estimator": name,
                "params": _device_params(template),
                "batch": batch,
            }
            start = time.perf_counter()
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    row.update(
                        check_estimator_on_device(
                            template, args.device, batch, args.n_samples
                        )
                    )
                row["ok"] = True
            except Exception as exc:  # noqa: BLE001 (report every failure, go on)
                traceback.print_exc()
                row.update(ok=False, error=repr(exc)[:300])
            row["seconds"] = round(time.perf_counter() - start, 2)
            results["checks"].append(row)
            print(json.dumps(row), flush=True)
    out_file = args.output or os.path.join(os.environ.get("OUT", "."), "gpu_check.json")
    with open(out_file, "w") as handle:
        json.dump(results, handle, indent=1)
    failed = [r["estimator"] for r in results["checks"] if not r["ok"]]
    print(f"{len(results['checks'])} checks, failed: {failed}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
