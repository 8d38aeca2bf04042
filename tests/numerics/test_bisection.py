"""symgdp.numerics.bisection.proved_crossing: both ends of the bracket proved at every step.

References, independent of the package: the cube root of 2 to 40 digits (mpmath.cbrt) for
a bracket kept in python-flint balls; integer crossings known by construction; and, for the
invariant, a recording ``side`` that answers ``None`` (undecided) on a band around the root
and at random points: every returned end must be a point the caller answered True / False.
"""

from __future__ import annotations

import random

import mpmath
import pytest
from flint import arb, ctx

from symgdp.numerics.balls import gt3
from symgdp.numerics.bisection import integer_midpoint, proved_crossing


def test_ball_bracket_holds_the_cube_root_of_two():
    # f(x) = -x^3 through -2 on [1, 2]: the crossing is 2^(1/3) (mpmath.cbrt, 40 digits);
    # at 256 bits the side cannot decide within ~2^-250 of it: the undecided branch runs
    with ctx.workprec(256):
        def side(x):
            return gt3(-(x * x * x), arb(-2))

        a, b = proved_crossing(side, arb(1), arb(2), lambda u, v: (u + v) / 2, 300)
        assert side(a) is True and side(b) is False
    with mpmath.workdps(40):
        root = mpmath.cbrt(2)
        lo = mpmath.mpf(a.mid().str(60, radius=False))
        hi = mpmath.mpf(b.mid().str(60, radius=False))
        assert lo <= root <= hi and hi - lo < mpmath.mpf(2) ** -240


@pytest.mark.parametrize("seed", range(6))
def test_ends_are_only_ever_decided_points(seed):
    # the crossing of a non-increasing step at t; the side is undecided on a band around t
    # and at random points elsewhere (as balls may be): whatever it answers, the returned
    # ends are points it answered True (left) / False (right), and the crossing lies between
    rng = random.Random(seed)
    t = rng.randint(-10_000, 10_000)
    band = rng.randint(0, 40)
    answers: dict[int, bool | None] = {}

    def side(x):
        if abs(x - t) <= band or rng.random() < 0.3:
            answers[x] = None
        else:
            answers[x] = x <= t   # f(x) > level exactly for x <= t
        return answers[x]

    a, b = proved_crossing(side, -(1 << 40), 1 << 40, integer_midpoint, 200)
    assert a <= t < b
    assert a == -(1 << 40) or answers[a] is True
    assert b == 1 << 40 or answers[b] is False


def test_integer_crossing_is_exact_when_decided():
    # f(k) = 1000 - k^2 > 0 up to k = 31 (31^2 = 961, 32^2 = 1024): the bracket is (31, 32)
    assert proved_crossing(lambda k: 1000 - k * k > 0, 0, 1000, integer_midpoint, 64) \
        == (31, 32)
    assert integer_midpoint(3, 4) is None and integer_midpoint(3, 5) == 4
