"""What a composition says it rests on (issue 31): the exact integer route with a step
whose float64 values are not proved (an RDP-implied profile) is not "a float64 PLD with an
estimated rounding margin"; that wording belongs to dp_accounting's FFT route alone.
(Its values are documented as proved upper bounds, but the source is not marked
certified=True, so the composition does not claim a certificate.)
Reference for the numbers: the Gaussian mechanism, whose RDP curve alpha / (2 sigma^2) is
exact, so the composed RDP-implied profile lies above the composed Gaussian's
mu = sqrt(k) / sigma (closed form, Dong, Roth & Su Corollary 3.3)."""

from __future__ import annotations

import io
import math

from symgdp import Profile, compose, mechanisms
from symgdp.cli.main import main
from symgdp.notions import alpha


def test_certified_route_says_so() -> None:
    # the integer route (forced: compose() answers Gaussians in closed form) and the
    # closed form, each in its own words
    c = compose(mechanisms.gaussian(1.0), times=2, _engine=True)
    assert c.certified
    assert c.certification.startswith("certified: exact integer composition")
    assert "NOT certified" not in repr(c)
    # reference: the composed Gaussian is exactly sqrt(2)-GDP
    assert c.mu_floor <= math.sqrt(2) <= c.mu_upper
    e = compose(mechanisms.gaussian(1.0), times=2)
    assert e.certified and "NOT certified" not in repr(e)
    assert e.certification.startswith("certified: exact closed form")
    assert "Corollary 3.3" in e.certification
    assert e.mu_floor <= math.sqrt(2) <= e.mu_upper


def test_rdp_source_on_the_integer_route_is_described_honestly() -> None:
    p = Profile.from_rdp(alpha / 2)  # the Gaussian mechanism with sigma = 1
    c = compose(p, times=3)
    assert not c.certified and c.atoms  # the integer route, not dp_accounting's FFT
    text = c.certification
    assert text.startswith("NOT certified: exact integer composition")
    assert "float64 PLD" not in text and "FFT" not in text
    assert "NOT certified (exact composition; a step's float64 values not marked as proved)" \
        in repr(c)
    assert "float64 FFT" not in repr(c)
    assert any("RDP" in n for n in c.notes)
    # an upper bound on the composed mechanism: at least the Gaussian's sqrt(3)
    assert c.mu_upper >= math.sqrt(3) * (1 - 1e-9)


def test_float_route_keeps_its_wording() -> None:
    c = compose(mechanisms.gaussian(0.5), times=4, certify=False)
    assert not c.certified and not c.atoms
    assert "float64 FFT" in c.certification and "estimated" in c.certification
    assert "NOT certified (float64 FFT estimate)" in repr(c)


def test_cli_compose_line_names_the_route() -> None:
    out, err = io.StringIO(), io.StringIO()
    code = main(["compose", "exp(-eps)", "--times", "2"], stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    first = out.getvalue().splitlines()[0]
    assert "certified: exact integer composition of proved step values" in first
    out2 = io.StringIO()
    assert main(["compose", "exp(-eps)", "--times", "2", "--no-certify"], stdout=out2,
                stderr=io.StringIO()) == 0
    assert "NOT certified: dp_accounting's float64 FFT" in out2.getvalue().splitlines()[0]
