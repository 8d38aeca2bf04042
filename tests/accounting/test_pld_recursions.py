"""The float64 kernels under the PLD engine without scipy.signal (issue 31): the geometric
tail recursion (symgdp.numerics.recursions) against 40-digit mpmath sums, the FFT
convolution of symgdp.pld.pmf against exact integer convolution, and the cold import
path of a composition table (no scipy.signal: it alone cost over a second)."""

from __future__ import annotations

import math
import subprocess
import sys

import mpmath
import numpy as np
import pytest

from symgdp.errors import DomainError
from symgdp.numerics.recursions import geometric_tail
from symgdp.pld import pmf as P

U = 2.0**-52


def _mp_tail(p: np.ndarray, r: mpmath.mpf) -> list[mpmath.mpf]:
    """Reference: G_j = sum_{i >= j} p_i r^(i - j), summed from the right in 40 digits."""
    out, acc = [], mpmath.mpf(0)
    for x in p[::-1]:
        acc = mpmath.mpf(float(x)) + r * acc
        out.append(acc)
    return out[::-1]


@pytest.mark.parametrize("n, disc, seed", [(1, 0.5, 0), (2, 1e-3, 1), (50, 0.1, 2),
                                           (3000, 1e-4, 3), (3000, 2.0, 4)])
def test_geometric_tail_within_the_callers_bound(n: int, disc: float, seed: int) -> None:
    # reference: 40-digit mpmath recursion with the same float64 ratio r; the callers
    # (pld.curves, pld.pmf, training.engine) cover the rounding by 4 (N + 4) u relative
    rng = np.random.default_rng(seed)
    p = rng.random(n) ** 8 * (rng.random(n) < 0.7)  # non-negative, zeros and tiny ones
    r = math.exp(-disc)
    keep = p.copy()
    got = geometric_tail(p, r)
    assert np.array_equal(p, keep)
    assert got.shape == p.shape and np.all(got >= 0)
    # (a context, not mpmath.mp.dps = 40: that stayed set for every later test of the
    # worker)
    with mpmath.workdps(40):
        truth = _mp_tail(p, mpmath.mpf(r))
        for g, t in zip(got.tolist(), truth, strict=True):
            assert abs(mpmath.mpf(g) - t) <= 4 * (n + 4) * U * t


def test_geometric_tail_leaves_input_and_matches_sequential_loop() -> None:
    # reference: the plain Python loop of the same recursion (same operations, same order)
    p = np.array([0.25, 0.0, 1e-300, 3.0, 0.5])
    keep = p.copy()
    r = math.exp(-0.7)
    loop = [0.0] * p.size
    acc = 0.0
    for j in range(p.size - 1, -1, -1):
        acc = float(p[j]) + r * acc
        loop[j] = acc
    got = geometric_tail(p, r)
    assert np.array_equal(p, keep)
    for g, want in zip(got.tolist(), loop, strict=True):
        assert g == pytest.approx(want, rel=4 * U, abs=0.0)


@pytest.mark.parametrize("bad, r", [(np.ones((2, 2)), 0.5), (np.ones(3), math.inf),
                                    (np.ones(3), math.nan)])
def test_geometric_tail_refuses(bad: np.ndarray, r: float) -> None:
    with pytest.raises(DomainError, match="geometric_tail"):
        geometric_tail(bad, r)


def test_fast_length_is_the_least_5_smooth() -> None:
    # reference: brute force over the integers
    def smooth(m: int) -> bool:
        for q in (2, 3, 5):
            while m % q == 0:
                m //= q
        return m == 1

    for n in range(1, 700):
        m = P._fast_length(n)
        assert m >= n and smooth(m) and not any(smooth(k) for k in range(n, m))


@pytest.mark.parametrize("na, nb", [(1, 1), (3, 40), (33, 33), (200, 1001)])
def test_fft_convolve_against_exact_integers(na: int, nb: int) -> None:
    # reference: exact integer convolution (Python ints) of integer-valued sequences
    rng = np.random.default_rng(na * 1000 + nb)
    a = rng.integers(0, 1 << 20, na)
    b = rng.integers(0, 1 << 20, nb)
    exact = [sum(int(a[i]) * int(b[k - i])
                 for i in range(max(0, k - nb + 1), min(k, na - 1) + 1))
             for k in range(na + nb - 1)]
    got = P._fft_convolve(a.astype(np.float64), b.astype(np.float64))
    top = max(exact)
    assert got.shape == (na + nb - 1,)
    assert max(abs(g - e) for g, e in zip(got.tolist(), exact, strict=True)) <= 1e-12 * top


def test_table_does_not_import_scipy_signal() -> None:
    # reference: sys.modules of a fresh interpreter after a composition table with the
    # certified PLD rows (scipy.signal alone took over 1 s of a cold table)
    code = ("import sys, symgdp; symgdp.composition.table(0.2, 10, [1e-2], "
            "rows=('pld', 'pld_laplace', 'gdp_summary_laplace')); "
            "print('scipy.signal' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
