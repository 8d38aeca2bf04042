"""Bad noise input: each refusal names what is wrong (the value, the point)."""

from __future__ import annotations

import pytest
import sympy

import symgdp
from symgdp.errors import DomainError
from symgdp.noise.density import read_density

x = sympy.Symbol("x")
PHI = sympy.exp(-x**2 / 2) / sympy.sqrt(2 * sympy.pi)


def test_not_normalised_names_the_mass():
    with pytest.raises(DomainError, match="integrates to 2 over the real line, not 1"):
        symgdp.additive_noise(2 * PHI)


def test_symbolic_mass_is_named():
    c = sympy.Symbol("c", positive=True)
    with pytest.raises(DomainError, match="integrates to 2 over the real line"):
        read_density(2 * sympy.exp(-sympy.Abs(x) / c) / (2 * c))


def test_negative_density_names_the_point():
    # (2x^2 - 1) phi(x) integrates to 1 (E[X^2] = 1) but is negative near 0
    with pytest.raises(DomainError, match=r"negative at x = (-?\d+/\d+|0)") as info:
        symgdp.additive_noise((2 * x**2 - 1) * PHI)
    point = sympy.Rational(str(info.value).split("negative at x = ")[1].split(":")[0])
    assert ((2 * point**2 - 1) * PHI.subs(x, point)) < 0  # the named point is negative


def test_not_in_the_variable():
    y = sympy.Symbol("y")
    with pytest.raises(DomainError, match="does not depend on y"):
        symgdp.additive_noise(PHI, variable=y)
    with pytest.raises(DomainError, match="does not depend"):
        symgdp.additive_noise(sympy.Integer(1), variable=x)


def test_ambiguous_variable():
    a, t = sympy.symbols("a t", positive=True)
    with pytest.raises(DomainError, match="give variable="):
        symgdp.additive_noise(sympy.exp(-t**2 / (2 * a**2)) / (sympy.sqrt(2 * sympy.pi) * a))


@pytest.mark.parametrize("bad", [0, -1, -0.5, float("nan"), float("inf"), True])
def test_sensitivity_not_positive(bad):
    with pytest.raises(DomainError, match="sensitivity"):
        symgdp.additive_noise(PHI, sensitivity=bad)


def test_symbolic_sensitivity_not_positive():
    n = sympy.Symbol("n", negative=True)
    with pytest.raises(DomainError, match="sensitivity must be > 0"):
        symgdp.additive_noise(PHI, sensitivity=n)
    free = sympy.Symbol("d")
    with pytest.raises(DomainError, match="not declared positive"):
        symgdp.additive_noise(PHI, sensitivity=free)


def test_parameter_not_real():
    s = sympy.Symbol("s")
    with pytest.raises(DomainError, match="parameter s .* not declared real"):
        symgdp.additive_noise(sympy.exp(-x**2 / (2 * s**2)) / (sympy.sqrt(2 * sympy.pi) * s))


def test_not_a_density_object():
    with pytest.raises(DomainError):
        symgdp.additive_noise(object())


def test_log_delta_each_rounds_the_balls_upper_end_up():
    # reference: 40-digit mpmath log of the ball's upper end m + r (exact dyadics); the
    # float returned is at least it and within one ulp; an end <= 0 is -inf, above 1 is 0
    import math

    import mpmath
    from flint import arb

    from symgdp.noise.density import log_delta_each

    balls = {0.0: arb(0.1, 2.0 ** -40), 1.0: arb(3e-200, 1e-215), 2.0: arb(0),
             3.0: arb(-1e-3, 1e-4), 4.0: arb(1.5, 0.1)}
    got = log_delta_each(lambda e: balls[e], list(balls))
    for (e, b), g in zip(balls.items(), got, strict=True):
        with mpmath.workdps(40):
            end = sum(mpmath.mpf(v.str(60, radius=False)) for v in (b.mid(), b.rad()))
            if e in (2.0, 3.0):
                assert g == -math.inf
            elif e == 4.0:
                assert g == 0.0
            else:
                truth = mpmath.log(end)
                assert truth <= g <= truth + 2 * abs(truth) * 2.0 ** -52
