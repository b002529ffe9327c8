//! Client threads: each is pinned (optionally) and runs a tokio current-thread runtime with its
//! share of the load as local tasks.
//!
//! There is no work stealing and nothing shared on the per-request path but the read-only
//! [`Plan`], so threads scale like the server's shared-nothing workers. A thread ends at the
//! run's deadline or as soon as the run is stopped (Ctrl-C, a failed thread, a resumed
//! handshake): its tasks are dropped, so requests in flight then are abandoned, not counted.
//! Once a second a ticker task samples the open connections into the per-second series and
//! publishes the thread's whole-run counters for the live progress line.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::arrivals::{OpenLoop, Schedule};
use crate::conn::Ctx;
use crate::plan::{Load, Plan};
use crate::stats::{Live, Stats};
use crate::tls::ClientTls;
use crate::BenchError;
use crate::{closed, http2};

/// One thread's part of the load.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Share {
    /// Index of the thread among its plan's threads.
    pub index: u32,
    /// Threads of the plan.
    pub of: u32,
    /// Connections (closed loop) or the connection cap (open loop).
    pub connections: u32,
    /// CPU to pin the thread to.
    pub cpu: Option<usize>,
}

/// A thread's whole-run counters as last published (read by the supervisor once a second).
#[derive(Debug, Default)]
pub(crate) struct Published {
    requests: AtomicU64,
    connections: AtomicU64,
    errors: AtomicU64,
    bytes: AtomicU64,
    active: AtomicU64,
}

impl Published {
    fn publish(&self, live: &Live) {
        self.requests.store(live.requests, Ordering::Relaxed);
        self.connections.store(live.connections, Ordering::Relaxed);
        self.errors.store(live.errors, Ordering::Relaxed);
        self.bytes.store(live.bytes, Ordering::Relaxed);
        self.active.store(live.active, Ordering::Relaxed);
    }

    /// The counters last published.
    pub fn read(&self) -> Live {
        Live {
            requests: self.requests.load(Ordering::Relaxed),
            connections: self.connections.load(Ordering::Relaxed),
            errors: self.errors.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
            active: self.active.load(Ordering::Relaxed),
        }
    }
}

/// Runs one client thread to the end of the run; a failure stops the whole run.
pub(crate) fn thread_main(
    plan: Arc<Plan>,
    share: Share,
    published: Arc<Published>,
) -> Result<Stats, BenchError> {
    let result = drive(&plan, share, &published);
    if result.is_err() {
        plan.control.request_stop();
    }
    result
}

fn drive(plan: &Arc<Plan>, share: Share, published: &Arc<Published>) -> Result<Stats, BenchError> {
    if let Some(id) = share.cpu {
        if !core_affinity::set_for_current(core_affinity::CoreId { id }) {
            return Err(BenchError::Pin(id));
        }
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(BenchError::Thread)?;
    let timeline = plan.timeline;
    let ctx = Rc::new(Ctx {
        plan: plan.clone(),
        stats: RefCell::new(Stats::new(timeline.window_start, timeline.end)),
        tls: plan.tls.as_ref().and_then(ClientTls::for_thread),
        buffers: RefCell::new(Vec::new()),
    });
    let open_loop = OpenLoop::new(share.connections);
    let local = tokio::task::LocalSet::new();
    let mut stop = plan.control.subscribe();
    local.block_on(&runtime, async {
        match plan.load {
            Load::Closed => {
                for j in 0..share.connections {
                    let begin = timeline.client_start(j, share.connections);
                    match &plan.h2 {
                        None => tokio::task::spawn_local(closed::client(ctx.clone(), begin)),
                        Some(h2) => {
                            let client = http2::client(ctx.clone(), begin, h2.clone());
                            tokio::task::spawn_local(client)
                        }
                    };
                }
            }
            Load::Open { rate } => {
                let per_thread = rate / f64::from(share.of);
                // Threads take turns: the whole run's arrivals are evenly spaced.
                let phase = f64::from(share.index) / rate;
                let schedule = Schedule::new(timeline, per_thread, phase);
                let (ctx, open_loop) = (ctx.clone(), open_loop.clone());
                tokio::task::spawn_local(async move { open_loop.run(ctx, schedule).await });
            }
        }
        tokio::task::spawn_local(ticker(ctx.clone(), published.clone()));
        tokio::select! {
            _ = tokio::time::sleep_until(timeline.end.into()) => {}
            _ = stop.wait_for(|&stopped| stopped) => {}
        }
        if Instant::now() >= timeline.end {
            ctx.stats.borrow_mut().sample_active(timeline.end);
        }
    });
    // Dropping the tasks closes their connections and releases their handles on `ctx`.
    drop(local);
    open_loop.finish(&ctx, Instant::now().min(timeline.end));
    drop(open_loop);
    let mut stats = ctx.stats.borrow().clone();
    stats.live.active = 0;
    published.publish(&stats.live);
    Ok(stats)
}

/// Once a second (aligned to whole seconds from the window's start): samples the open
/// connections and publishes the whole-run counters.
async fn ticker(ctx: Rc<Ctx>, published: Arc<Published>) {
    let mut tick = ctx.plan.timeline.first_tick();
    loop {
        tokio::time::sleep_until(tick.into()).await;
        let mut stats = ctx.stats.borrow_mut();
        stats.sample_active(Instant::now());
        published.publish(&stats.live);
        drop(stats);
        tick += Duration::from_secs(1);
    }
}
