//! Picking the server of a request: the persistent one if it is up, else the worker's balancer's
//! choice, skipping servers at their `maxconn` and those that already failed this request; when
//! every usable server is full, the request waits in the backend's queue for a slot.
//!
//! Protocol-neutral but for one thing: hashing algorithms read their key (path, query, a
//! header) from the request's parsed HTTP/1.1 head ([`tern_h1::RequestHead`]) in
//! [`crate::exchange::balance::Balancers::pick`]; a second protocol is to hand its own head to
//! the key reader there (`Need::context`). A TCP connection has no request and hands none:
//! only the source address can be hashed (`tcp.rs`).

use std::net::IpAddr;

use tern_balance::NoServer;
use tern_h1::RequestHead;

use crate::exchange::balance::{InFlight, Placement, Refusal};
use crate::stats::bump;
use crate::worker::Worker;

/// A server of `backend` for the request (its head and buffer; `None` for a TCP connection),
/// from `client`: the persistent one of `placement` if it is up, else the algorithm's choice,
/// avoiding the servers `placement` says; when every usable server is full, a slot from the
/// queue.
pub(crate) async fn pick_server(
    w: &Worker,
    backend: usize,
    request: Option<(&RequestHead, &[u8])>,
    client: IpAddr,
    placement: Placement<'_>,
) -> Result<InFlight, Refusal> {
    let balancers = &w.balancers;
    let Placement {
        persist,
        avoid: failed,
    } = placement;
    let mut picked = balancers.pick(backend, request, client, placement);
    if matches!(picked, Err(NoServer::Full)) && !failed.is_empty() {
        // Every usable server already failed this request: try them again rather than give up
        // (a single-server backend retries its server, as with `redispatch = false`).
        let again = Placement {
            persist,
            avoid: &[],
        };
        picked = balancers.pick(backend, request, client, again);
    }
    match picked {
        Ok(picked) => Ok(picked),
        Err(NoServer::Down) => Err(Refusal::Down),
        Err(NoServer::Full) => {
            let want = persist.filter(|p| !failed.contains(p));
            let rebalance = || {
                let placement = Placement {
                    persist: None,
                    avoid: failed,
                };
                balancers.pick(backend, request, client, placement)
            };
            let waited = queue(w, backend, want, rebalance).await;
            let bc = &w.stats.backends[backend];
            match waited {
                Err(Refusal::QueueFull) => bump(&bc.queue_full),
                Err(Refusal::QueueTimeout) => {
                    bump(&bc.queued);
                    bump(&bc.queue_timeouts);
                }
                _ => bump(&bc.queued),
            }
            waited
        }
    }
}

/// Waits in the backend's queue for a slot of `want` (the persistent server) or of any server.
/// When the persistent server goes down meanwhile, the request is balanced normally
/// (`rebalance`), and waits again, for any server, if all are still full.
async fn queue(
    w: &Worker,
    backend: usize,
    want: Option<usize>,
    rebalance: impl FnOnce() -> Result<InFlight, NoServer>,
) -> Result<InFlight, Refusal> {
    let timeout = w.shared.backend(backend).queue.timeout;
    let waited = w.balancers.wait(backend, want, timeout).await;
    if waited.as_ref().err() != Some(&Refusal::Moved) {
        return waited;
    }
    // Its persistent server went down while it waited: balance it normally.
    match rebalance() {
        Ok(picked) => Ok(picked),
        Err(NoServer::Down) => Err(Refusal::Down),
        Err(NoServer::Full) => w.balancers.wait(backend, None, timeout).await,
    }
}

/// HAProxy's termination state of a request no server could take.
pub(crate) fn refusal_state(refusal: &Refusal) -> [u8; 2] {
    match refusal {
        Refusal::QueueFull => *b"PQ",
        Refusal::QueueTimeout => *b"sQ",
        Refusal::Down | Refusal::Moved => *b"SC",
    }
}
