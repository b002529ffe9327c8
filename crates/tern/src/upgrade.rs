//! Binary upgrade (SIGUSR2 or `tern ctl upgrade`): a new `tern` process takes over the
//! listening sockets, so no connection is refused, and this one drains and exits.
//!
//! The old process starts the binary it was started from (same arguments) with
//! `TERN_UPGRADE_SOCKET` naming a Unix socket in a private directory (mode 0700). The new
//! process connects; the old one checks the peer is its child (SO_PEERCRED), then sends a JSON
//! description of its binds and server states, and the listening sockets themselves (SCM_RIGHTS,
//! in chunks). The new process loads its configuration, starts its workers on the inherited
//! sockets (tern-proxy `handover.rs`, as a reload does) and answers `ok` — or the reason it
//! could not start, and the old process carries on as if nothing happened. After `ok` the old
//! process accepts nothing more, drains its connections for up to `hard_stop_after`, and exits.
//!
//! The connection stays open until the old process exits: the new one refuses another upgrade
//! until it sees the end of it, so there is never more than one old process.

use std::ffi::OsString;
use std::io::{IoSlice, IoSliceMut, Read, Write};
use std::mem::MaybeUninit;
use std::net::SocketAddr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use rustix::net::{
    RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags,
};
use serde::{Deserialize, Serialize};
use tern_proxy::{AdminState, Inherit, InheritedBind, ServerCarry, TablesCarry, TablesImage};

/// The environment variable naming the old process's upgrade socket.
pub const ENV: &str = "TERN_UPGRADE_SOCKET";
/// File descriptors per SCM_RIGHTS message (the kernel's limit is 253).
const FDS_PER_MESSAGE: usize = 64;
/// How long the new process may take to start (certificates to load, workers to start).
const START_LIMIT: Duration = Duration::from_secs(60);
/// Largest JSON message accepted.
const MAX_MESSAGE: u32 = 16 << 20;

#[derive(Debug, Serialize, Deserialize)]
struct WireBind {
    frontend: String,
    configured: SocketAddr,
    address: SocketAddr,
    sockets: usize,
}

#[derive(Debug, Serialize, Deserialize)]
struct WireServer {
    backend: String,
    server: String,
    up: bool,
    admin: String,
    /// The file's `disabled` (absent from older versions: false).
    #[serde(default)]
    disabled: bool,
    weight: Option<u32>,
    address: Option<SocketAddr>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Handover {
    pid: u32,
    binds: Vec<WireBind>,
    servers: Vec<WireServer>,
    /// Whether the control API's HTTP listener follows the binds' sockets (last).
    control_http: bool,
    /// The stick tables (absent from older versions: the new process starts empty and
    /// resyncs from its peers, if any).
    #[serde(default)]
    tables: Option<TablesImage>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Answer {
    ok: bool,
    pid: u32,
    error: Option<String>,
}

fn admin_name(a: AdminState) -> String {
    a.as_str().to_owned()
}

fn admin_from(name: &str) -> AdminState {
    match name {
        "drain" => AdminState::Drain,
        "maint" => AdminState::Maint,
        _ => AdminState::Ready,
    }
}

fn write_message<T: Serialize>(stream: &mut UnixStream, value: &T) -> anyhow::Result<()> {
    let json = serde_json::to_vec(value)?;
    let len = u32::try_from(json.len()).context("message too large")?;
    stream.write_all(&len.to_le_bytes())?;
    stream.write_all(&json)?;
    Ok(())
}

fn read_message<T: for<'de> Deserialize<'de>>(stream: &mut UnixStream) -> anyhow::Result<T> {
    let mut len = [0u8; 4];
    stream.read_exact(&mut len)?;
    let len = u32::from_le_bytes(len);
    if len > MAX_MESSAGE {
        bail!("upgrade message of {len} bytes refused");
    }
    let mut json = vec![0u8; len as usize];
    stream.read_exact(&mut json)?;
    Ok(serde_json::from_slice(&json)?)
}

/// Sends `fds`, in chunks, each attached to one byte.
fn send_fds(stream: &UnixStream, fds: &[BorrowedFd<'_>]) -> anyhow::Result<()> {
    for chunk in fds.chunks(FDS_PER_MESSAGE) {
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(FDS_PER_MESSAGE))];
        let mut control = SendAncillaryBuffer::new(&mut space);
        if !control.push(SendAncillaryMessage::ScmRights(chunk)) {
            bail!("cannot attach {} file descriptors", chunk.len());
        }
        let sent = rustix::net::sendmsg(
            stream,
            &[IoSlice::new(&[1])],
            &mut control,
            SendFlags::empty(),
        )
        .context("sending the listening sockets")?;
        if sent != 1 {
            bail!("short write sending the listening sockets");
        }
    }
    Ok(())
}

/// Receives `count` file descriptors sent by [`send_fds`].
fn receive_fds(stream: &UnixStream, count: usize) -> anyhow::Result<Vec<OwnedFd>> {
    let mut fds = Vec::with_capacity(count);
    while fds.len() < count {
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(FDS_PER_MESSAGE))];
        let mut control = RecvAncillaryBuffer::new(&mut space);
        let mut byte = [0u8; 1];
        let got = rustix::net::recvmsg(
            stream,
            &mut [IoSliceMut::new(&mut byte)],
            &mut control,
            RecvFlags::CMSG_CLOEXEC,
        )
        .context("receiving the listening sockets")?;
        if got.bytes == 0 {
            bail!("the old process closed the connection while sending sockets");
        }
        let before = fds.len();
        for message in control.drain() {
            if let RecvAncillaryMessage::ScmRights(received) = message {
                fds.extend(received);
            }
        }
        if fds.len() == before {
            bail!("a message without file descriptors in the socket handover");
        }
    }
    Ok(fds)
}

/// The new process, on its side of the handover.
#[derive(Debug)]
pub struct Incoming {
    stream: UnixStream,
    /// The old process.
    pub from_pid: u32,
    inherit: Option<Inherit>,
    control_http: Option<std::net::TcpListener>,
}

impl Incoming {
    /// Connects to the old process when started for an upgrade (`TERN_UPGRADE_SOCKET` set) and
    /// receives its sockets and server states.
    pub fn from_env() -> anyhow::Result<Option<Incoming>> {
        let Some(path) = std::env::var_os(ENV) else {
            return Ok(None);
        };
        // Not for the processes this one may start later.
        std::env::remove_var(ENV);
        let mut stream = UnixStream::connect(&path).with_context(|| {
            format!(
                "connecting to the old process at {}",
                Path::new(&path).display()
            )
        })?;
        stream.set_read_timeout(Some(START_LIMIT))?;
        let handover: Handover = read_message(&mut stream)?;
        let total = handover.binds.iter().map(|b| b.sockets).sum::<usize>()
            + usize::from(handover.control_http);
        let mut fds = receive_fds(&stream, total)?.into_iter();
        let listeners = handover
            .binds
            .into_iter()
            .map(|b| InheritedBind {
                frontend: b.frontend,
                configured: b.configured,
                address: b.address,
                sockets: fds
                    .by_ref()
                    .take(b.sockets)
                    .map(std::net::TcpListener::from)
                    .collect(),
            })
            .collect();
        let control_http = fds.next().map(std::net::TcpListener::from);
        let servers = handover
            .servers
            .into_iter()
            .map(|s| ServerCarry {
                backend: s.backend,
                server: s.server,
                up: s.up,
                admin: admin_from(&s.admin),
                disabled: s.disabled,
                weight: s.weight,
                address: s.address,
            })
            .collect();
        Ok(Some(Incoming {
            stream,
            from_pid: handover.pid,
            inherit: Some(Inherit {
                listeners,
                servers,
                sessions: Vec::new(),
                tables: handover.tables.map(TablesCarry::from_image),
            }),
            control_http,
        }))
    }

    /// What the new generation inherits (once).
    pub fn take_inherit(&mut self) -> Inherit {
        self.inherit.take().unwrap_or_default()
    }

    /// The old process's control HTTP listener (once).
    pub fn take_control_http(&mut self) -> Option<std::net::TcpListener> {
        self.control_http.take()
    }

    /// Tells the old process this one could not start: it keeps serving.
    pub fn refuse(mut self, error: &str) {
        let answer = Answer {
            ok: false,
            pid: std::process::id(),
            error: Some(error.to_owned()),
        };
        let _ = write_message(&mut self.stream, &answer);
    }

    /// Tells the old process this one serves; returns the connection, which ends when the old
    /// process exits.
    pub fn ready(mut self) -> anyhow::Result<UnixStream> {
        let answer = Answer {
            ok: true,
            pid: std::process::id(),
            error: None,
        };
        write_message(&mut self.stream, &answer)?;
        self.stream.set_read_timeout(None)?;
        Ok(self.stream)
    }
}

/// Waits on `stream` until the old process has exited (end of stream), then calls `gone`.
pub fn watch_predecessor(mut stream: UnixStream, gone: impl FnOnce() + Send + 'static) {
    std::thread::spawn(move || {
        let mut buf = [0u8; 64];
        while matches!(stream.read(&mut buf), Ok(n) if n > 0) {}
        gone();
    });
}

/// A private directory for the upgrade socket, removed on drop.
struct PrivateDir(PathBuf);

impl PrivateDir {
    fn new() -> anyhow::Result<Self> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!("tern-upgrade-{}-{nanos}", std::process::id()));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .with_context(|| format!("creating {}", dir.display()))?;
        Ok(Self(dir))
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The old process's side: starts `exe args`, hands `inherit` over, and returns the new
/// process's pid and the connection to keep open until this process exits.
pub fn hand_over(
    exe: &Path,
    args: &[OsString],
    inherit: &Inherit,
    control_http: Option<&std::net::TcpListener>,
) -> anyhow::Result<(u32, UnixStream)> {
    let dir = PrivateDir::new()?;
    let path = dir.0.join("upgrade.sock");
    let listener =
        UnixListener::bind(&path).with_context(|| format!("binding {}", path.display()))?;
    listener.set_nonblocking(true)?;
    let mut child = Command::new(exe)
        .args(args)
        .env(ENV, &path)
        .spawn()
        .with_context(|| format!("starting {}", exe.display()))?;
    let child_pid = child.id();
    let deadline = Instant::now() + START_LIMIT;
    let mut stream = loop {
        match listener.accept() {
            Ok((stream, _)) => break stream,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => bail!("accepting the new process's connection: {e}"),
        }
        if let Some(status) = child.try_wait()? {
            bail!("the new process exited before taking over ({status})");
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            bail!("the new process did not connect within {START_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    stream.set_nonblocking(false)?;
    let peer = rustix::net::sockopt::socket_peercred(&stream)?;
    if u32::try_from(peer.pid.as_raw_nonzero().get()).ok() != Some(child_pid) {
        bail!("the upgrade socket was reached by another process");
    }
    stream.set_read_timeout(Some(START_LIMIT))?;
    let binds: Vec<WireBind> = inherit
        .listeners
        .iter()
        .map(|b| WireBind {
            frontend: b.frontend.clone(),
            configured: b.configured,
            address: b.address,
            sockets: b.sockets.len(),
        })
        .collect();
    let servers = inherit
        .servers
        .iter()
        .map(|s| WireServer {
            backend: s.backend.clone(),
            server: s.server.clone(),
            up: s.up,
            admin: admin_name(s.admin),
            disabled: s.disabled,
            weight: s.weight,
            address: s.address,
        })
        .collect();
    let handover = Handover {
        pid: std::process::id(),
        binds,
        servers,
        control_http: control_http.is_some(),
        tables: inherit.tables.as_ref().map(TablesCarry::image),
    };
    write_message(&mut stream, &handover)?;
    let fds: Vec<BorrowedFd<'_>> = inherit
        .listeners
        .iter()
        .flat_map(|b| b.sockets.iter().map(AsFd::as_fd))
        .chain(control_http.map(AsFd::as_fd))
        .collect();
    send_fds(&stream, &fds)?;
    let answer: Answer = read_message(&mut stream).context("waiting for the new process")?;
    if !answer.ok {
        let _ = child.wait();
        bail!(
            "the new process could not start: {}",
            answer.error.unwrap_or_default()
        );
    }
    stream.set_read_timeout(None)?;
    // The child is not waited for: it is the new tern, and outlives this process.
    drop(child);
    Ok((answer.pid, stream))
}
