//! A real DNS server for the service discovery tests: Debian's BIND 9 (`named`), authoritative
//! for `app.internal` on a loopback port, changed while it runs with `nsupdate` (dynamic
//! updates, as an operator's tooling or a service registry would).

use std::net::{IpAddr, Ipv4Addr, SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::temp_dir;

/// The zone every test serves.
pub const ZONE: &str = "app.internal";

/// A running `named`; killed when dropped.
pub struct Named {
    child: Child,
    pub addr: SocketAddr,
    pub dir: PathBuf,
}

impl Named {
    /// Whether BIND and nsupdate are installed (CI installs them: `.ci/run`).
    pub fn available() -> bool {
        super::have("named") && super::have("nsupdate")
    }

    /// Starts `named` with an empty `app.internal` zone that accepts updates from loopback.
    pub fn start() -> Named {
        Named::start_at(None, Ipv4Addr::LOCALHOST, free_port())
    }

    /// Starts `named` in network namespace `netns` (`None`: this one), listening on
    /// `ip:port`, with an empty `app.internal` zone that accepts updates from anyone (the
    /// namespaces are the test's own).
    pub fn start_at(netns: Option<&str>, ip: Ipv4Addr, port: u16) -> Named {
        let dir = temp_dir("named");
        let d = dir.to_str().unwrap();
        let conf = format!(
            "options {{\n  directory \"{d}\";\n  pid-file \"{d}/named.pid\";\n  \
             session-keyfile \"{d}/session.key\";\n  managed-keys-directory \"{d}\";\n  \
             listen-on port {port} {{ {ip}; }};\n  listen-on-v6 {{ none; }};\n  \
             recursion no;\n  dnssec-validation no;\n  notify no;\n}};\ncontrols {{ }};\n\
             zone \"{ZONE}\" {{ type primary; file \"{d}/zone.db\"; allow-update {{ any; }}; }};\n"
        );
        let zone = format!(
            "$TTL 1\n@ IN SOA ns.{ZONE}. admin.{ZONE}. 1 60 60 600 1\n@ IN NS ns.{ZONE}.\nns IN A 127.0.0.1\n"
        );
        std::fs::write(dir.join("named.conf"), conf).unwrap();
        std::fs::write(dir.join("zone.db"), zone).unwrap();
        let log = std::fs::File::create(dir.join("named.log")).unwrap();
        let mut command = match netns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns, "named"]);
                c
            }
            None => Command::new("named"),
        };
        let child = command
            .args(["-g", "-c"])
            .arg(dir.join("named.conf"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("named starts");
        let named = Named {
            child,
            addr: SocketAddr::from((IpAddr::V4(ip), port)),
            dir,
        };
        named.wait_ready();
        named
    }

    /// Waits (bounded) until the zone is loaded: an update goes through.
    fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if self.try_update(&format!("update add ready.{ZONE}. 1 A 127.0.0.1\n")) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("named did not start: {}", self.log());
    }

    /// Applies nsupdate commands (`update add ...`, `update delete ...`) in one update.
    pub fn update(&self, commands: &str) {
        assert!(
            self.try_update(commands),
            "nsupdate failed: {commands}\n{}",
            self.log()
        );
    }

    fn try_update(&self, commands: &str) -> bool {
        let script = format!(
            "server {} {}\nzone {ZONE}\n{commands}send\n",
            self.addr.ip(),
            self.addr.port()
        );
        let path = self.dir.join("update.txt");
        std::fs::write(&path, script).unwrap();
        Command::new("nsupdate")
            .args(["-t", "3"])
            .arg(&path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("named.log")).unwrap_or_default()
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Named {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopback port free for both UDP and TCP now (named takes it right after).
fn free_port() -> u16 {
    for _ in 0..50 {
        let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
        let port = udp.local_addr().unwrap().port();
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free loopback port");
}

/// `update add` lines for an SRV record of `_http._tcp.app.internal` pointing at `target`
/// (a name in the zone given an A record of 127.0.0.1) on `port`.
pub fn srv_add(target: &str, port: u16, weight: u16) -> String {
    srv_add_at(target, Ipv4Addr::LOCALHOST, port, weight)
}

/// [`srv_add`] with the target's A record at `ip`.
pub fn srv_add_at(target: &str, ip: Ipv4Addr, port: u16, weight: u16) -> String {
    format!(
        "update add {target}.{ZONE}. 1 A {ip}\nupdate add _http._tcp.{ZONE}. 1 SRV 0 {weight} {port} {target}.{ZONE}.\n"
    )
}

/// `update delete` of one SRV record.
pub fn srv_delete(target: &str, port: u16, weight: u16) -> String {
    format!("update delete _http._tcp.{ZONE}. SRV 0 {weight} {port} {target}.{ZONE}.\n")
}
