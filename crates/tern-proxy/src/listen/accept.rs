//! The accept loop of one listening socket, run by a worker (plain binds, and TLS binds without
//! handshake offload) or by its handshake offload thread (TLS binds with it, `tls/offload.rs`).
//!
//! The loop takes the connection slots (global and frontend `maxconn`) right after `accept`,
//! pauses a TLS listener while the handshake rate cap's waiting room is full, and picks up a
//! reloaded TLS configuration between accepts; what happens to the connection next is the
//! [`Acceptor`]'s business.

use std::net::SocketAddr;
use std::rc::Rc;
use std::time::{Duration, Instant};

use tokio::net::{TcpListener, TcpStream};

use crate::lifecycle::Lifecycle;
use crate::listen::accept_failures::Failures;
use crate::listen::proxy_in::Expect;
use crate::stats::bump;
use crate::tls::admission::Admission;
use crate::tls::engines::BindTls;
use crate::tls::handshake::Handshakes;
use crate::tls::reload::TlsSlot;
use crate::worker::Permits;

/// A connection just accepted, with its slots.
#[derive(Debug)]
pub(crate) struct Accepted {
    pub frontend: usize,
    pub stream: TcpStream,
    pub peer: SocketAddr,
    /// The bind's TLS (either engine) at accept time; `None` for a plain bind.
    pub tls: Option<BindTls>,
    /// Whether a PROXY protocol header comes first (the bind's `accept_proxy`, for this
    /// connection's source).
    pub accept_proxy: bool,
    pub permits: Permits,
}

/// A thread that accepts connections and serves (part of) them.
pub(crate) trait Acceptor: 'static {
    fn life(&self) -> &Lifecycle;
    /// The shared state, this thread's counters and the handshake rate caps applied to its TLS
    /// listeners.
    fn handshakes(&self) -> Handshakes<'_>;
    /// Takes the connection over (spawns its task).
    fn take(self: &Rc<Self>, conn: Accepted);
}

/// Accepts on `listener` until the thread stops.
pub(crate) async fn run<A: Acceptor>(
    a: Rc<A>,
    frontend: usize,
    listener: TcpListener,
    mut slot: Option<TlsSlot>,
    expect: Expect,
) {
    // The configuration handed to each accepted connection; a reload swaps it here, between
    // accepts, so connections already accepted keep theirs (tls/reload.rs).
    let mut tls: Option<BindTls> = slot.as_mut().and_then(TlsSlot::current);
    // While too many handshakes wait for the rate cap, stop accepting on TLS listeners: new
    // connections wait in the kernel's accept queue (tls/admission.rs).
    let capped = tls.is_some()
        && a.handshakes()
            .admission
            .is_some_and(Admission::has_rate_cap);
    let mut failures = Failures::default();
    loop {
        if capped {
            if let Some(adm) = a.handshakes().admission {
                tokio::select! {
                    biased;
                    () = a.life().stopping() => return,
                    () = adm.room() => {}
                }
            }
        }
        let accepted = tokio::select! {
            biased;
            () = a.life().stopping() => return,
            reloaded = reloaded(&mut slot) => {
                match slot.as_mut().filter(|_| reloaded).and_then(TlsSlot::current) {
                    Some(fresh) => tls = Some(fresh),
                    // No reload can come any more: stop watching (the set in use stays).
                    None if !reloaded => slot = None,
                    // A TLS bind never turns plain.
                    None => {}
                }
                continue;
            }
            r = listener.accept() => r,
        };
        let name = || a.handshakes().shared.frontend(frontend).name.as_str();
        let (stream, peer) = match accepted {
            Ok(got) => got,
            Err(e) => {
                // Out of file descriptors or memory: back off instead of spinning on accept,
                // and say so once per run of failures, not at every retry.
                failures.failed(name(), &e, Instant::now());
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        if failures.active() {
            failures.accepted(name(), Instant::now());
        }
        // Accept first, then wait for a slot while holding just this one connection: a thread
        // that waited for a slot *before* accepting would keep one reserved while idle, and
        // connections the kernel hashes to another worker could wait behind it indefinitely.
        // Beyond the limit, each listener holds at most one accepted connection; the rest wait
        // in the kernel backlog.
        let permits = tokio::select! {
            biased;
            () = a.life().stopping() => return,
            p = a.handshakes().shared.admit(frontend) => match p { Some(p) => p, None => return },
        };
        bump(&a.handshakes().stats.frontends[frontend].sessions);
        a.take(Accepted {
            frontend,
            stream,
            peer,
            tls: tls.clone(),
            accept_proxy: expect.from(peer.ip()),
            permits,
        });
    }
}

/// Resolves when a reload swapped the listener's TLS configuration (`true`) or none can come any
/// more (`false`); never for a plain listener.
async fn reloaded(slot: &mut Option<TlsSlot>) -> bool {
    match slot {
        Some(slot) => slot.changed().await,
        None => std::future::pending().await,
    }
}
