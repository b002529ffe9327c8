//! The control API on a Unix socket: one command per line, answers framed as `wire.rs` says.
//!
//! Who may connect is decided by the socket file's mode (0600 by default: the user tern runs
//! as); everyone who can connect may run every command. Each connection is bounded: a line may
//! hold [`wire::MAX_LINE`] bytes, must arrive within [`IDLE_TIMEOUT`], and at most
//! [`MAX_CONNECTIONS`] connections are served at once (the next ones get an error answer and
//! are closed). A line too long is answered with an error and the connection is closed, since
//! what follows it cannot be told apart from the rest of that line.
//!
//! Commands run on the blocking pool (`spawn_blocking`), so a slow `reload` does not stall the
//! other connections. The peer's uid and pid (`SO_PEERCRED`) go into the log line of each state
//! change.

use std::io;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::OwnedReadHalf;
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{watch, Semaphore};

use super::exec::{self, Context, Permission};
use super::wire::{self, ERROR_PREFIX, MAX_LINE};

/// Connections served at once.
pub const MAX_CONNECTIONS: usize = 16;
/// Longest wait for a complete command line.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// Longest wait for an answer to be written.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// Accepts connections until `stop` changes.
pub async fn serve(listener: UnixListener, ctx: Context, mut stop: watch::Receiver<bool>) {
    let slots = std::sync::Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let stream = tokio::select! {
            () = super::stopped(&mut stop) => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of file descriptors, usually: wait rather than spin.
                    tracing::warn!("control: accept on the Unix socket failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        match slots.clone().try_acquire_owned() {
            Ok(permit) => {
                let ctx = ctx.clone();
                tokio::spawn(async move {
                    if let Err(e) = connection(stream, ctx).await {
                        tracing::debug!("control: connection ended: {e}");
                    }
                    drop(permit);
                });
            }
            Err(_) => {
                tokio::spawn(refuse(stream));
            }
        }
    }
}

async fn refuse(mut stream: UnixStream) {
    let answer = wire::frame_text(&format!(
        "{ERROR_PREFIX}too many control connections (at most {MAX_CONNECTIONS}); try again"
    ));
    let _ = tokio::time::timeout(WRITE_TIMEOUT, stream.write_all(answer.as_bytes())).await;
}

/// What the peer sent.
#[derive(Debug, PartialEq, Eq)]
enum Line {
    Text(Vec<u8>),
    TooLong,
    Eof,
}

async fn connection(stream: UnixStream, ctx: Context) -> io::Result<()> {
    let origin = origin(&stream);
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::new(read);
    loop {
        let line = match tokio::time::timeout(IDLE_TIMEOUT, read_line(&mut reader)).await {
            Err(_) => {
                let idle = IDLE_TIMEOUT.as_secs();
                let text = format!("{ERROR_PREFIX}no complete command within {idle}s; closing");
                send(&mut write, &wire::frame_text(&text)).await?;
                return Ok(());
            }
            Ok(line) => line?,
        };
        let bytes = match line {
            Line::Eof => return Ok(()),
            Line::TooLong => {
                let text =
                    format!("{ERROR_PREFIX}command line longer than {MAX_LINE} bytes; closing");
                send(&mut write, &wire::frame_text(&text)).await?;
                write.shutdown().await?;
                drain(reader).await;
                return Ok(());
            }
            Line::Text(bytes) => bytes,
        };
        let answer = match String::from_utf8(bytes) {
            Ok(line) => {
                let ctx = ctx.clone();
                let origin = origin.clone();
                tokio::task::spawn_blocking(move || {
                    let (format, result) = exec::answer_line(&ctx, &line, &origin, Permission::All);
                    wire::frame(format, result)
                })
                .await
                .map_err(io::Error::other)?
            }
            Err(_) => wire::frame_text(&format!("{ERROR_PREFIX}the command is not UTF-8 text")),
        };
        send(&mut write, &answer).await?;
    }
}

/// `unix socket (uid 1000, pid 4242)`, for the log.
fn origin(stream: &UnixStream) -> String {
    match stream.peer_cred() {
        Ok(cred) => match cred.pid() {
            Some(pid) => format!("unix socket (uid {}, pid {pid})", cred.uid()),
            None => format!("unix socket (uid {})", cred.uid()),
        },
        Err(_) => "unix socket".to_owned(),
    }
}

async fn send(write: &mut tokio::net::unix::OwnedWriteHalf, answer: &str) -> io::Result<()> {
    tokio::time::timeout(WRITE_TIMEOUT, write.write_all(answer.as_bytes()))
        .await
        .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "the client does not read"))?
}

/// Reads one line of at most [`MAX_LINE`] bytes; a last line without `\n` counts.
async fn read_line(reader: &mut BufReader<OwnedReadHalf>) -> io::Result<Line> {
    let mut buf = Vec::new();
    let limit = MAX_LINE as u64;
    let n = (&mut *reader)
        .take(limit + 1)
        .read_until(b'\n', &mut buf)
        .await?;
    if n == 0 {
        return Ok(Line::Eof);
    }
    if buf.last() == Some(&b'\n') {
        if buf.len() > MAX_LINE {
            return Ok(Line::TooLong);
        }
        buf.pop();
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
        return Ok(Line::Text(buf));
    }
    if buf.len() > MAX_LINE {
        return Ok(Line::TooLong);
    }
    Ok(Line::Text(buf))
}

/// Reads and drops what the peer still sends (bounded), so that closing does not reset the
/// connection before the peer has read the error answer.
async fn drain(mut reader: BufReader<OwnedReadHalf>) {
    let mut sink = [0u8; 4096];
    let mut left: usize = 1 << 20;
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        while left > 0 {
            match reader.read(&mut sink).await {
                Ok(0) | Err(_) => break,
                Ok(n) => left = left.saturating_sub(n),
            }
        }
    })
    .await;
}
