#!/usr/bin/env python3
"""Drive a real host client (Copilot CLI, Claude Code or Qwen Code) against the scripted model
server.

  drive.py copilot SCENARIO WORKDIR [options]
  drive.py claude  SCENARIO WORKDIR [options]
  drive.py qwen    SCENARIO WORKDIR [options]

Options:
  --timeout SEC      wall-clock limit for the client (default: scenario "timeout" or 120)
  --stand-in         put tests/hosts/stand-in/ first on PATH (a fake `judge-evidence`
                     used to capture fixtures before the real binary exists)
  --copy-to DIR      copy the session log(s) byte-for-byte into DIR
  --bin PATH         client binary (default: $COPILOT_BIN / $CLAUDE_BIN / $QWEN_BIN, else
                     the cache that install.sh fills; `install.sh <host>` is run if it is
                     missing)

Layout created under WORKDIR (which must be absent, empty, or hold only a project/ and/or
home/ dir the caller prepared, e.g. with `judged install-hooks --claude --project
WORKDIR/project`, or a home/.qwen/settings.json with hooks):
  WORKDIR/project/            the client's cwd (scripted commands run here)
  WORKDIR/home/               HOME for the client, with XDG_{CACHE,CONFIG,DATA,STATE}_HOME
                              at their defaults under it
  WORKDIR/home/.copilot/      COPILOT_HOME (Copilot)   WORKDIR/home/.claude/ (Claude Code)
  WORKDIR/home/.qwen/         Qwen Code: settings.json (written here, see below) and
                              projects/<cwd, / -> ->/chats/<sessionId>.jsonl
  WORKDIR/server.jsonl        every model request the server got (debugging)
  WORKDIR/client.stdout, client.stderr

PATH and the rest of the environment are inherited, so scripted commands such as
`judge-evidence ...` resolve from the caller's PATH.  Variables that could point the
client at a real account or another config (ANTHROPIC_*, CLAUDE_*, COPILOT_*, OPENAI_*,
QWEN_*, DASHSCOPE_*, GH_TOKEN, GITHUB_TOKEN, GH_HOST, CLAUDECODE) are dropped first, and HOME
and the XDG base directories are set under WORKDIR/home.

Output (stdout), one per line:
  SESSION_LOG=<absolute path>      (one line per session log found)
  EXIT=<client exit code | timeout>
Exit status: 0 if the client exited 0 and at least one session log was found, else 1.

Scenario keys read here (the rest is for model_server.py):
  "prompt"           the -p prompt (required)
  "root_model"       Copilot: COPILOT_MODEL; Claude Code: --model; Qwen Code: the provider's
                     model id (default qwen3-coder-plus) (optional)
  "timeout"          seconds
  "env"              extra environment for the client ({{workdir}}/{{home}} substituted)
  "claude_settings"  object written to WORKDIR/project/.claude/settings.json
                     ({{workdir}}, {{home}}, {{root}} substituted in strings); merged into
                     a settings.json the caller prepared (hook lists are concatenated)
  "claude_allow"     permissions.allow entries added to .claude/settings.local.json
                     (default ["Bash"]; an existing file is kept and extended)
  "claude_args"      extra Claude Code arguments ({{repo}} is this repository), e.g.
                     ["--plugin-dir", "{{repo}}/plugin"]
  "copilot_args"     extra Copilot CLI arguments, as "claude_args"
  "qwen_settings"    Qwen Code: merged over WORKDIR/home/.qwen/settings.json (a prepared one
                     is kept; hook lists are concatenated), e.g. {"hooks": {"Stop": [...]}}
  "qwen_args"        extra Qwen Code arguments, before the prompt (default run:
                     `qwen --yolo -o json PROMPT`; `-o json` is left out when these name an
                     output format)
  "files"            {relative path: text} created in the project dir before the run
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

DROP_PREFIXES = ("ANTHROPIC_", "CLAUDE_", "COPILOT_", "OPENAI_", "QWEN_", "DASHSCOPE_")
BIN_VARS = {"copilot": "COPILOT_BIN", "claude": "CLAUDE_BIN", "qwen": "QWEN_BIN"}
QWEN_DEFAULT_MODEL = "qwen3-coder-plus"
QWEN_KEY_VAR = "SCRIPTED_OFFLINE_API_KEY"
DROP_NAMES = {"GH_TOKEN", "GITHUB_TOKEN", "GH_HOST", "CLAUDECODE"}


def versions():
    out = {}
    with open(os.path.join(HERE, "versions.env")) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#") and "=" in line:
                k, v = line.split("=", 1)
                out[k.strip()] = v.strip()
    return out


def find_binary(host, explicit):
    if explicit:
        return explicit
    envname = BIN_VARS[host]
    if os.environ.get(envname):
        return os.environ[envname]
    res = subprocess.run(["bash", os.path.join(HERE, "install.sh"), host], stdout=subprocess.PIPE,
                         stderr=sys.stderr, text=True)
    if res.returncode != 0:
        sys.exit("drive.py: install.sh failed")
    for line in res.stdout.splitlines():
        if line.startswith(envname + "="):
            return line.split("=", 1)[1]
    sys.exit("drive.py: install.sh did not print %s" % envname)


def subst(value, mapping):
    if isinstance(value, str):
        for k, v in mapping.items():
            value = value.replace("{{%s}}" % k, v)
        return value
    if isinstance(value, list):
        return [subst(v, mapping) for v in value]
    if isinstance(value, dict):
        return {k: subst(v, mapping) for k, v in value.items()}
    return value


def read_json_object(path):
    """A JSON object from `path`, or {} when the file does not exist."""
    try:
        with open(path) as f:
            value = json.load(f)
    except FileNotFoundError:
        return {}
    if not isinstance(value, dict):
        sys.exit("drive.py: %s is not a JSON object" % path)
    return value


def merge_settings(base, extra):
    """`extra` over `base`; under "hooks" the per-event lists are concatenated."""
    out = dict(base)
    for key, value in extra.items():
        if key == "hooks" and isinstance(out.get("hooks"), dict) and isinstance(value, dict):
            hooks = dict(out["hooks"])
            for event, groups in value.items():
                hooks[event] = list(hooks.get(event) or []) + list(groups)
            out["hooks"] = hooks
        else:
            out[key] = value
    return out


def qwen_settings(base, port, model, extra):
    """Qwen Code's ~/.qwen/settings.json: `base` (a prepared file, or {}) with one OpenAI-compatible
    provider on the scripted server, no usage statistics, telemetry or auto-update, then the
    scenario's `extra` over it (hook lists concatenated)."""
    out = dict(base)
    out["modelProviders"] = dict(out.get("modelProviders") or {}, openai=[
        {"id": model, "name": model, "baseUrl": "http://127.0.0.1:%d/v1" % port, "envKey": QWEN_KEY_VAR}])
    for key, values in (("security", {"auth": {"selectedType": "openai"}}),
                        ("model", {"name": model}),
                        ("general", {"enableAutoUpdate": False}),
                        ("privacy", {"usageStatisticsEnabled": False}),
                        ("telemetry", {"enabled": False})):
        out[key] = dict(out.get(key) or {}, **values)
    return merge_settings(out, extra)


def start_server(scenario_path, workdir, mapping):
    port_file = os.path.join(workdir, "port")
    cmd = [sys.executable, os.path.join(HERE, "model_server.py"), "--scenario", scenario_path,
           "--port-file", port_file, "--log", os.path.join(workdir, "server.jsonl")]
    for k, v in mapping.items():
        cmd += ["--var", "%s=%s" % (k, v)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=open(os.path.join(workdir, "server.stderr"), "w"))
    deadline = time.time() + 15
    while time.time() < deadline:
        if os.path.exists(port_file):
            with open(port_file) as f:
                return proc, int(f.read().strip())
        if proc.poll() is not None:
            sys.exit("drive.py: model server exited early (see %s/server.stderr)" % workdir)
        time.sleep(0.05)
    proc.kill()
    sys.exit("drive.py: model server did not start")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("host", choices=["copilot", "claude", "qwen"])
    ap.add_argument("scenario")
    ap.add_argument("workdir")
    ap.add_argument("--timeout", type=float)
    ap.add_argument("--stand-in", action="store_true")
    ap.add_argument("--copy-to")
    ap.add_argument("--bin")
    args = ap.parse_args()

    scenario_path = os.path.abspath(args.scenario)
    with open(scenario_path) as f:
        scenario = json.load(f)
    workdir = os.path.abspath(args.workdir)
    # WORKDIR may hold a `project/` and a `home/` the caller prepared (e.g. `judged
    # install-hooks --project WORKDIR/project`), and nothing else.
    if os.path.isdir(workdir) and set(os.listdir(workdir)) - {"project", "home"}:
        sys.exit("drive.py: WORKDIR %s holds more than a prepared project/ and home/" % workdir)
    project = os.path.join(workdir, "project")
    home = os.path.join(workdir, "home")
    os.makedirs(project, exist_ok=True)
    os.makedirs(home, exist_ok=True)
    project = os.path.realpath(project)
    home = os.path.realpath(home)
    mapping = {"workdir": project, "home": home, "root": workdir, "repo": REPO}
    if args.host == "copilot":
        mapping["session_root"] = os.path.join(home, ".copilot", "session-state")

    binary = find_binary(args.host, args.bin)
    if not os.access(binary, os.X_OK):
        sys.exit("drive.py: client binary not executable: %s" % binary)

    for rel, text in (scenario.get("files") or {}).items():
        p = os.path.join(project, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(subst(text, mapping))

    env = {k: v for k, v in os.environ.items()
           if not k.startswith(DROP_PREFIXES) and k not in DROP_NAMES}
    # HOME and the XDG base directories at their defaults under it: nothing the client
    # writes beside its logs (Copilot's ~235 MB unpacked package, a device id) lands in
    # the caller's home.
    env["HOME"] = home
    env.update({"XDG_CACHE_HOME": os.path.join(home, ".cache"),
                "XDG_CONFIG_HOME": os.path.join(home, ".config"),
                "XDG_DATA_HOME": os.path.join(home, ".local", "share"),
                "XDG_STATE_HOME": os.path.join(home, ".local", "state")})
    if args.stand_in:
        env["PATH"] = os.path.join(HERE, "stand-in") + os.pathsep + env.get("PATH", "")
    prompt = subst(scenario["prompt"], mapping)
    server, port = start_server(scenario_path, workdir, mapping)
    try:
        if args.host == "copilot":
            copilot_home = os.path.join(home, ".copilot")
            os.makedirs(copilot_home, exist_ok=True)
            env.update({"COPILOT_OFFLINE": "true",
                        "COPILOT_PROVIDER_BASE_URL": "http://127.0.0.1:%d/v1" % port,
                        "COPILOT_MODEL": scenario.get("root_model") or "gpt-5.4",
                        "COPILOT_HOME": copilot_home})
            cmd = [binary, "-p", prompt, "--allow-all-tools", "--allow-all-paths"] + \
                subst(scenario.get("copilot_args") or [], mapping)
            log_root = os.path.join(copilot_home, "session-state")
        elif args.host == "qwen":
            qwen_dir = os.path.join(home, ".qwen")
            os.makedirs(qwen_dir, exist_ok=True)
            path = os.path.join(qwen_dir, "settings.json")
            settings = qwen_settings(read_json_object(path), port, scenario.get("root_model") or QWEN_DEFAULT_MODEL,
                                     subst(scenario.get("qwen_settings") or {}, mapping))
            with open(path + ".tmp", "w") as f:
                json.dump(settings, f, indent=2)
            os.replace(path + ".tmp", path)
            env[QWEN_KEY_VAR] = "scripted-offline-key"
            extra = subst(scenario.get("qwen_args") or [], mapping)
            # `-o json` unless the scenario names an output format (a repeated -o is not
            # overridden: Qwen Code then falls back to text).
            fmt = [] if any(a in ("-o", "--output-format") or a.startswith("--output-format=") for a in extra) \
                else ["-o", "json"]
            cmd = [binary, "--yolo"] + fmt + extra + [prompt]
            log_root = os.path.join(qwen_dir, "projects")
        else:
            claude_dir = os.path.join(home, ".claude")
            os.makedirs(claude_dir, exist_ok=True)
            env.update({"ANTHROPIC_BASE_URL": "http://127.0.0.1:%d" % port,
                        "ANTHROPIC_API_KEY": "scripted-offline-key",
                        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                        "DISABLE_AUTOUPDATER": "1"})
            dot = os.path.join(project, ".claude")
            os.makedirs(dot, exist_ok=True)
            local = read_json_object(os.path.join(dot, "settings.local.json"))
            allow = local.setdefault("permissions", {}).setdefault("allow", [])
            allow.extend(a for a in scenario.get("claude_allow", ["Bash"]) if a not in allow)
            with open(os.path.join(dot, "settings.local.json"), "w") as f:
                json.dump(local, f, indent=2)
            if scenario.get("claude_settings"):
                # Merged into a settings.json the caller prepared (its hooks are kept).
                path = os.path.join(dot, "settings.json")
                with open(path + ".tmp", "w") as f:
                    json.dump(merge_settings(read_json_object(path), subst(scenario["claude_settings"], mapping)),
                              f, indent=2)
                os.replace(path + ".tmp", path)
            cmd = [binary, "-p", prompt] + subst(scenario.get("claude_args") or [], mapping)
            if scenario.get("root_model"):
                cmd += ["--model", scenario["root_model"]]
            log_root = os.path.join(claude_dir, "projects")
        env.update(subst(scenario.get("env") or {}, mapping))

        timeout = args.timeout or scenario.get("timeout") or 120
        with open(os.path.join(workdir, "client.stdout"), "wb") as out, \
                open(os.path.join(workdir, "client.stderr"), "wb") as err:
            proc = subprocess.Popen(cmd, cwd=project, env=env, stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=err, start_new_session=True)
            try:
                rc = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
                rc = "timeout"
    finally:
        server.terminate()
        try:
            server.wait(timeout=5)
        except subprocess.TimeoutExpired:
            server.kill()

    logs, extras = [], []
    if os.path.isdir(log_root):
        for dirpath, _dirs, files in os.walk(log_root):
            for name in files:
                if (args.host == "copilot" and name == "events.jsonl") or \
                        (args.host == "claude" and name.endswith(".jsonl")) or \
                        (args.host == "qwen" and name.endswith(".jsonl")):
                    logs.append(os.path.join(dirpath, name))
                elif args.host == "claude" and name.endswith(".meta.json"):
                    extras.append(os.path.join(dirpath, name))
    logs.sort()
    if args.copy_to and logs:
        # Copilot: <copy-to>/events.jsonl.  Claude Code: the tree below
        # projects/<project>/ (<session>.jsonl, <session>/subagents/agent-*.jsonl + .meta.json).
        # Qwen Code: the tree below projects/<project>/chats/ (<session>.jsonl).
        for p in logs + sorted(extras):
            if args.host == "copilot":
                rel = os.path.basename(p)
            elif args.host == "qwen":
                rel = os.path.relpath(p, log_root).split(os.sep, 1)[1]
                if rel.startswith("chats" + os.sep):
                    rel = rel[len("chats" + os.sep):]
            else:
                rel = os.path.relpath(p, log_root).split(os.sep, 1)[1]
            dest = os.path.join(args.copy_to, rel)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copyfile(p, dest)
    for p in logs:
        print("SESSION_LOG=%s" % p)
    print("EXIT=%s" % rc)
    sys.exit(0 if rc == 0 and logs else 1)


if __name__ == "__main__":
    main()
