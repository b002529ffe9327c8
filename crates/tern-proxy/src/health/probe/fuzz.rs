//! The HTTP part of a check run on any byte stream, for the `health_reply` fuzz target
//! (`crates/tern-fuzz/src/health.rs`): what a server answers a check is read by the same code
//! as on a real check, HTTP/1.1 (`http.rs`: tern-h1's response parser, interim responses, the
//! body framing and the incremental `expect_body` search) or HTTP/2 (`h2.rs`: the `h2` crate
//! as a client with the check's settings, then the same judgement), without a socket or a
//! schedule.
//!
//! Public (hidden from the docs) only so that the fuzz crate can reach it; nothing else calls
//! it.

use std::net::SocketAddr;
use std::time::Duration;

use tern_config::HttpCheck;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::Instant;

/// A check's verdict on a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// HAProxy's check code (`L7OK`, `L7STS`, `L7RSP`, ...).
    pub code: &'static str,
    /// Whether the check passed.
    pub passed: bool,
    /// The detail logged with it.
    pub text: String,
}

/// Sends `check`'s request on `io` (the server's side answers) and judges the reply within
/// `limit`, as a check of a server at `address` does.
pub async fn judge<S>(io: S, check: &HttpCheck, address: SocketAddr, limit: Duration) -> Verdict
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let deadline = Instant::now() + limit;
    let finding = if check.h2 {
        let authority = super::h2::authority(check, address);
        super::h2::exchange(io, check, &authority, deadline, limit).await
    } else {
        let mut io = io;
        super::http::exchange(&mut io, check, address, deadline, limit).await
    };
    let (Ok(f) | Err(f)) = finding;
    Verdict {
        code: f.code.as_str(),
        passed: f.code.passed(),
        text: f.text,
    }
}
