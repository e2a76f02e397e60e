#!/usr/bin/env bash
# Install the pinned real host clients (Copilot CLI, Claude Code, Qwen Code, OpenCode) and
# juror CLIs (Codex CLI, Gemini CLI) from npm into a cache dir.
#
#   tests/hosts/install.sh                 # copilot claude codex gemini, into $JUDGED_HOSTS_CACHE or <repo>/.cache/hosts
#   tests/hosts/install.sh codex qwen      # only the named ones (copilot claude codex gemini qwen opencode)
#
# Idempotent: a client whose installed package.json already has the pinned version is skipped.
# Before each download it says on stderr what it downloads, about how much, and where it is
# kept for the next runs (the four: about 1.1 GB; Qwen Code about 145 MB more, OpenCode about
# 190 MB). npm's own download cache is a directory of
# this run beside the clients, removed when it ends, not the user's ~/.npm.
# On success prints one line per client, in this order:
#   COPILOT_BIN=<abs path>
#   CLAUDE_BIN=<abs path>
#   CODEX_BIN=<abs path>     (the native binary of the platform package, not the node wrapper)
#   GEMINI_BIN=<abs path>    (bundle/gemini.js, a `#!/usr/bin/env node` script)
#   QWEN_BIN=<abs path>      (cli-entry.js, a `#!/usr/bin/env node` script)
#   OPENCODE_BIN=<abs path>  (the native binary of the platform package)
# Exits non-zero with a message on stderr if npm is missing or the install fails.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
# shellcheck source=versions.env
. "$HERE/versions.env"
CACHE="${JUDGED_HOSTS_CACHE:-$REPO/.cache/hosts}"
export npm_config_cache="$CACHE/.npm-download-$$" npm_config_update_notifier=false
trap 'rm -rf "$npm_config_cache"' EXIT

die() { echo "install.sh: $*" >&2; exit 1; }

command -v npm >/dev/null 2>&1 || die "npm not found on PATH (need Node.js >= 20 and npm)"
command -v node >/dev/null 2>&1 || die "node not found on PATH"

# PLAT: the npm platform-package suffix; TRIPLE: the Rust target Codex's package vendors.
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) PLAT=linux-x64 TRIPLE=x86_64-unknown-linux-musl ;;
  Linux-aarch64) PLAT=linux-arm64 TRIPLE=aarch64-unknown-linux-musl ;;
  Darwin-arm64) PLAT=darwin-arm64 TRIPLE=aarch64-apple-darwin ;;
  Darwin-x86_64) PLAT=darwin-x64 TRIPLE=x86_64-apple-darwin ;;
  *) die "unsupported platform $(uname -s)-$(uname -m)" ;;
esac

WANT="${*:-copilot claude codex gemini}"
for name in $WANT; do
  case "$name" in copilot|claude|codex|gemini|qwen|opencode) ;; *) die "unknown client '$name' (copilot claude codex gemini qwen opencode)" ;; esac
done
wanted() { case " $WANT " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

installed_version() { # <prefix> <package>
  local pj="$1/node_modules/$2/package.json"
  [ -f "$pj" ] || return 0
  node -e 'try{process.stdout.write(require(process.argv[1]).version||"")}catch(e){}' "$pj"
}

install_one() { # <dir-name> <package> <version> <platform-package> <binary-name> <MB installed, about>
  local prefix="$CACHE/$1-$3" pkg="$2" ver="$3" ppkg="$4" bin="$5" mb="$6"
  local binpath="$prefix/node_modules/$ppkg/$bin"
  if [ "$(installed_version "$prefix" "$pkg")" = "$ver" ] && [ -x "$binpath" ]; then
    echo "install.sh: $pkg@$ver already installed in $prefix" >&2
  else
    mkdir -p "$prefix"
    [ -f "$prefix/package.json" ] || echo '{"name":"judged-host-cache","private":true}' > "$prefix/package.json"
    echo "install.sh: downloading $pkg@$ver (about $mb MB) into $prefix; it stays there for the next runs" >&2
    if ! (cd "$prefix" && npm install --no-audit --no-fund --loglevel=error --save-exact "$pkg@$ver" >&2); then
      die "npm could not install $pkg@$ver (is the npm registry reachable?)"
    fi
    [ "$(installed_version "$prefix" "$pkg")" = "$ver" ] || die "$pkg installed but version is not $ver"
    [ -x "$binpath" ] || die "$pkg@$ver installed but binary not found at $binpath (optional dependency $ppkg missing?)"
  fi
  printf '%s' "$binpath"
}

if wanted copilot; then
  COPILOT_BIN="$(install_one copilot @github/copilot "$COPILOT_VERSION" "@github/copilot-$PLAT" copilot 190)"
fi
if wanted claude; then
  CLAUDE_BIN="$(install_one claude-code @anthropic-ai/claude-code "$CLAUDE_CODE_VERSION" "@anthropic-ai/claude-code-$PLAT" claude 360)"
fi
# Codex: @openai/codex is a node wrapper; its optional dependency @openai/codex-<plat> (an npm
# alias of @openai/codex@<v>-<plat>) holds the native binary under vendor/<triple>/bin/.
if wanted codex; then
  CODEX_BIN="$(install_one codex @openai/codex "$CODEX_VERSION" "@openai/codex-$PLAT" "vendor/$TRIPLE/bin/codex" 400)"
fi
# Gemini CLI: one bundled node script, no platform package.
if wanted gemini; then
  GEMINI_BIN="$(install_one gemini-cli @google/gemini-cli "$GEMINI_CLI_VERSION" "@google/gemini-cli" bundle/gemini.js 100)"
fi
# Qwen Code: a node script (cli-entry.js) beside its bundle; no platform package is needed
# (node-pty, clipboard and sharp are optional dependencies it runs without).
if wanted qwen; then
  QWEN_BIN="$(install_one qwen-code @qwen-code/qwen-code "$QWEN_CODE_VERSION" "@qwen-code/qwen-code" cli-entry.js 145)"
fi

# OpenCode: opencode-ai is a node wrapper; its optional dependency opencode-<plat> holds the
# native binary.
if wanted opencode; then
  OPENCODE_BIN="$(install_one opencode opencode-ai "$OPENCODE_VERSION" "opencode-$PLAT" bin/opencode 190)"
fi

if wanted copilot; then echo "COPILOT_BIN=$COPILOT_BIN"; fi
if wanted claude; then echo "CLAUDE_BIN=$CLAUDE_BIN"; fi
if wanted codex; then echo "CODEX_BIN=$CODEX_BIN"; fi
if wanted gemini; then echo "GEMINI_BIN=$GEMINI_BIN"; fi
if wanted qwen; then echo "QWEN_BIN=$QWEN_BIN"; fi
if wanted opencode; then echo "OPENCODE_BIN=$OPENCODE_BIN"; fi
