#!/usr/bin/env bash
# The gate step of action.yml (and of ci/gitlab/logscan.gitlab-ci.yml): run `logscan gate` on
# the log(s), write the report files, and say the verdict and the worst code.
# Env: LOGSCAN_BIN, LOGSCAN_LOG (paths, whitespace-separated) or LOGSCAN_COMMAND (its output was
# saved to $RUNNER_TEMP/logscan-command.log), LOGSCAN_POLICY, LOGSCAN_BASELINE, LOGSCAN_GPU,
# LOGSCAN_CUDA, LOGSCAN_FORMATS (comma-separated), LOGSCAN_PARTIAL_LOG (true: gate --partial-log),
# LOGSCAN_OUT (report directory).
# Writes result=, worst-code=, report-dir= to $GITHUB_OUTPUT when set (else to stdout).
set -uo pipefail
out="${LOGSCAN_OUT:?}"; bin="${LOGSCAN_BIN:-logscan}"
mkdir -p "$out"
declare -A ext=([junit]=junit.xml [sarif]=sarif [markdown]=md [json]=json [html]=html [text]=txt)
logs=()
read -r -d '' -a logs <<< "${LOGSCAN_LOG:-}" || true
if [ -n "${LOGSCAN_COMMAND:-}" ]; then logs+=("${RUNNER_TEMP:-/tmp}/logscan-command.log"); fi
args=(--format github --output "json=$out/logscan.json" --output "markdown=$out/logscan.md")
[ -n "${LOGSCAN_POLICY:-}" ] && args+=(--policy "$LOGSCAN_POLICY")
[ -n "${LOGSCAN_BASELINE:-}" ] && args+=(--baseline "$LOGSCAN_BASELINE")
[ -n "${LOGSCAN_GPU:-}" ] && args+=(--gpu "$LOGSCAN_GPU")
[ -n "${LOGSCAN_CUDA:-}" ] && args+=(--cuda "$LOGSCAN_CUDA")
case "${LOGSCAN_PARTIAL_LOG:-false}" in
  true) args+=(--partial-log) ;;
  false|"") ;;
  *) echo "logscan: partial-log must be true or false, not '${LOGSCAN_PARTIAL_LOG}'" >&2; status=2 ;;
esac
IFS=',' read -r -a formats <<< "${LOGSCAN_FORMATS:-}"
for f in "${formats[@]}"; do
  f="${f// /}"
  [ -z "$f" ] || [ "$f" = json ] || [ "$f" = markdown ] && continue
  if [ -z "${ext[$f]:-}" ]; then echo "logscan: unknown format '$f' in formats" >&2; status=2; break; fi
  args+=(--output "$f=$out/logscan.${ext[$f]}")
done
emit() { if [ -n "${GITHUB_OUTPUT:-}" ]; then echo "$1" >> "$GITHUB_OUTPUT"; else echo "$1"; fi; }
if [ "${#logs[@]}" -eq 0 ]; then
  echo "logscan: no log given (set 'log' or 'command'): nothing to gate is not a pass" >&2
  status=2
fi
if [ -z "${status:-}" ]; then
  "$bin" gate "${args[@]}" "${logs[@]}"
  status=$?
fi
result=error; worst=""
py="$(dirname "$bin")/python"; [ -x "$py" ] || py=python3
if [ "$status" -le 1 ] && [ -f "$out/logscan.json" ]; then
  read -r result worst < <("$py" - "$out/logscan.json" <<'PY' 2>/dev/null || echo "error"
import json, sys
gate = json.load(open(sys.argv[1], encoding="utf-8"))["gate"]
order = {"fail": 0, "warn": 1, "pass": 2}
bad = sorted((c for c in gate["checks"] if c["verdict"] != "pass"), key=lambda c: order[c["verdict"]])
print(gate["verdict"], (bad[0].get("code") or bad[0]["kind"]) if bad else "")
PY
)
fi
emit "result=$result"
emit "worst-code=$worst"
emit "report-dir=$out"
echo "logscan: gate result $result${worst:+ (worst: $worst)}"
exit 0   # the Verdict step decides; the summary and SARIF steps run first
