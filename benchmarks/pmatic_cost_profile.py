"""Where PMATIC's time goes against constriction, per symbol and per decision.

Issue 46 item 2 asks PMATIC's encoder and decoder for at least 0.5x of
constriction's range coder called directly at every alphabet size, "or say
where it stops and why, with a profile". This script is that profile. For the
symbols and models of ``bench_pmatic_anchor.py`` (N(0, 3^2) logits, ``n``
rows) and each alphabet size ``V`` it reports:

* the binary decisions PMATIC codes per symbol: the longform tree has
  ``ell = ceil(log2 V)`` levels and PMATIC codes two binary decisions per
  level (the helper bit, then the data bit), so ``2 ell`` (fewer where the
  alphabet forces a bit; counted exactly from the symbols);
* the time per symbol of constriction's encoder and decoder, and of PMATIC's
  compiled ones (numba), and PMATIC's time per binary decision;
* the same for the package's plain arithmetic coder (``method="plain"``,
  ``backend="numba"``: one decision per level, no helper bit), to separate the
  cost of the synchronisation (the helper bit) from that of coding bits one at
  a time;
* the wrapper's checks (``check_probability_rows``, ``check_symbols`` and the
  CRC of the symbols) alone, against constriction's encoder: what
  ``compress(..., backend="constriction")`` does that constriction called
  directly does not (constriction accepts rows that do not sum to 1, and
  negative probabilities at encode time).

Results: ``benchmarks/results/pmatic_cost_profile.md`` (overwritten; a few
seconds per alphabet). Usage: ``python benchmarks/pmatic_cost_profile.py [--n
100000] [--rounds 5]``.
"""

# Authors: The sklearn-iclr26 developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import time
from pathlib import Path

import numpy as np
from bench_pmatic_anchor import _cx_decode, _cx_encode, _model

from sklearn_iclr26.compression import compress, decompress
from sklearn_iclr26.compression._base import symbols_crc
from sklearn_iclr26.compression._longform import (
    check_probability_rows,
    check_symbols,
    code_length,
)


def decisions_per_symbol(s, V):
    """Binary decisions of the longform walk (levels the alphabet does not force)."""
    ell = code_length(V)
    total = 0
    for j in range(ell):
        prefix = s >> (ell - j)  # the node's prefix at level j
        forced = ((2 * prefix + 1) << (ell - j - 1)) >= V
        total += int(np.count_nonzero(~forced))
    return total / len(s)


def _median_time(fn, rounds):
    fn()
    times = []
    for _ in range(rounds):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return float(np.median(times))


def profile(V, n, rounds):
    s, P = _model(n, V)
    s32 = s.astype(np.int32)
    words = _cx_encode(s32, P)
    pm = compress(s, P, delta=1e-3, backend="numba")
    plain = compress(s, P, method="plain", backend="numba")
    t = {
        "cx_enc": _median_time(lambda: _cx_encode(s32, P), rounds),
        "cx_dec": _median_time(lambda: _cx_decode(words, P), rounds),
        "pm_enc": _median_time(
            lambda: compress(s, P, delta=1e-3, backend="numba"), rounds
        ),
        "pm_dec": _median_time(lambda: decompress(pm, P, backend="numba"), rounds),
        "plain_enc": _median_time(
            lambda: compress(s, P, method="plain", backend="numba"), rounds
        ),
        "plain_dec": _median_time(
            lambda: decompress(plain, P, backend="numba"), rounds
        ),
        "checks": _median_time(
            lambda: (
                check_symbols(s, V, n),
                check_probability_rows(P, None, fast=True),
                symbols_crc(s, 0),
            ),
            rounds,
        ),
    }
    d = decisions_per_symbol(s, V)
    ns = {k: 1e9 * v / n for k, v in t.items()}
    return {
        "V": V,
        "decisions": d,
        **ns,
        "pm_ns_per_decision": ns["pm_enc"] / (2 * d),
        "plain_ns_per_decision": ns["plain_enc"] / d,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--alphabets", default="2,16,256,1024")
    args = parser.parse_args()
    lines = [
        (
            f"PMATIC against constriction, per symbol (ns of process CPU time, median "
            f"of {args.rounds} rounds, n = {args.n}); numba backend"
        ),
        "",
        (
            "| V | PMATIC decisions / symbol | constriction enc / dec "
            "| PMATIC enc / dec | ratio enc / dec "
            "| ns per decision (PMATIC / plain coder) "
            "| plain coder enc / dec | wrapper checks / constriction enc |"
        ),
        "|---|---|---|---|---|---|---|---|",
    ]
    for V in map(int, args.alphabets.split(",")):
        r = profile(V, args.n, args.rounds)
        lines.append(
            f"| {V} | {2 * r['decisions']:.1f} | {r['cx_enc']:.0f} / {r['cx_dec']:.0f} "
            f"| {r['pm_enc']:.0f} / {r['pm_dec']:.0f} "
            f"| {r['cx_enc'] / r['pm_enc']:.2f} / {r['cx_dec'] / r['pm_dec']:.2f} "
            f"| {r['pm_ns_per_decision']:.1f} / {r['plain_ns_per_decision']:.1f} "
            f"| {r['plain_enc']:.0f} / {r['plain_dec']:.0f} "
            f"| {r['checks'] / r['cx_enc']:.2f} |"
        )
        print(lines[-1], flush=True)
    out = Path(__file__).parent / "results" / "pmatic_cost_profile.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
