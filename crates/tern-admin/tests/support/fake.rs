//! A fake proxy behind the `Control` trait that records every state change, and small blocking
//! clients for the Unix socket and the HTTP listener.

#![allow(dead_code, clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use tern_admin::{AdminState, Control, ControlError, Info, ServerSpec, View};
use tern_config::{Config, ControlSettings};
use tern_proxy::stats::{ServerStatus, StatsSnapshot};

pub const TOKEN: &str = "0123456789abcdef-token";

const CONFIG: &str = r#"
[[frontend]]
name = "web"
bind = ["127.0.0.1:0"]
default_backend = "app"

[[backend]]
name = "app"
servers = [
  { name = "s1", address = "127.0.0.1:8081" },
  { name = "s2", address = "127.0.0.1:8082", weight = 3 },
]

[[backend]]
name = "other"
servers = [ { name = "o1", address = "127.0.0.1:9001" } ]
"#;

/// A proxy that changes nothing but remembers what it was asked.
pub struct FakeControl {
    pub config: Arc<Config>,
    calls: Mutex<Vec<String>>,
}

impl FakeControl {
    pub fn new() -> Arc<Self> {
        let config = tern_config::parse(CONFIG, Path::new("/etc/tern/tern.toml")).unwrap();
        Arc::new(Self {
            config: Arc::new(config),
            calls: Mutex::new(Vec::new()),
        })
    }

    /// The state-changing calls so far, as `method backend/server args`.
    pub fn calls(&self) -> Vec<String> {
        self.calls.lock().unwrap().clone()
    }

    fn record(&self, call: String) {
        self.calls.lock().unwrap().push(call);
    }

    fn find(&self, backend: &str, server: &str) -> Result<(), ControlError> {
        let b = self
            .config
            .backends
            .iter()
            .find(|b| b.name == backend)
            .ok_or_else(|| ControlError::UnknownBackend(backend.to_owned()))?;
        if b.servers.iter().any(|s| s.name == server) {
            Ok(())
        } else {
            Err(ControlError::UnknownServer {
                backend: backend.to_owned(),
                server: server.to_owned(),
            })
        }
    }
}

impl Control for FakeControl {
    fn info(&self) -> Info {
        Info {
            version: "0.1.0-fake".into(),
            pid: 4242,
            started: SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000),
            uptime: Duration::from_secs(3723),
            workers: 2,
            generation: 1,
            draining_generations: 0,
            connections: 7,
            profiling: false,
            crypto_batch: None,
        }
    }

    fn view(&self) -> View {
        let status = |weight| ServerStatus {
            up: true,
            weight,
            active: 0,
            admin: AdminState::Ready,
            configured_weight: weight,
            address: None,
            unresolved: false,
        };
        let mut stats = StatsSnapshot {
            frontends: vec![Default::default()],
            backends: vec![Default::default(), Default::default()],
            servers: vec![vec![Default::default(); 2], vec![Default::default()]],
            status: vec![vec![status(1), status(3)], vec![status(1)]],
            ..StatsSnapshot::default()
        };
        stats.frontends[0].sessions = 10;
        stats.frontends[0].requests = 25;
        stats.servers[0][1].requests = 25;
        View {
            info: self.info(),
            config: self.config.clone(),
            stats,
        }
    }

    fn set_admin(
        &self,
        backend: &str,
        server: &str,
        state: AdminState,
    ) -> Result<(), ControlError> {
        self.find(backend, server)?;
        self.record(format!("set_admin {backend}/{server} {}", state.as_str()));
        Ok(())
    }

    fn set_weight(&self, backend: &str, server: &str, weight: u32) -> Result<(), ControlError> {
        self.find(backend, server)?;
        self.record(format!("set_weight {backend}/{server} {weight}"));
        Ok(())
    }

    fn set_addr(&self, backend: &str, server: &str, addr: SocketAddr) -> Result<(), ControlError> {
        self.find(backend, server)?;
        self.record(format!("set_addr {backend}/{server} {addr}"));
        Ok(())
    }

    fn add_server(&self, backend: &str, spec: ServerSpec) -> Result<(), ControlError> {
        if self.find(backend, &spec.name).is_ok() {
            return Err(ControlError::Invalid(format!(
                "backend '{backend}' already has a server named '{}'",
                spec.name
            )));
        }
        self.record(format!(
            "add_server {backend}/{} {}",
            spec.name, spec.address
        ));
        Ok(())
    }

    fn del_server(&self, backend: &str, server: &str) -> Result<(), ControlError> {
        self.find(backend, server)?;
        Err(ControlError::Invalid(format!(
            "server {backend}/{server} is not in maintenance: disable it first"
        )))
    }

    fn tls(&self) -> serde_json::Value {
        serde_json::json!([{ "frontend": "web", "certificates": [] }])
    }

    fn reload(&self) -> Result<String, ControlError> {
        self.record("reload".into());
        Ok("configuration reloaded: generation 2".into())
    }

    fn upgrade(&self) -> Result<String, ControlError> {
        Err(ControlError::Failed("the fake cannot upgrade".into()))
    }

    fn set_profiling(&self, on: bool) {
        self.record(format!("set_profiling {on}"));
    }

    fn profiling(&self) -> String {
        "kind  calls\naccept  3\n\nrequest  9\n".into()
    }
}

/// A fresh directory for one test's socket.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tern-admin-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Settings for a socket in `dir`, no HTTP.
pub fn socket_settings(dir: &Path) -> ControlSettings {
    ControlSettings {
        socket: Some(dir.join("tern.sock")),
        ..ControlSettings::default()
    }
}

/// Settings for an HTTP listener on an ephemeral port, with or without the token.
pub fn http_settings(token: bool) -> ControlSettings {
    ControlSettings {
        http: Some("127.0.0.1:0".parse().unwrap()),
        token: token.then(|| tern_config::ControlToken::new(TOKEN).unwrap()),
        ..ControlSettings::default()
    }
}

/// A connection to the control socket, reading answers up to their empty end line.
pub struct Session {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
}

impl Session {
    pub fn connect(path: &Path) -> Self {
        let stream = UnixStream::connect(path).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        Self {
            writer: stream.try_clone().unwrap(),
            reader: BufReader::new(stream),
        }
    }

    pub fn send(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).unwrap();
    }

    /// Closes the sending side (end of input), keeping the answers readable.
    pub fn finish(&mut self) {
        self.writer.shutdown(std::net::Shutdown::Write).unwrap();
    }

    /// The next answer's lines; `None` at end of stream.
    pub fn answer(&mut self) -> Option<Vec<String>> {
        let mut lines = Vec::new();
        loop {
            let mut line = String::new();
            if self.reader.read_line(&mut line).unwrap() == 0 {
                return if lines.is_empty() { None } else { Some(lines) };
            }
            let line = line.trim_end_matches('\n');
            if line.is_empty() {
                return Some(lines);
            }
            lines.push(line.to_owned());
        }
    }

    /// Sends one command and returns its answer as text.
    pub fn ask(&mut self, line: &str) -> String {
        self.send(format!("{line}\n").as_bytes());
        self.answer().expect("an answer").join("\n")
    }
}

/// A plain HTTP/1.1 exchange (`Connection: close`): status, lower-cased headers, body.
pub struct HttpReply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl HttpReply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

pub fn http(addr: SocketAddr, method: &str, path: &str, extra: &str, body: &str) -> HttpReply {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {}\r\n{extra}\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").expect("an HTTP response");
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    HttpReply {
        status,
        headers,
        body: body.to_owned(),
    }
}
