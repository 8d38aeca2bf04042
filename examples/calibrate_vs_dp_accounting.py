r"""symgdp.calibrate next to dp_accounting's mechanism_calibration, for (eps, delta) targets.

Google's ``dp_accounting`` calibrates its own mechanisms by bisection on the
:math:`(\varepsilon, \delta)` that its privacy-loss-distribution accountant reports; symgdp
calibrates any profile on guaranteed GDP brackets.  Where both apply they agree:

* the Gaussian mechanism through the GDP route, which is exact for it (the analytic
  Gaussian mechanism, :math:`\sigma = 1/\mu_{GDP}(\varepsilon, \delta)`);
* the Laplace mechanism through the trade-off route, its exact profile solved for the scale
  :math:`b = 1/(\varepsilon - 2\log(1 - \delta))`.

The table of the documentation page "Planning a mechanism" was made with the full settings.
"""

from __future__ import annotations

from pathlib import Path

import mpmath
import sympy
from _common import parse_args

from symgdp import calibrate, mechanisms, mp

EPS, DELTA = 1.0, 1e-5


def main(argv: list[str] | None = None) -> int:
    args = parse_args(__doc__, argv, Path(__file__).resolve().parent / "out")
    tol_dpa, tol_mu, rtol = (1e-3, 1e-3, 1e-4) if args.small else (1e-6, 1e-5, 1e-7)
    try:
        import dp_accounting
        from dp_accounting import mechanism_calibration, pld
    except ImportError:
        print("dp_accounting is not installed (pip install dp-accounting); nothing to compare")
        return 0

    def accountant() -> pld.PLDAccountant:
        return pld.PLDAccountant()

    # explicit brackets around the answers: an open-ended search (LowerEndpointAndGuess)
    # spends most of its time on huge PLDs at tiny noise before it brackets the root
    explicit = mechanism_calibration.ExplicitBracketInterval
    sigma_dpa = mechanism_calibration.calibrate_dp_mechanism(
        accountant, dp_accounting.GaussianDpEvent, EPS, DELTA, explicit(1.0, 10.0),
        tol=tol_dpa)
    b_dpa = mechanism_calibration.calibrate_dp_mechanism(
        accountant, dp_accounting.LaplaceDpEvent, EPS, DELTA, explicit(0.5, 2.0),
        tol=tol_dpa)

    s = sympy.Symbol("sigma", positive=True)
    gauss = calibrate(mechanisms.gaussian(1 / s), "sigma", target=(EPS, DELTA),
                      bracket=(1, 10), eps_h=1.5, tol=tol_mu, refine=False, rtol=rtol)
    lap = calibrate("b = 1/(eps - 2*log(1 - delta))", "b", target=(EPS, DELTA))

    sigma_exact = float(1 / mp.mu_gdp(EPS, DELTA))
    with mpmath.workdps(40):  # at 40 digits: the float formula is off by a few ulps
        b_exact_mp = 1 / (EPS - 2 * mpmath.log1p(-mpmath.mpf(DELTA)))
        b_safe = mpmath.mpf(lap.value) >= b_exact_mp
    b_exact = float(b_exact_mp)
    print(f"target (eps, delta) = ({EPS:g}, {DELTA:g})")
    print(f"Gaussian sigma: closed form {sigma_exact:.10f}, dp_accounting {sigma_dpa:.10f}, "
          f"symgdp [{gauss.bracket[0]:.6f}, {gauss.bracket[1]:.6f}]")
    print(f"Laplace b:      closed form {b_exact:.11f}, dp_accounting {b_dpa:.11f}, "
          f"symgdp {lap.value:.11f}")
    ok = (gauss.bracket[0] <= sigma_exact <= gauss.bracket[1]
          and abs(sigma_dpa - sigma_exact) <= 2 * tol_dpa * sigma_exact
          and b_safe and abs(b_dpa - b_exact) <= 2 * tol_dpa)
    if not ok:
        raise SystemExit("the two calibrations disagree beyond their tolerances")
    print("they agree within their tolerances")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
