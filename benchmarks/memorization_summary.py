"""Paired differences with 95 % confidence intervals from the memorization reproduction.

Reads ``benchmarks/results/memorization_reproduction.csv`` (written by
``memorization_reproduction.py``) and, for the key comparisons, pairs the two
methods within each setting (dataset x noise kind x rate x seed) and reports
the mean difference, a two-sided 95 % t-interval over the paired settings,
the number of settings where the first method wins, and a two-sided sign-test
p-value. The settings share datasets, so the interval treats settings as
exchangeable replications; read it as a summary of these runs, not of the
population of tabular sets.

    python benchmarks/memorization_summary.py [--csv PATH]

Writes ``benchmarks/results/memorization_summary.txt``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import csv
from collections import defaultdict
from pathlib import Path

import numpy as np
from scipy import stats

RESULTS = Path(__file__).parent / "results"

DETECT_PAIRS = [
    ("CSG", "cleanlab OOF"),
    ("CSG", "SGAL"),
    ("CSG", "CSL"),
    ("CSG", "AUM"),
    ("CSG", "final-epoch loss"),
    ("CSG", "NDX mislabel_scores_"),
    ("CSL", "cleanlab OOF"),
]
RLP_PAIRS = [
    ("lambda=1", "lambda=0", "rla_layer0"),
    ("lambda=1", "lambda=0", "rla_layer1"),
    ("lambda=1", "lambda=0", "fresh_probe_rla"),
    ("lambda=1", "lambda=0", "test_acc_clean"),
    ("lambda=1", "lambda=0", "gap"),
    ("lambda=0.1", "lambda=0", "rla_layer1"),
    ("dropout=0.3", "lambda=0", "rla_layer1"),
    ("weight_decay=1e-2", "lambda=0", "rla_layer1"),
    ("weight_decay=1e-2", "lambda=0", "fresh_probe_rla"),
]


def _load(path):
    table = defaultdict(dict)  # (part, metric, setting) -> {method: value}
    with open(path) as f:
        for row in csv.DictReader(f):
            setting = (row["dataset"], row["kind"], row["rate"], row["seed"])
            table[row["part"], row["metric"], setting][row["method"]] = float(
                row["value"]
            )
    return table


def paired(table, part, metric, a, b):
    """Paired differences ``a - b`` over the settings holding both."""
    diffs = [
        methods[a] - methods[b]
        for (p, m, _), methods in sorted(table.items())
        if p == part and m == metric and a in methods and b in methods
    ]
    return np.asarray(diffs)


def summarize(diffs):
    n = len(diffs)
    mean = diffs.mean()
    half = stats.t.ppf(0.975, n - 1) * diffs.std(ddof=1) / np.sqrt(n)
    wins = int(np.sum(diffs > 0))
    ties = int(np.sum(diffs == 0))
    p_sign = stats.binomtest(wins, n - ties).pvalue if n - ties else 1.0
    return n, mean, mean - half, mean + half, wins, p_sign


def _fmt(label, diffs):
    n, mean, lo, hi, wins, p = summarize(diffs)
    return (
        f"| {label} | {n} | {mean:+.3f} | [{lo:+.3f}, {hi:+.3f}] | {wins}/{n} "
        f"| {p:.2g} |"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", default=RESULTS / "memorization_reproduction.csv")
    args = parser.parse_args()
    table = _load(args.csv)
    head = "| comparison | n | mean diff | 95 % CI | first > second | sign-test p |"
    rule = "|---|---|---|---|---|---|"
    lines = ["Mislabel-detection AUROC, paired over settings", head, rule]
    for a, b in DETECT_PAIRS:
        lines.append(_fmt(f"{a} - {b}", paired(table, "detect", "auroc", a, b)))
    lines += ["", "RLP heads, paired over settings (dataset x noise rate)", head, rule]
    for a, b, metric in RLP_PAIRS:
        lines.append(_fmt(f"{metric}: {a} - {b}", paired(table, "rlp", metric, a, b)))

    ratio = np.asarray(
        [
            methods["CSG"] / methods["cleanlab OOF"]
            for (p, m, _), methods in sorted(table.items())
            if p == "detect" and m == "seconds" and "cleanlab OOF" in methods
        ]
    )
    plain = np.asarray(
        [
            methods["CSG"] / methods["plain run"]
            for (p, m, _), methods in sorted(table.items())
            if p == "detect" and m == "seconds"
        ]
    )
    stop = np.asarray(
        [
            methods["CSG"]
            for (p, m, _), methods in sorted(table.items())
            if p == "detect" and m == "stop_epoch"
        ]
    )
    lines += [
        "",
        "Wall-clock in the reproduction (sequential, shared machine: indicative)",
        (
            f"CSG (stopped) / cleanlab 5-fold seconds: median {np.median(ratio):.2f}x,"
            f" geometric mean {np.exp(np.log(ratio).mean()):.2f}x"
            f" over {len(ratio)} settings"
        ),
        f"CSG (stopped) / plain 100-epoch run seconds: median {np.median(plain):.2f}x",
        (
            f"CSG stop epoch (of 100): median {np.median(stop):.0f}, "
            f"range {stop.min():.0f}-{stop.max():.0f}, "
            f"{int(np.sum(stop >= 100))} of {len(stop)} settings without a peak"
        ),
    ]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    (RESULTS / "memorization_summary.txt").write_text(text)


if __name__ == "__main__":
    main()
