"""The README stays true: its finding-code table matches patterns/findings.toml, its commands exist."""
from __future__ import annotations

import regex

from logscan.packs.loader import default_packs
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text()


def test_finding_code_table_matches_findings_toml():
    table = README.split("## Finding codes", 1)[1].split("\n## ", 1)[0]
    rows = dict(regex.findall(r"^\| `(\w+)` \| (\w+) \|", table, flags=regex.M))
    codes = default_packs().findings.code
    assert set(rows) == set(codes)
    for code, info in codes.items():
        assert rows[code] == info.severity, code


def test_quick_start_commands_name_real_files():
    for path in regex.findall(r"logscan scan (fixtures/\S+)", README):
        assert (ROOT / path).is_file(), path
    assert ".ci/run" not in README or (ROOT / ".ci" / "run").is_file()
