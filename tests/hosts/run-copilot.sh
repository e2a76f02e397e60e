#!/usr/bin/env bash
# Run the real copilot client against the scripted model server.
#   tests/hosts/run-copilot.sh SCENARIO WORKDIR [drive.py options: --timeout S --stand-in --copy-to DIR --bin PATH]
# Prints SESSION_LOG=<path> lines and EXIT=<code>.  See drive.py / README.md.
exec python3 "$(dirname "${BASH_SOURCE[0]}")/drive.py" copilot "$@"
