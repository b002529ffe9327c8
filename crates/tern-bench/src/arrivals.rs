//! The open loop: requests arrive at a fixed rate whatever the server does, and each one's
//! latency is measured from its *intended* start time.
//!
//! Why: a closed loop waits for slow responses before sending more, so the requests that would
//! have queued behind a stall are never sent and the stall shows as one slow sample
//! (coordinated omission). Here a scheduler produces arrivals at evenly spaced intended times
//! ([`Schedule`]); each arrival takes an idle connection, or opens one while the thread is under
//! its connection cap (its share of `-c`), or else waits in a FIFO queue for the next connection
//! to come free. Its latency runs from the intended time, so scheduler lateness, queueing,
//! connecting and the server's time all count. An arrival still queued when its `--timeout`
//! has passed since its intended time is a timeout error, never a latency sample.
//!
//! The scheduler sleeps on a precise timer ([`Timer`]) so arrivals leave on time even at low
//! rates; when it falls behind (the thread is saturated) it sends the overdue arrivals in
//! batches, still with their intended times.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::time::{Duration, Instant};

use crate::conn::{open, request, Conn, Ctx, Outcome};
use crate::plan::Timeline;
use crate::stats::ErrorKind;
use crate::timer::Timer;

/// Arrivals dispatched in one go before the scheduler lets the connections run.
const BATCH: usize = 64;

/// Intended start times of one thread's arrivals.
#[derive(Debug, Clone)]
pub struct Schedule {
    timeline: Timeline,
    /// Arrivals per second of this thread at full load.
    rate: f64,
    /// Seconds from the timeline's start to the next arrival.
    next: f64,
}

impl Schedule {
    /// `rate` arrivals per second, the first `phase` seconds after the start; during the ramp
    /// the rate is scaled by [`Timeline::level`].
    pub fn new(timeline: Timeline, rate: f64, phase: f64) -> Self {
        Self {
            timeline,
            rate,
            next: phase,
        }
    }

    /// The next intended start time.
    pub fn next_arrival(&mut self) -> Instant {
        let at = self.timeline.start + Duration::from_secs_f64(self.next);
        self.next += 1.0 / (self.rate * self.timeline.level(at));
        at
    }
}

/// One thread's connections and waiting arrivals.
#[derive(Debug)]
struct Pool {
    /// Connections waiting for a request, most recently used last.
    idle: Vec<Conn>,
    /// Connections open or opening (idle included).
    slots: u32,
    /// The cap on `slots`.
    cap: u32,
    /// Intended start times of arrivals waiting for a connection.
    queue: VecDeque<Instant>,
}

/// The open loop of one thread; what remains queued at the end is handled by
/// [`OpenLoop::finish`]. Clones share the same pool.
#[derive(Debug, Clone)]
pub(crate) struct OpenLoop {
    pool: Rc<RefCell<Pool>>,
}

impl OpenLoop {
    /// An open loop of at most `cap` connections.
    pub fn new(cap: u32) -> Self {
        Self {
            pool: Rc::new(RefCell::new(Pool {
                idle: Vec::new(),
                slots: 0,
                cap: cap.max(1),
                queue: VecDeque::new(),
            })),
        }
    }

    /// Runs the scheduler until the end of the run (spawns one task per busy connection).
    pub async fn run(&self, ctx: Rc<Ctx>, mut schedule: Schedule) {
        let timer = Timer::new();
        let end = ctx.plan.timeline.end;
        let mut next = schedule.next_arrival();
        while next < end {
            timer.sleep_until(next).await;
            let mut sent = 0;
            while next < end && next <= Instant::now() && sent < BATCH {
                self.arrive(&ctx, next);
                next = schedule.next_arrival();
                sent += 1;
            }
            if sent == BATCH {
                // Behind schedule: let the connections run before the next batch.
                tokio::task::yield_now().await;
            }
        }
    }

    /// Counts the arrivals still queued whose time limit has passed by `now` as timeouts
    /// (those within their limit are abandoned, like requests in flight at the deadline).
    pub fn finish(&self, ctx: &Ctx, now: Instant) {
        let timeout = ctx.plan.timeout;
        let queue = std::mem::take(&mut self.pool.borrow_mut().queue);
        for intended in queue {
            let limit = intended + timeout;
            if limit <= now {
                ctx.fail(ErrorKind::Timeout, limit);
            }
        }
    }

    /// An arrival: an idle connection, a new one under the cap, or the queue.
    fn arrive(&self, ctx: &Rc<Ctx>, intended: Instant) {
        let mut pool = self.pool.borrow_mut();
        let conn = take_idle(&mut pool);
        if conn.is_none() && pool.slots >= pool.cap {
            expire(ctx, &mut pool.queue, Instant::now());
            pool.queue.push_back(intended);
            return;
        }
        if conn.is_none() {
            pool.slots += 1;
        }
        drop(pool);
        tokio::task::spawn_local(serve(ctx.clone(), self.pool.clone(), conn, intended));
    }
}

/// The most recently used idle connection the server has not closed; closed ones free their
/// slot.
fn take_idle(pool: &mut Pool) -> Option<Conn> {
    while let Some(mut conn) = pool.idle.pop() {
        if conn.reusable() {
            return Some(conn);
        }
        pool.slots -= 1;
    }
    None
}

/// Drops the queued arrivals whose time limit has passed, counting them as timeouts.
fn expire(ctx: &Ctx, queue: &mut VecDeque<Instant>, now: Instant) {
    let timeout = ctx.plan.timeout;
    while let Some(&intended) = queue.front() {
        let limit = intended + timeout;
        if limit > now {
            break;
        }
        queue.pop_front();
        ctx.fail(ErrorKind::Timeout, limit);
    }
}

/// Serves an arrival on `conn` (or a new connection in a slot already reserved), then the queued
/// arrivals one after another; finally parks the connection as idle or frees the slot.
///
/// An arrival's time limit runs from its intended time, and decides whether it counts as a
/// timeout. The connection's I/O gets `--timeout` from when it starts: behind schedule, the
/// arrivals taken from the queue have little time left, and cutting their connect, handshake or
/// exchange at that limit would close connection after connection, so that a client once
/// behind would spend itself on new handshakes and never catch up (a soak at half the measured
/// capacity fell to 10 responses/s that way, at 1,900 new connections/s).
async fn serve(ctx: Rc<Ctx>, pool: Rc<RefCell<Pool>>, mut conn: Option<Conn>, first: Instant) {
    let timeout = ctx.plan.timeout;
    let mut intended = first;
    loop {
        let late = intended + timeout;
        if Instant::now() >= late {
            ctx.fail(ErrorKind::Timeout, late);
        } else {
            if conn.is_none() {
                conn = open(&ctx, Instant::now() + timeout).await;
            }
            if let Some(c) = conn.as_mut() {
                let limit = Instant::now() + timeout;
                if request(&ctx, c, intended, limit, late).await != Outcome::KeepAlive {
                    conn = None;
                }
            }
        }
        let mut p = pool.borrow_mut();
        expire(&ctx, &mut p.queue, Instant::now());
        match p.queue.pop_front() {
            Some(next) => intended = next,
            None => {
                match conn {
                    Some(c) => p.idle.push(c),
                    None => p.slots -= 1,
                }
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests;
