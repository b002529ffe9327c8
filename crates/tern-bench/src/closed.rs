//! The closed loop: a fixed number of clients, each sending its next request as soon as the
//! previous one ends.
//!
//! Closed-loop load finds capacity (the most the server does at a concurrency) but hides
//! queueing: a slow response delays the next request instead of piling up behind it. Latency
//! here is measured from each request's actual start; use the open loop (`--rate`) to report
//! latency at a given load.

use std::rc::Rc;
use std::time::Instant;

use crate::conn::{open, request, Ctx, Outcome};

/// One closed-loop client: waits for its stair of the ramp, then connections one after another
/// until the thread is stopped. A request's latency includes the connect and handshake it
/// waited for.
pub(crate) async fn client(ctx: Rc<Ctx>, begin: Instant) {
    tokio::time::sleep_until(begin.into()).await;
    let timeout = ctx.plan.timeout;
    loop {
        let mut started = Instant::now();
        let Some(mut conn) = open(&ctx, started + timeout).await else {
            if ctx.plan.control.stopped() {
                return;
            }
            // A refused connection returns at once: give the other tasks a turn.
            tokio::task::yield_now().await;
            continue;
        };
        while request(
            &ctx,
            &mut conn,
            started,
            started + timeout,
            started + timeout,
        )
        .await
            == Outcome::KeepAlive
        {
            started = Instant::now();
        }
    }
}
