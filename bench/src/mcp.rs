//! `judged mcp` as a host drives it: one server over its stdio, `tools/call review` on a
//! tree changed before each call (so that the jury convenes each time), and
//! `tools/call gate_status` round trips.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

/// A running `judged mcp`, initialized.
pub struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Server {
    /// Start `judged mcp` for the daemon of `home`, in `project`, and initialize it.
    pub fn start(judged: &Path, home: &Path, project: &Path) -> Server {
        let mut child = Command::new(judged)
            .arg("mcp")
            .env("JUDGED_HOME", home)
            .current_dir(project)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("judged mcp starts");
        let stdin = child.stdin.take().expect("piped");
        let stdout = BufReader::new(child.stdout.take().expect("piped"));
        let mut server = Server { child, stdin, stdout, next_id: 1 };
        let init = json!({
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "judged-bench", "version": "0"},
        });
        server.call("initialize", init);
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").expect("judged mcp reads");
        self.stdin.flush().expect("judged mcp reads");
    }

    /// One request, and the time to its answer (notifications before it are read past).
    pub fn call(&mut self, method: &str, params: Value) -> (f64, Value) {
        let id = self.next_id;
        self.next_id += 1;
        let started = Instant::now();
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(self.stdout.read_line(&mut line).expect("judged mcp answers") > 0, "judged mcp closed");
            let message: Value = serde_json::from_str(&line).expect("judged mcp speaks JSON-RPC");
            if message["id"] == id {
                let result = message.get("result").cloned().unwrap_or_else(|| panic!("{method} failed: {message}"));
                return (started.elapsed().as_secs_f64() * 1000.0, result);
            }
        }
    }

    /// `tools/call` of `tool` with `arguments`: its time and structured result.
    pub fn tool(&mut self, tool: &str, arguments: Value) -> (f64, Value) {
        let (ms, result) = self.call("tools/call", json!({"name": tool, "arguments": arguments}));
        assert_ne!(result["isError"], true, "{tool} refused: {result}");
        (ms, result["structuredContent"].clone())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
