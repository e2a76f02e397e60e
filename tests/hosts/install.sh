#!/usr/bin/env bash
# Install the pinned real host clients (Copilot CLI, Claude Code) from npm into a cache dir.
#
#   tests/hosts/install.sh            # installs into $JUDGED_HOSTS_CACHE or <repo>/.cache/hosts
#
# Idempotent: a client whose installed package.json already has the pinned version is skipped.
# On success prints two lines:
#   COPILOT_BIN=<abs path>
#   CLAUDE_BIN=<abs path>
# Exits non-zero with a message on stderr if npm is missing or the install fails.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
# shellcheck source=versions.env
. "$HERE/versions.env"
CACHE="${JUDGED_HOSTS_CACHE:-$REPO/.cache/hosts}"

die() { echo "install.sh: $*" >&2; exit 1; }

command -v npm >/dev/null 2>&1 || die "npm not found on PATH (need Node.js >= 20 and npm)"
command -v node >/dev/null 2>&1 || die "node not found on PATH"

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) PLAT=linux-x64 ;;
  Linux-aarch64) PLAT=linux-arm64 ;;
  Darwin-arm64) PLAT=darwin-arm64 ;;
  Darwin-x86_64) PLAT=darwin-x64 ;;
  *) die "unsupported platform $(uname -s)-$(uname -m)" ;;
esac

installed_version() { # <prefix> <package>
  local pj="$1/node_modules/$2/package.json"
  [ -f "$pj" ] || return 0
  node -e 'try{process.stdout.write(require(process.argv[1]).version||"")}catch(e){}' "$pj"
}

install_one() { # <dir-name> <package> <version> <platform-package> <binary-name>
  local prefix="$CACHE/$1-$3" pkg="$2" ver="$3" ppkg="$4" bin="$5"
  local binpath="$prefix/node_modules/$ppkg/$bin"
  if [ "$(installed_version "$prefix" "$pkg")" = "$ver" ] && [ -x "$binpath" ]; then
    echo "install.sh: $pkg@$ver already installed in $prefix" >&2
  else
    mkdir -p "$prefix"
    [ -f "$prefix/package.json" ] || echo '{"name":"judged-host-cache","private":true}' > "$prefix/package.json"
    echo "install.sh: installing $pkg@$ver into $prefix" >&2
    if ! (cd "$prefix" && npm install --no-audit --no-fund --loglevel=error --save-exact "$pkg@$ver" >&2); then
      die "npm could not install $pkg@$ver (is the npm registry reachable?)"
    fi
    [ "$(installed_version "$prefix" "$pkg")" = "$ver" ] || die "$pkg installed but version is not $ver"
    [ -x "$binpath" ] || die "$pkg@$ver installed but binary not found at $binpath (optional dependency $ppkg missing?)"
  fi
  printf '%s' "$binpath"
}

COPILOT_BIN="$(install_one copilot @github/copilot "$COPILOT_VERSION" "@github/copilot-$PLAT" copilot)"
CLAUDE_BIN="$(install_one claude-code @anthropic-ai/claude-code "$CLAUDE_CODE_VERSION" "@anthropic-ai/claude-code-$PLAT" claude)"

echo "COPILOT_BIN=$COPILOT_BIN"
echo "CLAUDE_BIN=$CLAUDE_BIN"
