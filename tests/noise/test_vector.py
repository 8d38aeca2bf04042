"""Vector Gaussian noise (symgdp.noise.vector through additive_noise): the reduction to the
1-D shift against independent references -- the closed-form Gaussian profile at 40 digits,
a brute-force search of the sensitivity ball, and a 2-D quadrature of the definition."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy
from scipy import integrate

import symgdp
from symgdp.errors import DomainError, ProfileError
from symgdp.noise.vector import reduce_vector_gaussian

X, Y, Z = sympy.symbols("x y z", real=True)
SIGMA = sympy.Symbol("sigma", positive=True)


def _gauss_profile(eps, mu):
    # the analytic Gaussian profile (Balle & Wang 2018, Thm 8), 40-digit mpmath
    with mpmath.workdps(40):
        e, m = mpmath.mpf(eps), mpmath.mpf(mu)
        return mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)


def _density(A):
    A = sympy.Matrix(A)
    v = sympy.Matrix([X, Y][:A.shape[0]] if A.shape[0] == 2 else [X, Y, Z])
    return sympy.sqrt(A.det()) / (2 * sympy.pi) ** sympy.Rational(A.shape[0], 2) \
        * sympy.exp(-(v.T * A * v)[0, 0] / 2)


def test_isotropic_gaussian_is_the_1d_shift_delta_over_sigma():
    p = sympy.exp(-(X**2 + Y**2) / (2 * SIGMA**2)) / (2 * sympy.pi * SIGMA**2)
    prof = symgdp.additive_noise(p, sensitivity=2, variable=[X, Y])
    assert prof.meta["sensitivity"] == 2 / SIGMA
    bound = prof.replace(values={"sigma": 4})       # mu = 2/4
    for e in (0.0, 0.3, 1.0, 3.0):
        ref = _gauss_profile(e, 0.5)
        # the float evaluation of a closed form: accurate to ~1e-13 relative (erfc
        # differences at eps = 3), not a directed bound
        assert abs(mpmath.mpf(bound(e)) - ref) <= 1e-12 * ref
    d = prof.meta["derivation"]
    assert "l2" in d.noise and "||f(D) - f(D')||_2" in d.relation
    assert "reduction" in d.to_latex() and "Rayleigh" in str(d)


@pytest.mark.parametrize("norm", ["l2", "l1", "linf"])
def test_correlated_gaussian_worst_case_against_a_search_of_the_ball(norm):
    A = [[2, 1, 0], [1, 3, 1], [0, 1, 1]]
    red = reduce_vector_gaussian(_density(A), (X, Y, Z), norm)
    factor = float(red.factor)
    # independent: sup of sqrt(v'Av) over many points of the unit sphere of the norm
    rng = np.random.default_rng(7)
    v = rng.normal(size=(200_000, 3))
    scale = {"l2": np.linalg.norm(v, axis=1), "l1": np.abs(v).sum(axis=1),
             "linf": np.abs(v).max(axis=1)}[norm]
    v = v / scale[:, None]
    if norm == "linf":  # the vertices are where the maximum sits: add them
        v = np.vstack([v, np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).reshape(3, -1).T])
    if norm == "l1":
        v = np.vstack([v, np.eye(3), -np.eye(3)])
    M = np.array(A, dtype=float)
    best = np.sqrt(np.einsum("ij,jk,ik->i", v, M, v).max())
    assert best <= factor * (1 + 1e-12)
    assert best >= factor * (1 - 1e-3)
    if norm == "l2":   # the largest eigenvalue, numerically
        assert abs(factor - np.sqrt(np.linalg.eigvalsh(M).max())) <= 1e-12 * factor


def test_profile_against_a_2d_quadrature_at_the_worst_shift():
    A = sympy.Matrix([[2, 1], [1, 2]])
    prof = symgdp.additive_noise(_density(A), sensitivity=1, variable=[X, Y], norm="l2")
    # the worst l2 shift is the top eigenvector (1, 1)/sqrt(2); integrate the definition
    # max(0, p(x) - e^eps p(x - v)) over the plane (scipy, independent of the reduction)
    M = np.array([[2.0, 1.0], [1.0, 2.0]])
    v = np.array([1.0, 1.0]) / np.sqrt(2.0)
    c = np.sqrt(np.linalg.det(M)) / (2 * np.pi)
    (m00, m01), (m10, m11) = M.tolist()

    def p(x, y, s):
        # the density at (x, y) - s, w'Mw written out in floats: numpy's overhead on
        # 2-vectors was most of the quadrature's time (8x), for the same value to an ulp
        wx, wy = x - s[0], y - s[1]
        return c * math.exp(-0.5 * (m00 * wx * wx + (m01 + m10) * wx * wy + m11 * wy * wy))

    def hockey(eps, shift):
        e, sh = math.exp(eps), [float(t) for t in shift]
        return integrate.dblquad(
            lambda y, x: max(0.0, p(x, y, (0.0, 0.0)) - e * p(x, y, sh)),
            -9, 9, -9, 9, epsabs=1e-11, epsrel=1e-9)[0]

    for eps in (0.7,):
        ref = hockey(eps, v)
        assert abs(prof(eps) - ref) <= 1e-7 * ref + 1e-10
        # a shift of the same l2 length along an eigenvector of the smaller eigenvalue is
        # more private (smaller delta): the reduction picked the worst direction
        assert hockey(eps, np.array([1.0, -1.0]) / np.sqrt(2.0)) < ref


def test_non_gaussian_and_bad_vector_densities_are_named():
    lap = sympy.exp(-sympy.Abs(X) - sympy.Abs(Y)) / 4
    with pytest.raises(ProfileError, match="not a Gaussian"):
        symgdp.additive_noise(lap, variable=[X, Y], norm="l1")
    with pytest.raises(DomainError, match="integrates to"):
        symgdp.additive_noise(sympy.exp(-(X**2 + Y**2) / 2), variable=[X, Y])
    with pytest.raises(DomainError, match="not positive definite"):
        symgdp.additive_noise(sympy.exp(-(X**2 - Y**2) / 2), variable=[X, Y])
    with pytest.raises(DomainError, match="norm must be one of"):
        symgdp.additive_noise(_density([[1, 0], [0, 1]]), variable=[X, Y], norm="l3")
    with pytest.raises(DomainError, match="at least two variables"):
        symgdp.additive_noise(_density([[1, 0], [0, 1]]), variable=[X])
    with pytest.raises(DomainError, match="does not depend on z"):
        symgdp.additive_noise(_density([[1, 0], [0, 1]]), variable=[X, Y, Z])


def test_cli_vector_noise():
    # reference: isotropic N(0, sigma^2 I) in the l1 ball is the 1-D shift Delta/sigma
    # (module notes), so mu = 1/2 exactly at sigma = 2, Delta = 1 (closed form)
    import io
    import json

    from symgdp.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    rc = main(["analyze", "--noise", "exp(-(x**2+y**2)/(2*sigma**2))/(2*pi*sigma**2)",
               "--variables", "x,y", "--norm", "l1", "--set", "sigma=2", "--set", "Delta=1",
               "--json"], stdout=out, stderr=err)
    assert rc == 0, err.getvalue()
    data = json.loads(out.getvalue())
    text = json.dumps(data)
    assert "reduction" in text
    lo, hi = data["mu_lower"], data["mu_upper"]
    assert lo <= 0.5 <= hi and hi - lo <= 1e-9
    out, err = io.StringIO(), io.StringIO()
    assert main(["analyze", "exp(-eps)", "--norm", "l1"], stdout=out, stderr=err) == 2
    assert "--noise" in err.getvalue()
