r"""The ``symgdp`` command line, one room per subcommand.

* :mod:`~symgdp.cli.shared` -- what the subcommands share (usage errors, checked options);
* :mod:`~symgdp.cli.convert_command` -- ``symgdp convert``;
* :mod:`~symgdp.cli.dpsgd_command` -- ``symgdp dpsgd``;
* :mod:`~symgdp.cli.risk_command` -- ``symgdp risk`` and ``symgdp audit``;
* :mod:`~symgdp.cli.main` -- the parser, ``symgdp analyze`` and the entry point
  :func:`~symgdp.cli.main.main` (the console script).

Exports nothing itself; nothing here is imported until the command line runs.
"""
