"""Smoke tests of the package surface; numeric references live in test_gaussian.py."""

import symgdp


def test_public_names_exist():
    for name in ["eps", "delta", "Profile", "mu_gdp", "delta_mu", "log_delta_mu", "eps_gdp",
                 "mu_from_pure_dp", "compose_gdp", "tradeoff_gdp", "SymgdpError", "mp"]:
        assert hasattr(symgdp, name), name


def test_errors_derive_from_base():
    for cls in [symgdp.ParseError, symgdp.ProfileError, symgdp.ConvergenceError,
                symgdp.AnalysisTimeout, symgdp.DomainError]:
        assert issubclass(cls, symgdp.SymgdpError)
