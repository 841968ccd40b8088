#!/usr/bin/env bash
# Install this project (the folder $1: the action's or template's own source) into a fresh
# virtual environment $2, never from the package index by name: "logscan" on the index is an
# unrelated 2014 tool. Then check that the `logscan` found is this project's (logscan-llm).
set -euo pipefail
src="$1"; venv="$2"; py="${LOGSCAN_PYTHON:-python3}"
"$py" -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "$src"
"$venv/bin/python" - <<'PY'
import importlib.metadata as md
import sys

import logscan

dist = md.distribution("logscan-llm")
files = {str(f) for f in dist.files or ()}
if "logscan/__init__.py" not in files:
    sys.exit("logscan: the installed 'logscan' package does not come from logscan-llm")
print(f"logscan: installed logscan-llm {dist.version} (import package logscan {logscan.__version__})")
PY
