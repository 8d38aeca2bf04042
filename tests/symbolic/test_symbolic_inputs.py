"""Bad symbolic input is a clear error (exit 2 on the command line); float noise is not.

References: the undefined values are undefined by definition (log base 0 or 1, 0/0, a
Piecewise with no piece for some eps); the erf-form Gaussian profile is positive and
non-increasing by Dong, Roth & Su (2021), so any rejection of it is a false alarm;
exp(-eps) - 1/10 is negative for eps > log 10 (closed form).
"""

from __future__ import annotations

import io
import subprocess
import sys

import pytest
import sympy

from symgdp.cli.main import main
from symgdp.errors import ParseError, ProfileError
from symgdp.profile import Profile
from symgdp.symbolic.parsing import parse_expression
from symgdp.symbolic.symbols import eps

BAD_TEXTS = [
    ("Piecewise((exp(-eps), eps > 1))", "Piecewise"),
    ("log(eps, 0)", "base 0"),
    ("log(2, 0)*eps + exp(-eps)", "base 0"),
    ("log(eps, 1)", "base 1"),
    ("0*log(0) + exp(-eps)", "log of 0"),
    ("exp(-eps) + 0*(1/0)", "undefined"),
    ("exp(-eps) + (0/0)*eps", "undefined"),
]


@pytest.mark.parametrize("text, words", BAD_TEXTS)
def test_parser_refuses_undefined_pieces(text, words):
    with pytest.raises(ParseError, match=words):
        parse_expression(text)


def test_piecewise_whose_conditions_cover_everything_is_accepted():
    e = parse_expression("Piecewise((1, eps < 1), (exp(1 - eps), eps >= 1))")
    assert e.subs(eps, 2) == sympy.exp(-1)


@pytest.mark.parametrize("text, words", BAD_TEXTS)
def test_cli_exit_2_with_one_line(text, words):
    out, err = io.StringIO(), io.StringIO()
    assert main(["analyze", text, "--json"], stdout=out, stderr=err) == 2, err.getvalue()
    lines = err.getvalue().strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "Traceback" not in err.getvalue()


def test_cli_exit_2_as_a_process():
    proc = subprocess.run([sys.executable, "-m", "symgdp", "analyze",
                           "Piecewise((exp(-eps), eps > 1))"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1


def test_profile_objects_with_undefined_pieces_are_profile_errors():
    with pytest.raises(ProfileError, match="default piece"):
        Profile(sympy.Piecewise((sympy.exp(-eps), eps > 1))).validate()
    with pytest.raises(ProfileError, match="undefined"):
        Profile(sympy.exp(-eps) + sympy.zoo * eps).validate()


@pytest.mark.slow
def test_erf_form_gaussian_is_not_a_false_alarm():
    # float64 cancellation makes 1 + erf(x) - e^eps (1 + erf(y)) look negative or rising
    def phi(x):
        return (1 + sympy.erf(x / sympy.sqrt(2))) / 2

    for mu in (sympy.Integer(1), sympy.Integer(2), sympy.Rational(1, 2)):
        expr = phi(-eps / mu + mu / 2) - sympy.exp(eps) * phi(-eps / mu - mu / 2)
        Profile(expr).validate()


def test_a_real_negative_value_is_still_rejected():
    with pytest.raises(ProfileError, match="negative.*confirmed"):
        Profile(sympy.exp(-eps) - sympy.Rational(1, 10)).validate()
