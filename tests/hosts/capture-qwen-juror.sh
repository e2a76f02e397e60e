#!/usr/bin/env bash
# Capture Qwen Code's `-o json` stdout as a juror, run as jury/src/preset.rs runs it, against
# model_server.py (fixtures/jurors/README.md lists what was captured with which arguments).
#
#   tests/hosts/capture-qwen-juror.sh OUT SCENARIO MODEL [SERVER ARGS...]
#   e.g. tests/hosts/capture-qwen-juror.sh fixtures/jurors/qwen-code-0.24.4_json_stdout_impostor.json \
#          juror-claims-identity qwen3-coder-plus --impostor qwen3-coder-plus=gpt-5.4-mini
#
# The run's cwd is /tmp/judged-fixture-qwen-juror/project, so the output names no
# machine's paths; QWEN_BIN, else `install.sh qwen`, gives the client.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 OUT SCENARIO MODEL [SERVER ARGS...]" >&2; exit 2; }
out=$1 scenario=$2 model=$3
shift 3
here="$(cd "$(dirname "$0")" && pwd)"
qwen="${QWEN_BIN:-$(bash "$here/install.sh" qwen | sed -n 's/^QWEN_BIN=//p')}"
root=/tmp/judged-fixture-qwen-juror
rm -rf "$root"
mkdir -p "$root/project" "$root/home/.qwen"
server=""
trap '[ -z "$server" ] || kill "$server" 2>/dev/null || true; rm -rf "$root"' EXIT
python3 "$here/model_server.py" --scenario "$here/scenarios/$scenario.json" --port-file "$root/port" "$@" \
  >/dev/null 2>&1 &
server=$!
for _ in $(seq 50); do [ -s "$root/port" ] && break; sleep 0.1; done
port="$(cat "$root/port")"
printf '%s' '{"security":{"auth":{"selectedType":"openai"}},"general":{"enableAutoUpdate":false},"privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false}}' \
  >"$root/home/.qwen/settings.json"
cd "$root/project"
printf 'Judge this artifact; answer with one JSON object.\n' | env -i PATH="$PATH" HOME="$root/home" \
  QWEN_HOME="$root/home/.qwen" QWEN_RUNTIME_DIR="$root/home/.qwen" OPENAI_BASE_URL="http://127.0.0.1:$port/v1" \
  OPENAI_API_KEY=scripted-offline-key OPENAI_MODEL="$model" \
  "$qwen" -m "$model" -o json --approval-mode plan --safe-mode >"$OLDPWD/$out"
echo "wrote $out" >&2
