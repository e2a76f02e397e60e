#!/usr/bin/env bash
# Re-capture the real-host fixtures under fixtures/copilot-<v>/ and fixtures/claude-code-<v>/
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
SELECTED="$*"
want() { [ -z "$SELECTED" ] || [[ " $SELECTED " == *" $1 "* ]]; }

run() { # client fixture-dir scenario
  local client="$1" fdir="$2" name="$3" prefix
  [ "$client" = copilot ] && prefix=copilot || prefix=claude
  local wd="/tmp/judged-fixture/$client/$name" out="$fdir/$name"
  rm -rf "$wd" "$out"
  echo "== $client $name" >&2
  python3 "$HERE/drive.py" "$client" "$HERE/scenarios/$prefix-$name.json" "$wd" --stand-in --copy-to "$out"
  for h in "$wd"/hook-*.jsonl; do [ -e "$h" ] && cp "$h" "$out/"; done
  return 0
}

for s in $COPILOT_SCENARIOS; do
  if want "$s"; then run copilot "$REPO/fixtures/copilot-$COPILOT_VERSION" "$s"; fi
done
for s in $CLAUDE_SCENARIOS; do
  if want "$s"; then run claude "$REPO/fixtures/claude-code-$CLAUDE_CODE_VERSION" "$s"; fi
done
