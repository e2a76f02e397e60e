//! Driving the real Copilot CLI and Claude Code (see tests/hosts/README.md).
