"""The notes of a composition name what they describe (issue 31, part 5)."""

from __future__ import annotations

import sympy

from symgdp import Profile, compose


def test_an_rdp_source_is_not_called_a_float64_pld():
    a = sympy.Symbol("alpha")
    c = compose(Profile.from_rdp(a / 2, a), times=2, discretization=1e-2)
    text = " ".join(c.notes)
    assert "RDP" in text and "PLD" not in text and not c.certified
