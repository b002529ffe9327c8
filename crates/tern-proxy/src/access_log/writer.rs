//! The writer thread: takes records off the bounded queue, formats them, and does the I/O.
//!
//! Stream targets (stdout, stderr, a file) get the lines of a batch in one `write`; syslog
//! targets get one datagram per line, each with its syslog header. A failed write loses the
//! lines of that batch (counted as `failed`, logged once until writes succeed again); the
//! writer never stops.
//!
//! Waking: the thread blocks on the queue when it is idle, so a quiet proxy costs nothing.
//! When lines keep coming, it sleeps [`POLL`] between batches instead of blocking: a blocked
//! receiver makes every send wake it (a futex call on the worker), while a polling one is
//! never woken, so a busy worker's send stays a copy into the queue.
//!
//! A file is opened for appending (mode 0640, created if needed). [`super::AccessLog::reopen`]
//! asks for it to be opened again before the next write (log rotation by renaming); with
//! `copytruncate` rotation nothing is needed, since appends land at the new end of the file.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::net::{SocketAddr, UdpSocket};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tern_config::{LogFormat, LogTarget, SyslogFraming, SyslogSettings};
use tracing::warn;

use super::format::{self, Civil};
use super::record::Record;
use super::LogCounters;

/// Most lines formatted into one write.
const MAX_BATCH: usize = 256;
/// The pause between batches while lines keep coming (see the module docs).
const POLL: Duration = Duration::from_millis(1);

/// What the queue carries. A line is held inline in its queue slot, so that handing one over
/// allocates nothing (the queue's slots are allocated once, at start).
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub(crate) enum Msg {
    Line(Record),
    /// Write everything queued before this, then answer.
    Flush(mpsc::Sender<()>),
}

/// Where lines are written.
#[derive(Debug)]
pub(crate) enum Output {
    Stdout,
    Stderr,
    File { path: PathBuf, file: File },
    Udp(UdpSocket),
    Unix { path: PathBuf, socket: UnixDatagram },
}

impl Output {
    /// Opens `target` (at start-up, so that a wrong path is an error then).
    pub(crate) fn open(target: &LogTarget) -> io::Result<Self> {
        Ok(match target {
            LogTarget::Stdout => Self::Stdout,
            LogTarget::Stderr => Self::Stderr,
            LogTarget::File(path) => Self::File {
                path: path.clone(),
                file: open_file(path)?,
            },
            LogTarget::Udp(addr) => Self::Udp(udp_socket(*addr)?),
            LogTarget::Unix(path) => Self::Unix {
                path: path.clone(),
                socket: unix_socket(path)?,
            },
        })
    }

    fn is_datagram(&self) -> bool {
        matches!(self, Self::Udp(_) | Self::Unix { .. })
    }

    /// Opens the file again, or connects the Unix socket again; others have nothing to do.
    fn reopen(&mut self) -> io::Result<()> {
        match self {
            Self::File { path, file } => *file = open_file(path)?,
            Self::Unix { path, socket } => *socket = unix_socket(path)?,
            Self::Stdout | Self::Stderr | Self::Udp(_) => {}
        }
        Ok(())
    }

    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Self::Stdout => {
                let mut out = io::stdout().lock();
                out.write_all(bytes)?;
                out.flush()
            }
            Self::Stderr => io::stderr().lock().write_all(bytes),
            Self::File { file, .. } => file.write_all(bytes),
            Self::Udp(socket) => socket.send(bytes).map(drop),
            Self::Unix { path, socket } => match socket.send(bytes) {
                Ok(_) => Ok(()),
                // The syslog daemon restarted: its socket is a new one.
                Err(_) => {
                    *socket = unix_socket(path)?;
                    socket.send(bytes).map(drop)
                }
            },
        }
    }
}

fn open_file(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o640)
        .open(path)
}

fn udp_socket(addr: SocketAddr) -> io::Result<UdpSocket> {
    let local: SocketAddr = if addr.is_ipv4() {
        ([0, 0, 0, 0], 0).into()
    } else {
        ([0u16; 8], 0).into()
    };
    let socket = UdpSocket::bind(local)?;
    socket.connect(addr)?;
    Ok(socket)
}

fn unix_socket(path: &Path) -> io::Result<UnixDatagram> {
    let socket = UnixDatagram::unbound()?;
    socket.connect(path)?;
    Ok(socket)
}

/// The syslog header of each datagram.
#[derive(Debug)]
struct Syslog {
    framing: SyslogFraming,
    /// The facility, times 8 (`<PRI>` is this plus the line's severity).
    facility: u16,
    tag: String,
    pid: u32,
    /// RFC 5424 HOSTNAME (`-` when unknown).
    host: String,
}

impl Syslog {
    fn new(settings: &SyslogSettings) -> Self {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .map(|h| h.trim().to_owned())
            .filter(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_graphic()))
            .unwrap_or_else(|| "-".to_owned());
        Self {
            framing: settings.framing,
            facility: u16::from(settings.facility) * 8,
            tag: settings.tag.clone(),
            pid: std::process::id(),
            host,
        }
    }

    /// Appends the header of a message of `severity` sent at `now`.
    fn header(&self, now: SystemTime, severity: u8, out: &mut Vec<u8>) {
        let _ = write!(out, "<{}>", self.facility + u16::from(severity.min(7)));
        let civil = Civil::of(now);
        match self.framing {
            SyslogFraming::Rfc3164 => {
                civil.write_rfc3164(out);
                let _ = write!(out, " {}[{}]: ", self.tag, self.pid);
            }
            SyslogFraming::Rfc5424 => {
                out.extend_from_slice(b"1 ");
                civil.write_rfc3339(out);
                let _ = write!(out, " {} {} {} - - ", self.host, self.tag, self.pid);
            }
        }
    }
}

/// The writer thread's state.
#[derive(Debug)]
pub(crate) struct Writer {
    pub rx: Receiver<Msg>,
    pub output: Output,
    pub format: LogFormat,
    syslog: Option<Syslog>,
    pub counters: Arc<LogCounters>,
    pub reopen: Arc<AtomicBool>,
    /// Lines of the batch being built (stream targets), or one datagram.
    buf: Vec<u8>,
    /// Lines in `buf`.
    pending: u64,
    /// The last write failed (logged once until one succeeds).
    failing: bool,
}

impl Writer {
    pub(crate) fn new(
        rx: Receiver<Msg>,
        output: Output,
        format: LogFormat,
        syslog: &SyslogSettings,
        counters: Arc<LogCounters>,
        reopen: Arc<AtomicBool>,
    ) -> Self {
        let syslog = output.is_datagram().then(|| Syslog::new(syslog));
        Self {
            rx,
            output,
            format,
            syslog,
            counters,
            reopen,
            buf: Vec::with_capacity(64 * 1024),
            pending: 0,
            failing: false,
        }
    }

    /// Runs until every [`super::AccessLog`] handle is gone and the queue is empty.
    pub(crate) fn run(mut self) {
        let mut idle = true;
        loop {
            let first = if idle {
                match self.rx.recv() {
                    Ok(msg) => msg,
                    Err(_) => return,
                }
            } else {
                match self.rx.try_recv() {
                    Ok(msg) => msg,
                    Err(TryRecvError::Empty) => {
                        idle = true;
                        continue;
                    }
                    Err(TryRecvError::Disconnected) => return,
                }
            };
            let mut taken = 1;
            self.take(first);
            while taken < MAX_BATCH {
                match self.rx.try_recv() {
                    Ok(msg) => self.take(msg),
                    Err(_) => break,
                }
                taken += 1;
            }
            self.write_pending();
            idle = match taken {
                MAX_BATCH => false,
                1 => true,
                _ => {
                    std::thread::sleep(POLL);
                    false
                }
            };
        }
    }

    fn take(&mut self, msg: Msg) {
        match msg {
            Msg::Line(record) => self.line(&record),
            Msg::Flush(done) => {
                self.write_pending();
                let _ = done.send(());
            }
        }
    }

    /// Formats one line: into the batch, or sent at once as a datagram.
    fn line(&mut self, record: &Record) {
        if let Some(syslog) = &self.syslog {
            syslog.header(SystemTime::now(), record.severity, &mut self.buf);
        }
        let template = record.extra.as_deref().and_then(|e| e.format.as_deref());
        match (template, self.format) {
            (Some(template), _) => super::template::render(template, record, &mut self.buf),
            (None, LogFormat::Text) => format::text(record, &mut self.buf),
            (None, LogFormat::Json) => format::json(record, &mut self.buf),
        }
        self.pending += 1;
        if self.syslog.is_some() {
            self.write_pending();
        } else {
            self.buf.push(b'\n');
        }
    }

    /// Writes the lines formatted so far and counts them.
    fn write_pending(&mut self) {
        if self.pending == 0 {
            return;
        }
        let lines = std::mem::take(&mut self.pending);
        if self.reopen.swap(false, Ordering::AcqRel) {
            if let Err(e) = self.output.reopen() {
                warn!(error = %e, "access log: cannot reopen the target, keeping the old one");
            }
        }
        let result = self.output.write_all(&self.buf);
        self.buf.clear();
        match result {
            Ok(()) => {
                self.counters.written.fetch_add(lines, Ordering::Relaxed);
                self.failing = false;
            }
            Err(e) => {
                self.counters.failed.fetch_add(lines, Ordering::Relaxed);
                if !std::mem::replace(&mut self.failing, true) {
                    warn!(error = %e, "access log: write failed; lines are lost until it works again");
                }
            }
        }
    }
}
