//! The proxies the vectors go through, each in front of one recording backend and configured
//! alike: plain HTTP on loopback, one server, and a request header `X-Parsed: METHOD TARGET`
//! written from what the proxy parsed, so that a request reaching the server without it is one
//! the proxy never parsed (a smuggled one).
//!
//! tern is the binary under test. HAProxy and nginx run from the system (`haproxy`, `nginx` on
//! the PATH) for the comparison only; each gets a listening socket made here and passed down as
//! an open descriptor (HAProxy's `bind fd@N`, nginx's `NGINX` variable, which its binary
//! upgrade uses), so no port is ever guessed. Every process is killed by its own handle when
//! the handle drops.

use std::net::{SocketAddr, TcpListener};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use super::support::{temp_dir, Config, Tern};

#[path = "naive.rs"]
mod naive;

/// A proxy under comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Tern,
    Haproxy,
    Nginx,
    /// A proxy written to be unsafe ([`naive`]), to show that the runner catches one.
    Naive,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Tern => "tern",
            Kind::Haproxy => "HAProxy",
            Kind::Nginx => "nginx",
            Kind::Naive => "naive",
        }
    }
}

/// A running proxy; dropping it kills the process and waits for it.
pub enum Running {
    Tern(Box<Tern>),
    Other { addr: SocketAddr, child: Child },
    Naive(naive::Relay),
}

impl Running {
    pub fn addr(&self) -> SocketAddr {
        match self {
            Running::Tern(t) => t.addr(),
            Running::Other { addr, .. } => *addr,
            Running::Naive(relay) => relay.addr,
        }
    }

    /// Kills the proxy and waits for it, so that every connection it had is closed (`Tern`'s
    /// process handle does the same when it drops).
    pub fn kill(self) {
        drop(self);
    }
}

impl std::fmt::Debug for Running {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "proxy on {}", self.addr())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Running::Other { child, .. } = self {
            stop(child);
        }
    }
}

/// Stops a proxy by its own process id: SIGTERM (nginx's master then stops its worker, which
/// a SIGKILL would leave behind), and SIGKILL if it is still there after a few seconds.
fn stop(child: &mut Child) {
    use nix::sys::signal::{kill, Signal};
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).expect("pid"));
    let _ = kill(pid, Signal::SIGTERM);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while std::time::Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Starts `kind` in front of the server at `server`.
pub fn start(kind: Kind, server: SocketAddr) -> Running {
    match kind {
        Kind::Tern => Running::Tern(Box::new(tern(server))),
        Kind::Haproxy => other(server, "haproxy", haproxy_config),
        Kind::Nginx => other(server, "nginx", nginx_config),
        Kind::Naive => Running::Naive(naive::Relay::start(server)),
    }
}

fn tern(server: SocketAddr) -> Tern {
    let marker = r#"http_request = [{ action = "set-header", name = "X-Parsed", value = "%[method] %[url]" }]"#;
    Tern::run(
        &Config::new()
            .server("s1", &server.to_string(), 1)
            .frontend(marker)
            .toml(),
    )
}

/// A configuration for HAProxy or nginx: the listener's address and descriptor, the server,
/// the directory for the files it needs. Returns the file and the command line.
type Configure =
    fn(SocketAddr, i32, SocketAddr, &Path) -> (String, Vec<String>, Vec<(String, String)>);

fn other(server: SocketAddr, program: &str, configure: Configure) -> Running {
    let dir = temp_dir(program);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let fd = listener.as_raw_fd();
    // The child inherits the listening socket: clear close-on-exec on it (this process drops
    // its own copy below; the child's stays open).
    rustix::io::fcntl_setfd(&listener, rustix::io::FdFlags::empty()).unwrap();
    let (config, args, env) = configure(addr, fd, server, &dir);
    let path = dir.join(format!("{program}.conf"));
    std::fs::write(&path, config).unwrap();
    let mut cmd = Command::new(program);
    cmd.args(
        args.iter()
            .map(|a| a.replace("{config}", path.to_str().unwrap())),
    )
    .envs(env)
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(std::fs::File::create(dir.join("stderr.log")).unwrap());
    let child = cmd.spawn().unwrap_or_else(|e| panic!("{program}: {e}"));
    drop(listener);
    wait_ready(addr, program, &dir);
    Running::Other { addr, child }
}

/// Waits until the proxy answers a plain request on `addr` (bounded), so that the first vector
/// does not race the proxy's start.
fn wait_ready(addr: SocketAddr, program: &str, dir: &Path) {
    use std::io::{Read, Write};
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::time::Instant::now() < deadline {
        if let Ok(mut s) = std::net::TcpStream::connect(addr) {
            let _ = s.set_read_timeout(Some(std::time::Duration::from_millis(500)));
            // An empty line and a close: answered (400) or closed once the proxy runs.
            if s.write_all(b"\r\n").is_ok() && s.shutdown(std::net::Shutdown::Write).is_ok() {
                let mut buf = [0u8; 64];
                if s.read(&mut buf).is_ok() {
                    return;
                }
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    panic!(
        "{program} not ready: {}",
        std::fs::read_to_string(dir.join("stderr.log")).unwrap_or_default()
    );
}

fn haproxy_config(
    _addr: SocketAddr,
    fd: i32,
    server: SocketAddr,
    _dir: &Path,
) -> (String, Vec<String>, Vec<(String, String)>) {
    let config = format!(
        "global\n  nbthread 1\n\ndefaults\n  mode http\n  timeout connect 2s\n  timeout client 5s\n  \
         timeout server 5s\n  timeout http-request 5s\n\nfrontend fe\n  bind fd@{fd}\n  \
         http-request set-header X-Parsed \"%[method] %[url]\"\n  default_backend be\n\n\
         backend be\n  server s1 {server}\n"
    );
    let args = vec!["-db".into(), "-f".into(), "{config}".into()];
    (config, args, Vec::new())
}

fn nginx_config(
    addr: SocketAddr,
    fd: i32,
    server: SocketAddr,
    dir: &Path,
) -> (String, Vec<String>, Vec<(String, String)>) {
    let d = dir.display();
    let config = format!(
        "daemon off;\nworker_processes 1;\npid {d}/nginx.pid;\n\
         error_log {d}/error.log;\nevents {{ worker_connections 64; }}\nhttp {{\n  \
         access_log off;\n  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n  \
         fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n  \
         server {{\n    listen {addr};\n    location / {{\n      proxy_pass http://{server};\n      \
         proxy_set_header X-Parsed \"$request_method $request_uri\";\n      \
         proxy_ignore_client_abort on;\n    }}\n  }}\n}}\n"
    );
    let args = vec!["-p".into(), format!("{d}"), "-c".into(), "{config}".into()];
    (config, args, vec![("NGINX".into(), format!("{fd};"))])
}
