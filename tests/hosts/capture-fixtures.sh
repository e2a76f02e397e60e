#!/usr/bin/env bash
# Re-capture the real-host fixtures under fixtures/copilot-<v>/, fixtures/claude-code-<v>/,
# fixtures/qwen-code-<v>/ and fixtures/gemini-cli-<v>/
# with the stand-in judge-evidence (tests/hosts/stand-in/) first on PATH.
#
#   tests/hosts/capture-fixtures.sh [scenario-name ...]     # default: all
#
# Each run uses WORKDIR=/tmp/judged-fixture/<client>/<scenario> (wiped first), so the
# paths inside the logs are stable: the client's cwd is <WORKDIR>/project.
# The fixture directories are replaced per scenario; the READMEs are left alone.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
. "$HERE/versions.env"
eval "$("$HERE/install.sh" | sed 's/^/export /')"

COPILOT_SCENARIOS="cross-family-ok same-family no-nonce wrong-agent-type reviewer-error reviewer-error-400"
CLAUDE_SCENARIOS="marker-challenge stop-hook stop-block"
QWEN_SCENARIOS="shell-call stop-blocked stop-cap stop-json"
SELECTED="$*"
want() { [ -z "$SELECTED" ] || [[ " $SELECTED " == *" $1 "* ]]; }

run() { # client fixture-dir scenario
  local client="$1" fdir="$2" name="$3"
  local wd="/tmp/judged-fixture/$client/$name" out="$fdir/$name"
  rm -rf "$wd" "$out"
  echo "== $client $name" >&2
  python3 "$HERE/drive.py" "$client" "$HERE/scenarios/$client-$name.json" "$wd" --stand-in --copy-to "$out"
  for h in "$wd"/hook-*.jsonl; do [ -e "$h" ] && cp "$h" "$out/"; done
  if [ "$client" = qwen ]; then
    # The -o json stdout, the Stop hooks' stdin (stop-<n>.json) and the run summary.
    cp "$wd/client.stdout" "$out/stdout.json"
    for h in "$wd"/stop-*.json; do [ -e "$h" ] && cp "$h" "$out/"; done
    cp "$wd/home/.qwen/usage_record.jsonl" "$out/"
  fi
  return 0
}

for s in $COPILOT_SCENARIOS; do
  if want "$s"; then run copilot "$REPO/fixtures/copilot-$COPILOT_VERSION" "$s"; fi
done
for s in $CLAUDE_SCENARIOS; do
  if want "$s"; then run claude "$REPO/fixtures/claude-code-$CLAUDE_CODE_VERSION" "$s"; fi
done
for s in $QWEN_SCENARIOS; do
  if want "$s"; then run qwen "$REPO/fixtures/qwen-code-$QWEN_CODE_VERSION" "$s"; fi
done

# Gemini CLI as the agent being reviewed: its session recordings (host-formats §D and §G), run
# straight against model_server.py (drive.py drives Copilot CLI, Claude Code and Qwen Code only).
#   done          one `gemini -p` turn
#   after-agent   the same, with an AfterAgent hook that blocks once (exit 2, the reason on
#                 stderr) and then stops the agent ({"continue": false}), as judge-hook does
GEMINI_SCENARIOS="done after-agent"
gemini_run() { # name
  local name="$1" wd="/tmp/judged-fixture/gemini/$1" out="$REPO/fixtures/gemini-cli-$GEMINI_CLI_VERSION/$1"
  rm -rf "$wd" "$out"; mkdir -p "$wd/project" "$wd/home/.gemini" "$wd/tmp" "$out"
  echo "== gemini $name" >&2
  local hooks=""
  if [ "$name" = after-agent ]; then
    printf '#!/bin/sh\ncat > /dev/null\nif [ -e %s/blocked ]; then echo %s; exit 0; fi\ntouch %s/blocked\necho "stand-in gate: no verified cross-family review of this work" >&2\nexit 2\n' \
      "$wd" "'{\"continue\":false,\"stopReason\":\"stand-in gate: still no review\"}'" "$wd" > "$wd/gate.sh"
    chmod +x "$wd/gate.sh"
    hooks=",\"hooks\":{\"AfterAgent\":[{\"hooks\":[{\"type\":\"command\",\"command\":\"$wd/gate.sh\",\"timeout\":30000}]}]}"
  fi
  printf '{"security":{"auth":{"selectedType":"gemini-api-key"}},"privacy":{"usageStatisticsEnabled":false},"general":{"enableAutoUpdate":false,"enableAutoUpdateNotification":false,"maxAttempts":1,"retryFetchErrors":false},"tools":{"core":[]}%s}\n' "$hooks" > "$wd/home/.gemini/settings.json"
  python3 "$HERE/model_server.py" --scenario "$HERE/scenarios/executor-done.json" --port-file "$wd/port" > /dev/null &
  local server=$!
  while [ ! -s "$wd/port" ]; do sleep 0.1; done
  (cd "$wd/project" && timeout 60 env -i PATH="$PATH" HOME="$wd/home" GEMINI_CLI_HOME="$wd/home" TMPDIR="$wd/tmp" \
    GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$(cat "$wd/port")" GEMINI_API_KEY=scripted-offline-key GEMINI_CLI_TRUST_WORKSPACE=true \
    node "$GEMINI_BIN" -m gemini-2.5-pro -p "Make the cart round half up." < /dev/null > "$wd/client.stdout" 2> "$wd/client.stderr") || true
  kill "$server"
  cp "$wd"/home/.gemini/tmp/project/chats/session-*.jsonl "$wd/home/.gemini/tmp/project/.project_root" "$out/"
}
for s in $GEMINI_SCENARIOS; do
  if want "$s"; then gemini_run "$s"; fi
done
