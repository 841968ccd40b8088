"""The subcommands of ``logscan`` (``logscan.cli``), one module per group, imported on use."""
