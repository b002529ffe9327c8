//! One active health check: connect, optionally handshake TLS and exchange one HTTP request
//! (HTTP/1.1 in `http.rs`, HTTP/2 in `h2.rs`), and report what happened as a [`CheckResult`].
//!
//! The outcome's code mirrors HAProxy's check status codes (`L4OK`, `L7STS`, ...) so operators
//! read tern's logs the way they read HAProxy's: the layer that failed and how. The whole check
//! runs under one deadline (`check.timeout`), and a timeout is reported at the layer it hit
//! (`L4TOUT` while connecting, `L6TOUT` in the handshake, `L7TOUT` waiting for the response).
//!
//! A probe never trusts the server: every read goes into a fixed buffer (16 KiB for the
//! response head, 16 KiB of body kept for the `expect_body` search), the number of interim
//! responses and of body bytes read is capped, and every error becomes an outcome, not a panic.
//! The response is parsed with tern's own codec (`tern-h1`), so a check judges a server's
//! answer exactly as the proxy path would.
//!
//! A server that expects a PROXY protocol header on its traffic port expects one on checks of
//! that port too (HAProxy sends it on checks of a `send-proxy` server that have no `port` or
//! `addr` of their own): the caller says when, and the probe sends a header saying the
//! connection is the proxy's own (v2 LOCAL, v1 UNKNOWN) right after the connect.

#[doc(hidden)]
pub mod fuzz;
mod h2;
mod http;

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::ServerName;
use rustls::ClientConfig;
use tern_config::{Check, CheckKind};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::{timeout_at, Instant};
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

use crate::exchange::proxy_header::Proxied;

/// What a check found, by layer, as HAProxy names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum CheckCode {
    /// Connected, and nothing more was asked (`type = "tcp"`).
    L4Ok,
    /// The connect did not complete in time.
    L4Tout,
    /// The connect failed: refused, reset, unreachable.
    L4Con,
    /// The TLS handshake completed, and no HTTP request was asked.
    L6Ok,
    /// The TLS handshake did not complete in time.
    L6Tout,
    /// The TLS handshake failed (not TLS, an alert, a bad certificate signature), or a TLS error
    /// broke the connection afterwards.
    L6Rsp,
    /// The HTTP status is one of `expect_status` and the body, if asked, contains
    /// `expect_body`.
    L7Ok,
    /// No complete response in time.
    L7Tout,
    /// The response is not valid HTTP/1.x, or the connection ended before it did.
    L7Rsp,
    /// A valid response whose status is not one of `expect_status`.
    L7Sts,
    /// A valid response with an expected status whose first 16 KiB of body do not contain
    /// `expect_body`. HAProxy reports this as `L7RSP` ("content mismatch"); tern names it apart
    /// so a wrong page is not mistaken for a broken server.
    L7Body,
    /// The connection failed after it was established (reset, broken pipe) (HAProxy's
    /// `SOCKERR`).
    SockErr,
}

impl CheckCode {
    /// The code as HAProxy spells it, for logs and the stats page.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            CheckCode::L4Ok => "L4OK",
            CheckCode::L4Tout => "L4TOUT",
            CheckCode::L4Con => "L4CON",
            CheckCode::L6Ok => "L6OK",
            CheckCode::L6Tout => "L6TOUT",
            CheckCode::L6Rsp => "L6RSP",
            CheckCode::L7Ok => "L7OK",
            CheckCode::L7Tout => "L7TOUT",
            CheckCode::L7Rsp => "L7RSP",
            CheckCode::L7Sts => "L7STS",
            CheckCode::L7Body => "L7BODY",
            CheckCode::SockErr => "SOCKERR",
        }
    }

    /// Whether the check passed.
    pub(crate) fn passed(self) -> bool {
        matches!(self, CheckCode::L4Ok | CheckCode::L6Ok | CheckCode::L7Ok)
    }

    /// Whether the server answered something that was judged (the time it took is worth
    /// logging); timeouts say their limit and connection errors have no useful time.
    fn answered(self) -> bool {
        matches!(
            self,
            CheckCode::L4Ok
                | CheckCode::L6Ok
                | CheckCode::L7Ok
                | CheckCode::L7Sts
                | CheckCode::L7Body
        )
    }
}

impl fmt::Display for CheckCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The result of one check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CheckResult {
    pub passed: bool,
    pub code: CheckCode,
    /// A short text for logs, e.g. `L7STS: status 500 (expected 200-399) in 3 ms`.
    pub detail: String,
    /// From the start of the connect to the verdict.
    pub took: Duration,
}

/// A code and the text explaining it, before timing is added.
#[derive(Debug)]
struct Finding {
    code: CheckCode,
    text: String,
}

impl Finding {
    fn new(code: CheckCode, text: impl Into<String>) -> Self {
        Finding {
            code,
            text: text.into(),
        }
    }
}

/// Runs one check of `check.address` as `check.kind` says, within `check.timeout`. `tls` is the
/// client configuration of TLS checks (the caller's choice whether it verifies certificates);
/// `proxy`, the PROXY protocol version to open the connection with, if any.
pub(crate) async fn probe(
    check: &Check,
    tls: &Arc<ClientConfig>,
    proxy: Option<Proxied<'static>>,
) -> CheckResult {
    let start = Instant::now();
    let deadline = start + check.timeout;
    let verdict = match run(check, tls, proxy, deadline).await {
        Ok(v) | Err(v) => v,
    };
    let took = start.elapsed();
    let mut detail = format!("{}: {}", verdict.code, verdict.text);
    if verdict.code.answered() {
        detail.push_str(&format!(" in {} ms", took.as_millis()));
    }
    CheckResult {
        passed: verdict.code.passed(),
        code: verdict.code,
        detail,
        took,
    }
}

/// The check's steps; `Err` is a verdict reached early (a failure).
async fn run(
    check: &Check,
    tls: &Arc<ClientConfig>,
    proxy: Option<Proxied<'static>>,
    deadline: Instant,
) -> Result<Finding, Finding> {
    let limit = check.timeout;
    let mut tcp = match timeout_at(deadline, TcpStream::connect(check.address)).await {
        Err(_) => return Err(timed_out(CheckCode::L4Tout, "connect", limit)),
        Ok(Err(e)) => return Err(Finding::new(CheckCode::L4Con, io_text(&e))),
        Ok(Ok(tcp)) => tcp,
    };
    if let Some(proxied) = proxy {
        let header = proxied.header();
        match timeout_at(deadline, tcp.write_all(&header)).await {
            Err(_) => return Err(timed_out(CheckCode::L4Tout, "PROXY header", limit)),
            Ok(Err(e)) => {
                let text = format!("sending the PROXY header: {}", io_text(&e));
                return Err(Finding::new(CheckCode::SockErr, text));
            }
            Ok(Ok(())) => {}
        }
    }
    match &check.kind {
        CheckKind::Tcp => Ok(Finding::new(CheckCode::L4Ok, "connected")),
        CheckKind::Http(req) if req.h2 => {
            let authority = h2::authority(req, check.address);
            h2::exchange(tcp, req, &authority, deadline, limit).await
        }
        CheckKind::Http(req) => http::exchange(&mut tcp, req, check.address, deadline, limit).await,
        CheckKind::Tls { sni, http: req } => {
            let h2 = req.as_ref().is_some_and(|req| req.h2);
            let config = if h2 { &offering_h2(tls) } else { tls };
            let mut stream =
                handshake(tcp, sni.as_deref(), config, check.address, deadline, limit).await?;
            if let Some(req) = req.as_ref().filter(|req| req.h2) {
                let authority = h2::authority(req, check.address);
                return h2::exchange(stream, req, &authority, deadline, limit).await;
            }
            let verdict = match req {
                None => Ok(Finding::new(
                    CheckCode::L6Ok,
                    session_text(stream.get_ref().1),
                )),
                Some(req) => http::exchange(&mut stream, req, check.address, deadline, limit).await,
            };
            // Best effort: close_notify, so the server sees a clean end of the session; then read
            // until the server's own close, which also takes in the TLS 1.3 session ticket sent
            // after the handshake, so the next check resumes instead of doing a full handshake.
            let _ = timeout_at(deadline, stream.shutdown()).await;
            drain_until_close(&mut stream, deadline).await;
            verdict
        }
    }
}

/// `config` offering only `h2` in ALPN, for an HTTP/2 check over TLS (the session cache stays
/// shared).
fn offering_h2(config: &Arc<ClientConfig>) -> Arc<ClientConfig> {
    let mut own = (**config).clone();
    own.alpn_protocols = vec![b"h2".to_vec()];
    Arc::new(own)
}

/// How long a finished check waits for the server's close (and its session ticket).
const CLOSE_WAIT: Duration = Duration::from_millis(200);

/// Reads what the server still sends until it closes, for at most [`CLOSE_WAIT`] (and never
/// past the check's deadline): a server that keeps the connection open costs the check no
/// more than that, and the verdict is already made.
async fn drain_until_close(stream: &mut TlsStream<TcpStream>, deadline: Instant) {
    let until = deadline.min(Instant::now() + CLOSE_WAIT);
    let mut sink = [0u8; 1024];
    // Bounded by `until`: every read either makes progress, ends, or times out.
    while let Ok(Ok(n)) = timeout_at(until, stream.read(&mut sink)).await {
        if n == 0 {
            break;
        }
    }
}

/// The TLS handshake on `tcp`, with `sni` as the server name or, without one, the IP address
/// (for which rustls sends no SNI).
async fn handshake(
    tcp: TcpStream,
    sni: Option<&str>,
    config: &Arc<ClientConfig>,
    address: SocketAddr,
    deadline: Instant,
    limit: Duration,
) -> Result<TlsStream<TcpStream>, Finding> {
    let name = match sni {
        Some(sni) => ServerName::try_from(sni.to_owned())
            .map_err(|_| Finding::new(CheckCode::L6Rsp, format!("invalid server name {sni:?}")))?,
        None => ServerName::from(address.ip()),
    };
    let connector = TlsConnector::from(Arc::clone(config));
    match timeout_at(deadline, connector.connect(name, tcp)).await {
        Err(_) => Err(timed_out(CheckCode::L6Tout, "TLS handshake", limit)),
        Ok(Err(e)) => Err(Finding::new(
            CheckCode::L6Rsp,
            format!("TLS handshake failed: {}", io_text(&e)),
        )),
        Ok(Ok(stream)) => Ok(stream),
    }
}

/// The negotiated session for the check's detail, marked when it was resumed (servers with
/// `tls` share their session cache with the checks).
fn session_text(conn: &rustls::ClientConnection) -> String {
    let mut text = tern_tls::describe(conn);
    if conn.handshake_kind() == Some(rustls::HandshakeKind::Resumed) {
        text.push_str(" resumed");
    }
    text
}

/// The check's deadline passed during `step`; `limit` is the whole check's timeout.
fn timed_out(code: CheckCode, step: &str, limit: Duration) -> Finding {
    Finding::new(
        code,
        format!(
            "timeout during {step} (check timeout {} ms)",
            limit.as_millis()
        ),
    )
}

/// An I/O error as a short text: `Connection refused` rather than
/// `Connection refused (os error 111)`.
fn io_text(e: &io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error ") {
        Some(at) if e.raw_os_error().is_some() => text[..at].to_owned(),
        _ => text,
    }
}

#[cfg(test)]
mod tests;
