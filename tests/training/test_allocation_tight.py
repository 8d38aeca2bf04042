"""Random allocation's pair floor (symgdp.training.allocation_tight)."""

from __future__ import annotations

from fractions import Fraction

import flint
import pytest

from symgdp.errors import DomainError
from symgdp.training import allocation_tight as at


def test_added_covers_the_compositions_rounding_up(monkeypatch):
    # A of the floor theorem is nu(all) - M^E (M: the one-epoch law's exact total).  The
    # compositions round their mass at +oo up (< 2^-bits each, doubled by every later
    # squaring); a bound from the one-epoch rounding alone, E a (1 + a)^(E-1), missed it
    # by ~7e-23 here.  Reference: nu(all) in exact integers, M from above by the ball of
    # the law's total (the tail sum at the first grid point).
    seen = {}
    real = at._ctd

    def spy(pbar, *args):
        old = flint.ctx.prec
        flint.ctx.prec = 200  # the upper end itself, not rounded to 53 bits
        try:
            seen["m_up"] = pbar[0].upper()
        finally:
            flint.ctx.prec = old
        return real(pbar, *args)

    monkeypatch.setattr(at, "_ctd", spy)
    at._epoch_atoms.cache_clear()
    epochs = 100
    f = at.pair_floor(0.8, 2, epochs)
    pmf = f.comp.pmfs[0]
    nu_all = Fraction(int(pmf.total()) + int(pmf.inf), 2**pmf.bits)
    man, ex = seen["m_up"].man_exp()  # the ball's upper end, exactly
    m_up = Fraction(int(man)) * Fraction(2) ** int(ex)
    need = nu_all - m_up**epochs
    assert need > 0
    assert Fraction(f.added) >= need, (float(need), f.added)


@pytest.mark.parametrize("kw", [dict(refine=2.5), dict(refine=True), dict(refine=3),
                                dict(disc=2.0**-40), dict(refine=2**30)])
def test_bad_grids_are_domain_errors(kw):
    # refine=2.5 was read as 2 for the check but divided the grid by 2.5 (not a power of
    # 2: the grid points j d were no longer exact); a far too fine grid raised MemoryError
    with pytest.raises(DomainError):
        at.pair_floor(1.0, 2, 1, **kw)
