"""An unknown --gpu is refused with names an installed user can give (not a repository path)."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from logscan.cli import cli

@pytest.mark.parametrize("command", [["matrix", "NVFP4"], ["ladder", "vllm", "FP8"]])
def test_an_unknown_gpu_is_refused_with_the_names_an_installed_user_can_give(command):
    # the message named 'patterns/gpus.toml', a repository path an installed user does not have
    r = CliRunner().invoke(cli, [*command, "--gpu", "H10"])
    assert r.exit_code == 2
    assert "patterns/" not in r.output and "did you mean H100" in r.output and "RTX 5090" in r.output
