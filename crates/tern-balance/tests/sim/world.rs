//! The simulated world: one balancer, the health, slow-start, queue and stickiness state around
//! it, and the event loop over virtual time. Request handling is in `requests`, server state
//! (checks, passive errors, transitions, ramps) in `servers`.

mod requests;
mod servers;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use tern_balance::{
    spread, Balancer, Health, Nanos, Queue, ServerId, ServerSpec, StickTable, Ticket,
};

use super::config::Config;
use super::ensure;
use super::model::{Ramp, Streak, Waiting};
use super::rng::{fold, Rng};

/// Events beyond which a run is considered stuck.
const MAX_EVENTS: usize = 200_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    Arrive,
    Check { server: ServerId, generation: u64 },
    Ramp { server: ServerId, generation: u64 },
    Finish { server: ServerId, request: u64 },
    Abort { request: u64 },
}

/// What happened in a run; the trace hash covers every event and pick, so equal stats from
/// the same seed mean the same run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    pub trace: u64,
    pub events: u64,
    pub arrived: u64,
    pub served: u64,
    pub queued: u64,
    pub served_from_queue: u64,
    pub pinned_served: u64,
    pub timeouts: u64,
    pub queue_full: u64,
    pub no_server: u64,
    pub aborted: u64,
    pub drained: u64,
    pub transitions: u64,
    pub ramps_done: u64,
}

impl Stats {
    pub fn add(&mut self, o: &Stats) {
        self.trace = fold(self.trace, o.trace);
        self.events += o.events;
        self.arrived += o.arrived;
        self.served += o.served;
        self.queued += o.queued;
        self.served_from_queue += o.served_from_queue;
        self.pinned_served += o.pinned_served;
        self.timeouts += o.timeouts;
        self.queue_full += o.queue_full;
        self.no_server += o.no_server;
        self.aborted += o.aborted;
        self.drained += o.drained;
        self.transitions += o.transitions;
        self.ramps_done += o.ramps_done;
    }
}

#[derive(Debug, Clone, Copy)]
struct Request {
    key: Option<u32>,
    service: Nanos,
    ticket: Option<Ticket>,
}

pub struct World {
    cfg: Config,
    rng: Rng,
    now: Nanos,
    seq: u64,
    events: BinaryHeap<Reverse<(Nanos, u64, Event)>>,
    balancer: Balancer,
    health: Vec<Health>,
    streak: Vec<Streak>,
    check_generation: Vec<u64>,
    up: Vec<bool>,
    ramp: Vec<Ramp>,
    errors: Vec<u32>,
    inflight: Vec<u32>,
    queue: Queue<u64>,
    waiting: Waiting,
    requests: HashMap<u64, Request>,
    next_request: u64,
    stick: StickTable<u32>,
    stats: Stats,
}

impl World {
    pub fn new(cfg: Config, rng: Rng) -> Result<Self, String> {
        let specs: Vec<ServerSpec> = cfg
            .servers
            .iter()
            .map(|s| {
                let spec = ServerSpec::new(s.weight).maxconn(s.maxconn);
                if s.backup {
                    spec.backup()
                } else {
                    spec
                }
            })
            .collect();
        let seed = rng.clone().next_u64();
        let balancer =
            Balancer::new(cfg.method.clone(), &specs, seed).map_err(|e| e.to_string())?;
        let n = cfg.servers.len();
        let mut world = Self {
            balancer,
            health: cfg.servers.iter().map(|s| Health::new(s.health)).collect(),
            streak: cfg
                .servers
                .iter()
                .map(|s| Streak::new(s.health.rise, s.health.fall))
                .collect(),
            check_generation: vec![0; n],
            up: vec![true; n],
            ramp: vec![Ramp::default(); n],
            errors: vec![0; n],
            inflight: vec![0; n],
            queue: Queue::new(cfg.queue_max),
            waiting: Waiting::default(),
            requests: HashMap::new(),
            next_request: 0,
            stick: StickTable::new(cfg.stick_size, cfg.stick_expire),
            stats: Stats::default(),
            now: 0,
            seq: 0,
            events: BinaryHeap::new(),
            rng,
            cfg,
        };
        for s in 0..n {
            let first = spread(s, n, world.cfg.servers[s].health.interval);
            world.at(
                as_nanos(first),
                Event::Check {
                    server: s,
                    generation: 0,
                },
            );
        }
        world.at(world.cfg.arrival_gap, Event::Arrive);
        Ok(world)
    }

    /// Runs to the end of the simulated time, checking the invariants after every step.
    pub fn run(mut self) -> Result<Stats, String> {
        for _ in 0..MAX_EVENTS {
            let next_event = self.events.peek().map(|Reverse((t, _, _))| *t);
            let next_deadline = self.queue.next_deadline();
            let Some(t) = [next_event, next_deadline].into_iter().flatten().min() else {
                return self.finish();
            };
            if t > self.cfg.duration {
                return self.finish();
            }
            ensure!(t >= self.now, "time went back from {} to {t}", self.now);
            self.now = t;
            let step = if next_deadline == Some(t) {
                self.expire().map(|()| 0)
            } else {
                match self.events.pop() {
                    Some(Reverse((_, _, event))) => self.handle(event).map(|()| event_code(event)),
                    None => Ok(0),
                }
            };
            let code = step.and_then(|code| self.invariants().map(|()| code));
            let code = code.map_err(|e| format!("at {:.3} s: {e}", self.now as f64 / 1e9))?;
            self.stats.events += 1;
            self.stats.trace = fold(fold(self.stats.trace, self.now), code);
        }
        Err(format!(
            "more than {MAX_EVENTS} events: the run does not end"
        ))
    }

    fn handle(&mut self, event: Event) -> Result<(), String> {
        match event {
            Event::Arrive => self.arrive(),
            Event::Check { server, generation } => {
                if generation == self.check_generation[server] {
                    self.check(server)?;
                }
                Ok(())
            }
            Event::Ramp { server, generation } => self.ramp_step(server, generation),
            Event::Finish { server, request } => self.finish_request(server, request),
            Event::Abort { request } => self.abort(request),
        }
    }

    fn at(&mut self, t: Nanos, event: Event) {
        self.seq += 1;
        self.events.push(Reverse((t, self.seq, event)));
    }

    fn servers(&self) -> usize {
        self.cfg.servers.len()
    }

    /// Whether the balancer may give `server` a stream: UP, and of the serving tier.
    fn eligible(&self, server: ServerId) -> bool {
        let any_active = (0..self.servers()).any(|s| self.up[s] && !self.cfg.servers[s].backup);
        self.up[server] && self.cfg.servers[server].backup != any_active
    }

    fn has_room(&self, server: ServerId) -> bool {
        self.inflight[server] < self.cfg.servers[server].maxconn
    }

    /// Checked after every event.
    fn invariants(&self) -> Result<(), String> {
        for (s, server) in self.cfg.servers.iter().enumerate() {
            ensure!(
                self.inflight[s] <= server.maxconn,
                "server {s} has {} in flight, above its maxconn {}",
                self.inflight[s],
                server.maxconn
            );
        }
        ensure!(
            self.queue.len() == self.waiting.len(),
            "the queue holds {}, the model {}",
            self.queue.len(),
            self.waiting.len()
        );
        if let Some(max) = self.cfg.queue_max {
            ensure!(
                self.queue.len() <= max,
                "queue of {} above its max {max}",
                self.queue.len()
            );
        }
        let room = (0..self.servers()).find(|&s| self.eligible(s) && self.has_room(s));
        ensure!(
            self.waiting.unpinned == 0 || room.is_none(),
            "{} requests wait while server {room:?} has room",
            self.waiting.unpinned
        );
        for &s in self.waiting.pinned.keys() {
            ensure!(
                !(self.eligible(s) && self.has_room(s)),
                "requests pinned to server {s} wait while it has room"
            );
        }
        Ok(())
    }

    /// Checks at the end of the run.
    fn finish(self) -> Result<Stats, String> {
        let window = as_nanos(self.cfg.slow_start);
        for (s, ramp) in self.ramp.iter().enumerate() {
            if self.up[s] && ramp.generation > 0 && ramp.since + window <= self.cfg.duration {
                ensure!(
                    ramp.done,
                    "server {s} came up at {} ns and its ramp never completed",
                    ramp.since
                );
            }
        }
        Ok(self.stats)
    }
}

fn as_nanos(d: std::time::Duration) -> Nanos {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// A number per kind of event, for the trace.
fn event_code(event: Event) -> u64 {
    match event {
        Event::Arrive => 1,
        Event::Check { server, .. } => 2 + 8 * server as u64,
        Event::Ramp { server, .. } => 3 + 8 * server as u64,
        Event::Finish { request, .. } => 4 + 8 * request,
        Event::Abort { request } => 5 + 8 * request,
    }
}
