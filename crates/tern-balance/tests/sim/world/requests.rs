//! Requests: arrival (stickiness, then a pick that refuses full servers), the queue when every
//! server is full, completion handing the slot to the oldest waiter, expiry, aborts and the
//! drain when the backend goes down.

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use tern_balance::{Algorithm, NoServer, PickContext, ServerId};

use super::super::ensure;
use super::super::model::Waiter;
use super::{Event, Request, World};

/// Distinct stickiness keys (more than most tables hold, so entries get evicted).
const KEYS: u64 = 32;

impl World {
    pub(super) fn arrive(&mut self) -> Result<(), String> {
        let id = self.next_request;
        self.next_request += 1;
        self.stats.arrived += 1;
        let gap = self.rng.around(self.cfg.arrival_gap).max(1);
        if self.now + gap <= self.cfg.duration {
            self.at(self.now + gap, Event::Arrive);
        }
        let key = self
            .rng
            .chance(self.cfg.sticky)
            .then(|| self.rng.below(KEYS) as u32);
        let service = self.rng.around(self.cfg.service).max(1);
        if self.rng.chance(100) {
            let patience = self.rng.around(self.cfg.queue_timeout);
            self.at(self.now + patience, Event::Abort { request: id });
        }
        self.requests.insert(
            id,
            Request {
                key,
                service,
                ticket: None,
            },
        );
        if let Some(s) = key.and_then(|k| self.stick.get(&k, self.now)) {
            if self.eligible(s) {
                return if self.has_room(s) {
                    self.start(id, s)
                } else {
                    self.enqueue(id, Some(s))
                };
            }
        }
        self.pick(id, key)
    }

    /// A balancer pick that refuses full servers.
    fn pick(&mut self, id: u64, key: Option<u32>) -> Result<(), String> {
        let client = key.map_or(0x5000_0000 ^ id as u32, |k| 0x0A00_0000 | k);
        let ctx = PickContext::new()
            .with_client(IpAddr::V4(Ipv4Addr::from(client)))
            .with_now(self.now);
        let mut offered = Vec::new();
        let (inflight, servers) = (&self.inflight, &self.cfg.servers);
        let got = self.balancer.select_with(&ctx, |s| {
            offered.push(s);
            inflight[s] < servers[s].maxconn
        });
        for (i, &s) in offered.iter().enumerate() {
            ensure!(
                self.eligible(s),
                "server {s} offered while down or of an idle tier"
            );
            ensure!(
                !offered[..i].contains(&s),
                "server {s} offered twice: {offered:?}"
            );
        }
        match got {
            Ok(s) => self.start(id, s),
            Err(NoServer::Full) => {
                let room = (0..self.servers()).find(|&s| self.eligible(s) && self.has_room(s));
                ensure!(
                    room.is_none(),
                    "Full, but server {room:?} has room (offered {offered:?})"
                );
                self.enqueue(id, None)
            }
            Err(NoServer::Down) => {
                ensure!(
                    !self.up.contains(&true),
                    "Down, but some server is up: {:?}",
                    self.up
                );
                self.stats.no_server += 1;
                self.requests.remove(&id);
                Ok(())
            }
        }
    }

    fn start(&mut self, id: u64, s: ServerId) -> Result<(), String> {
        ensure!(
            self.eligible(s),
            "request {id} sent to server {s}, down or of an idle tier"
        );
        ensure!(self.has_room(s), "request {id} sent to full server {s}");
        let Some(&req) = self.requests.get(&id) else {
            return Err(format!("request {id} started twice or after it ended"));
        };
        self.inflight[s] += 1;
        self.balancer.on_start(s);
        if let Some(k) = req.key {
            self.stick.put(k, s, self.now);
        }
        self.at(
            self.now + req.service,
            Event::Finish {
                server: s,
                request: id,
            },
        );
        self.stats.served += 1;
        self.stats.trace = super::fold(self.stats.trace, s as u64);
        Ok(())
    }

    fn enqueue(&mut self, id: u64, want: Option<ServerId>) -> Result<(), String> {
        let deadline = self.now + self.cfg.queue_timeout;
        match self.queue.push(id, want, deadline) {
            Ok(ticket) => {
                self.waiting.insert(
                    id,
                    Waiter {
                        want,
                        deadline,
                        ticket,
                    },
                );
                if let Some(r) = self.requests.get_mut(&id) {
                    r.ticket = Some(ticket);
                }
                self.stats.queued += 1;
            }
            Err(back) => {
                ensure!(back == id, "the queue gave back {back} instead of {id}");
                let full = self.cfg.queue_max.is_some_and(|m| self.queue.len() >= m);
                ensure!(full, "queue of {} refused a waiter", self.queue.len());
                self.stats.queue_full += 1;
                self.requests.remove(&id);
            }
        }
        Ok(())
    }

    pub(super) fn finish_request(&mut self, s: ServerId, id: u64) -> Result<(), String> {
        ensure!(
            self.inflight[s] > 0,
            "server {s} finished a request it did not have"
        );
        self.inflight[s] -= 1;
        self.balancer.on_finish(s);
        if let Some(req) = self.requests.remove(&id) {
            self.balancer
                .on_response(s, Duration::from_nanos(req.service), self.now);
        }
        if self.cfg.servers[s].alive(self.now) {
            self.errors[s] = 0;
        } else {
            self.errors[s] += 1;
            if self.errors[s] >= self.cfg.error_limit {
                self.errors[s] = 0;
                self.passive(s)?;
            }
        }
        self.fill(s)
    }

    /// Gives `s`'s free slots to the oldest waiters it may serve.
    pub(super) fn fill(&mut self, s: ServerId) -> Result<(), String> {
        self.expire()?;
        for _ in 0..=self.cfg.servers[s].maxconn {
            if !self.eligible(s) || !self.has_room(s) {
                break;
            }
            let Some((ticket, id)) = self.queue.take_for(s) else {
                break;
            };
            let oldest = self.waiting.oldest_for(s);
            ensure!(
                oldest == Some(id),
                "server {s} got waiter {id}, but {oldest:?} came first"
            );
            let Some(w) = self.waiting.remove(id) else {
                return Err(format!("the queue gave {id}, which is not waiting"));
            };
            ensure!(
                w.ticket == ticket,
                "waiter {id} came back with another ticket"
            );
            ensure!(
                w.want.is_none_or(|p| p == s),
                "waiter {id} pinned to {:?} went to {s}",
                w.want
            );
            ensure!(
                self.now < w.deadline,
                "waiter {id} served after its deadline {}",
                w.deadline
            );
            self.stats.served_from_queue += 1;
            self.stats.pinned_served += u64::from(w.want.is_some());
            self.start(id, s)?;
        }
        Ok(())
    }

    pub(super) fn fill_all(&mut self) -> Result<(), String> {
        (0..self.servers()).try_for_each(|s| self.fill(s))
    }

    /// Answers the waiters whose deadline has come.
    pub(super) fn expire(&mut self) -> Result<(), String> {
        while let Some((ticket, id)) = self.queue.pop_expired(self.now) {
            let Some(w) = self.waiting.remove(id) else {
                return Err(format!("waiter {id} expired but was not waiting"));
            };
            ensure!(
                w.ticket == ticket,
                "waiter {id} expired with another ticket"
            );
            ensure!(
                w.deadline <= self.now,
                "waiter {id} expired before its deadline"
            );
            self.requests.remove(&id);
            self.stats.timeouts += 1;
        }
        Ok(())
    }

    /// The client of `id` gives up.
    pub(super) fn abort(&mut self, id: u64) -> Result<(), String> {
        let Some(req) = self.requests.get(&id).copied() else {
            return Ok(());
        };
        if let Some(w) = self.waiting.remove(id) {
            let got = self.queue.remove(w.ticket);
            ensure!(got == Some(id), "removing waiter {id} gave {got:?}");
            self.requests.remove(&id);
            self.stats.aborted += 1;
        } else if let Some(ticket) = req.ticket {
            let got = self.queue.remove(ticket);
            ensure!(
                got.is_none(),
                "the stale ticket of {id} removed waiter {got:?}"
            );
        }
        Ok(())
    }

    /// No server is usable: every waiter is answered at once.
    pub(super) fn drain(&mut self) -> Result<(), String> {
        let drained: Vec<u64> = self.queue.drain().collect();
        let expected = self.waiting.clear();
        ensure!(
            drained == expected,
            "drained {drained:?}, expected {expected:?}"
        );
        ensure!(
            self.queue.is_empty(),
            "the queue is not empty after a drain"
        );
        for id in &drained {
            self.requests.remove(id);
        }
        self.stats.drained += drained.len() as u64;
        Ok(())
    }
}
