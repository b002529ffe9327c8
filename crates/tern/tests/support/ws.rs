//! The WebSocket echo server of the tunnel tests (tests/clients/ws_echo_server.py, on Python's
//! `websockets`), shared by the HTTP/1.1 and the HTTP/2 (RFC 8441) WebSocket tests.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

/// The path of a client or server script under tests/clients.
pub fn client_script(name: &str) -> String {
    format!("{}/tests/clients/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Runs the Python client script `name` with `args` to its end; its stdout lines (it must
/// succeed, else the test fails with its output).
pub fn run_client(name: &str, args: &[&str]) -> Vec<String> {
    let out = Command::new("python3")
        .arg(client_script(name))
        .args(args)
        .output()
        .expect("python3 runs (with `h2` and `websockets`: .ci/run installs them)");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    println!("{stdout}");
    assert!(
        out.status.success(),
        "{name} {args:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout.lines().map(str::to_owned).collect()
}

/// The JSON lines of an access log file.
pub fn json_log_lines(path: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The Python echo server, killed on drop.
pub struct EchoServer {
    child: Child,
    lines: Receiver<String>,
    pub addr: SocketAddr,
}

impl EchoServer {
    pub fn start() -> EchoServer {
        let mut child = Command::new("python3")
            .arg(client_script("ws_echo_server.py"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3 runs (the tests need it and `websockets`: .ci/run installs them)");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let first = lines
            .recv_timeout(Duration::from_secs(20))
            .expect("the echo server printed no port (is `websockets` installed?)");
        let port: u16 = first
            .strip_prefix("port ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("unexpected first line: {first}"));
        EchoServer {
            child,
            lines,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
        }
    }

    /// Waits for the line the server prints when a connection ends.
    pub fn closed_line(&self) -> String {
        self.lines
            .recv_timeout(Duration::from_secs(10))
            .expect("the echo server printed no close line")
    }
}

impl Drop for EchoServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
