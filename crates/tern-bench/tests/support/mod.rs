//! Shared helpers for the generator's integration tests: `tern term` backends started in-process
//! on 127.0.0.1 port 0 (plain or TLS with tern's own TLS policy), and a bounded bench run.

#![allow(dead_code, clippy::unwrap_used)]

use std::net::SocketAddr;
use std::sync::Arc;

use tern_bench::{BenchArgs, Report};
use tern_term::{TermHandle, TermOptions};
use tern_tls::KeyKind;

/// Runs `tern bench URL EXTRA…` with short defaults (`-d 0.5 --warmup 0 --timeout 1`) unless
/// the test sets them, prints the report and returns it.
pub fn bench(url: &str, extra: &[&str]) -> Report {
    let report = tern_bench::execute(&args(url, extra)).unwrap();
    println!("{report}");
    report
}

/// The arguments [`bench`] uses.
pub fn args(url: &str, extra: &[&str]) -> BenchArgs {
    let mut argv = vec![url];
    argv.extend_from_slice(extra);
    for (flag, default) in [("-d", "0.5"), ("--warmup", "0"), ("--timeout", "1")] {
        if !extra.contains(&flag) {
            argv.extend([flag, default]);
        }
    }
    BenchArgs::from_args(argv).unwrap()
}

/// A plain-HTTP term with `threads` workers.
pub fn term(threads: usize) -> (TermHandle, SocketAddr) {
    start(TermOptions {
        threads,
        ..TermOptions::new("127.0.0.1:0".parse().unwrap())
    })
}

/// How a TLS term resumes sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resumption {
    /// tern's policy: stateless tickets (TLS 1.3 and 1.2), no session-ID cache.
    Tickets,
    /// A session-ID cache and no tickets (TLS 1.2 session IDs; TLS 1.3 stateful tickets).
    SessionIds,
}

/// A TLS term with a self-signed certificate for "localhost" and tern's server policy
/// (TLS 1.3 and 1.2, ALPN http/1.1), resuming as `resumption` says.
pub fn tls_term(kind: KeyKind, resumption: Resumption) -> (TermHandle, SocketAddr) {
    let cert = tern_tls::self_signed(&["localhost".to_owned()], kind).unwrap();
    let base = tern_tls::server_config_from_keys(vec![cert.certified_key]).unwrap();
    let mut config = (*base).clone();
    if resumption == Resumption::SessionIds {
        config.session_storage = rustls::server::ServerSessionMemoryCache::new(1024);
        config.ticketer = Arc::new(NoTickets);
        config.send_tls13_tickets = 2;
    }
    start(TermOptions {
        tls: Some(Arc::new(config)),
        threads: 2,
        ..TermOptions::new("127.0.0.1:0".parse().unwrap())
    })
}

fn start(opts: TermOptions) -> (TermHandle, SocketAddr) {
    let term = tern_term::start(opts).unwrap();
    let addr = term.local_addrs()[0];
    (term, addr)
}

/// A ticketer that issues no tickets (rustls' default when none is configured).
#[derive(Debug)]
struct NoTickets;

impl rustls::server::ProducesTickets for NoTickets {
    fn enabled(&self) -> bool {
        false
    }

    fn lifetime(&self) -> u32 {
        0
    }

    fn encrypt(&self, _plain: &[u8]) -> Option<Vec<u8>> {
        None
    }

    fn decrypt(&self, _cipher: &[u8]) -> Option<Vec<u8>> {
        None
    }
}

/// A local port with nothing listening on it (it was free a moment ago).
pub fn closed_port() -> SocketAddr {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}
