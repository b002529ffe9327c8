//! systemd's readiness protocol (`sd_notify`), so that a `Type=notify` unit knows when tern
//! serves, when it reloads, and which process is the main one after a binary upgrade
//! (`MAINPID=`, which needs `NotifyAccess=all`: see dist/tern.service).
//!
//! Without `NOTIFY_SOCKET` in the environment (not under systemd) every call does nothing.
//! Failures are logged at debug level and otherwise ignored: readiness reporting must never
//! stop tern from serving.

use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram};

/// Sends `state` (e.g. `"READY=1"`) to systemd, if tern runs under it.
pub fn notify(state: &str) {
    let Some(path) = std::env::var_os("NOTIFY_SOCKET") else {
        return;
    };
    let bytes = path.as_encoded_bytes();
    let addr = match bytes.strip_prefix(b"@") {
        Some(name) => SocketAddr::from_abstract_name(name),
        None => SocketAddr::from_pathname(&path),
    };
    let sent = addr.and_then(|addr| UnixDatagram::unbound()?.send_to_addr(state.as_bytes(), &addr));
    if let Err(e) = sent {
        tracing::debug!(error = %e, state, "sd_notify failed");
    }
}

/// Ready to serve; with `main`, this process becomes the unit's main process (an upgrade).
pub fn ready(main: bool) {
    if main {
        notify(&format!("MAINPID={}\nREADY=1", std::process::id()));
    } else {
        notify("READY=1");
    }
}

/// A reload starts (`RELOADING=1` with the monotonic time systemd asks for), or ended.
pub fn reloading(on: bool) {
    if on {
        let usec = monotonic_usec();
        notify(&format!("RELOADING=1\nMONOTONIC_USEC={usec}"));
    } else {
        notify("READY=1");
    }
}

/// Stopping.
pub fn stopping() {
    notify("STOPPING=1");
}

/// CLOCK_MONOTONIC in microseconds (std's `Instant` does not expose its value).
fn monotonic_usec() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    u64::try_from(t.tv_sec).unwrap_or(0) * 1_000_000 + u64::try_from(t.tv_nsec).unwrap_or(0) / 1_000
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn messages_reach_the_notify_socket() {
        let dir = std::env::temp_dir().join(format!("tern-notify-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("notify.sock");
        let _ = std::fs::remove_file(&path);
        let socket = UnixDatagram::bind(&path).unwrap();
        socket
            .set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        std::env::set_var("NOTIFY_SOCKET", &path);
        ready(true);
        let mut buf = [0u8; 256];
        let n = socket.recv(&mut buf).unwrap();
        let text = std::str::from_utf8(&buf[..n]).unwrap();
        assert_eq!(text, format!("MAINPID={}\nREADY=1", std::process::id()));
        reloading(true);
        let n = socket.recv(&mut buf).unwrap();
        assert!(std::str::from_utf8(&buf[..n])
            .unwrap()
            .starts_with("RELOADING=1\nMONOTONIC_USEC="));
        std::env::remove_var("NOTIFY_SOCKET");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
