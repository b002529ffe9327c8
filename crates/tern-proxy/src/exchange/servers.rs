//! What all workers must agree on about a backend's servers: health, effective weight, slots
//! under `maxconn`, the queue of requests waiting for a slot, and the stickiness table.
//!
//! Balancing itself stays per worker (`balance.rs`); this is the small part that cannot.
//! - **Health and weight** are written by the health checker (crate::health) and read by every
//!   worker. A worker does not load every server's state on every pick: the checker bumps the
//!   backend's `generation` after a change, and a worker resynchronises its own balancer when
//!   the generation it last saw differs (one relaxed load per request).
//! - **Slots.** `maxconn` limits a server's requests in flight over all workers, so it is an
//!   atomic count taken with a compare-and-swap before a request is sent. A server without
//!   `maxconn` is never counted: the common case writes no shared cache line.
//! - **The queue** holds requests that found every usable server full. A slot being given back
//!   is handed straight to the oldest waiter that can use that server (FIFO, and a waiter
//!   persistent to one server waits for that one), still counted, so a newcomer cannot take it
//!   in between. The queue is behind a mutex, touched only when someone waits (`queued` tells
//!   the release path whether to look).
//! - **Stickiness** (`stick on source`) is one table per backend behind a mutex: a lookup per
//!   request, for backends that ask for it.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Instant;

use tern_balance::{Nanos, Queue, ServerId, StickTable, Ticket};
use tern_config::{Backend, Config, Server};
use tokio::sync::{oneshot, Notify};

use crate::peers::changes::Changes;
use crate::stats::AdminState;

/// What a queued request receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Grant {
    /// A slot of this server, now the request's own.
    Server(ServerId),
    /// The server it was pinned to went down: balance it again.
    Rebalance,
    /// No server is left up.
    GiveUp,
}

/// The shared state of one server.
#[derive(Debug)]
pub(crate) struct ServerState {
    /// Passes health checks (always, when not checked).
    up: AtomicBool,
    /// Effective weight: configured, or lower while slow start ramps it.
    weight: AtomicU32,
    /// Configured weight: from the file, or set at runtime (`set weight`).
    configured_weight: AtomicU32,
    /// [`AdminState`] as a number (`set server state` of the runtime API).
    admin: AtomicU8,
    /// Whether `address` holds a runtime address (saves the lock in the common case).
    moved: AtomicBool,
    /// The address set at runtime (`set server addr`, or found by DNS), replacing the
    /// configured one.
    address: Mutex<Option<SocketAddr>>,
    /// Found by DNS and without an address now (a template slot no record fills, a name whose
    /// answers failed past `hold`): out of balancing, checks paused, as HAProxy's
    /// "MAINT (resolution)". Separate from the operator's state, which DNS never touches.
    unresolved: AtomicBool,
    /// The outcome of the last active check (`L7OK: status 200 in 2 ms`), for `show stat`.
    last_check: Mutex<String>,
    /// Requests in flight over all workers; counted only when `maxconn` is set.
    active: AtomicU32,
    /// `maxconn`; 0 = no limit.
    pub maxconn: u32,
    /// Consecutive passive-check errors.
    errors: AtomicU32,
    /// Woken when `errors` reaches the backend's `error_limit`.
    pub passive: Notify,
    /// Woken when the server leaves maintenance, so its health check, paused meanwhile, runs
    /// at once.
    pub resumed: Notify,
}

impl ServerState {
    /// A server in the state the file sets: in maintenance with `disabled`, else ready.
    fn new(server: &Server) -> Self {
        let admin = if server.disabled {
            AdminState::Maint
        } else {
            AdminState::Ready
        };
        let weight = server.weight;
        Self {
            up: AtomicBool::new(true),
            weight: AtomicU32::new(weight),
            configured_weight: AtomicU32::new(weight),
            admin: AtomicU8::new(admin_code(admin)),
            moved: AtomicBool::new(false),
            address: Mutex::new(None),
            unresolved: AtomicBool::new(
                server.resolve.as_ref().is_some_and(|r| r.starts_unresolved),
            ),
            last_check: Mutex::new(String::new()),
            active: AtomicU32::new(0),
            maxconn: server.maxconn.unwrap_or(0),
            errors: AtomicU32::new(0),
            passive: Notify::new(),
            resumed: Notify::new(),
        }
    }

    /// Whether the server passes its health checks.
    pub(crate) fn is_up(&self) -> bool {
        self.up.load(Ordering::Acquire)
    }

    /// The effective weight.
    pub(crate) fn weight(&self) -> u32 {
        self.weight.load(Ordering::Acquire)
    }

    /// The configured weight (from the file, or set at runtime).
    pub(crate) fn configured_weight(&self) -> u32 {
        self.configured_weight.load(Ordering::Acquire)
    }

    /// The operator's state.
    pub(crate) fn admin(&self) -> AdminState {
        admin_state(self.admin.load(Ordering::Acquire))
    }

    /// May take traffic: up, not in maintenance and with an address (a drained server still
    /// serves its persistent clients).
    pub(crate) fn usable(&self) -> bool {
        self.is_up() && self.admin() != AdminState::Maint && !self.is_unresolved()
    }

    /// Found by DNS and without an address now (see `unresolved`).
    pub(crate) fn is_unresolved(&self) -> bool {
        self.unresolved.load(Ordering::Acquire)
    }

    /// The weight balancing sees: 0 while drained, so only persistent clients reach it.
    pub(crate) fn balance_weight(&self) -> u32 {
        match self.admin() {
            AdminState::Drain => 0,
            _ => self.weight(),
        }
    }

    /// Records the outcome of an active check (written by the checker, once per check).
    pub(crate) fn set_last_check(&self, detail: &str) {
        let mut last = self.last_check.lock().unwrap_or_else(|e| e.into_inner());
        last.clear();
        last.push_str(detail);
    }

    /// The outcome of the last active check; empty before the first one or when unchecked.
    pub(crate) fn last_check(&self) -> String {
        self.last_check
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The address set at runtime, if any.
    pub(crate) fn runtime_address(&self) -> Option<SocketAddr> {
        if !self.moved.load(Ordering::Acquire) {
            return None;
        }
        *self.address.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Where new connections go: the runtime address if one was set, else `configured`.
    pub(crate) fn address(&self, configured: SocketAddr) -> SocketAddr {
        if !self.moved.load(Ordering::Acquire) {
            return configured;
        }
        self.address
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .unwrap_or(configured)
    }

    /// Requests in flight (counted only under `maxconn`).
    pub(crate) fn active(&self) -> u32 {
        self.active.load(Ordering::Relaxed)
    }

    /// Takes a slot if the server is under its `maxconn` (always, without counting, when it has
    /// none).
    pub(crate) fn try_take(&self) -> bool {
        if self.maxconn == 0 {
            return true;
        }
        self.active
            .fetch_update(Ordering::AcqRel, Ordering::Relaxed, |n| {
                (n < self.maxconn).then_some(n + 1)
            })
            .is_ok()
    }

    /// Gives a slot back without handing it to a waiter.
    fn give_back(&self) {
        if self.maxconn > 0 {
            let _ = self
                .active
                .fetch_update(Ordering::AcqRel, Ordering::Relaxed, |n| {
                    Some(n.saturating_sub(1))
                });
        }
    }

    /// Records a passive-check observation; true when the error limit was just reached (the
    /// count starts again from zero).
    pub(crate) fn observe(&self, error: bool, limit: u32) -> bool {
        if !error {
            if self.errors.load(Ordering::Relaxed) != 0 {
                self.errors.store(0, Ordering::Relaxed);
            }
            return false;
        }
        let n = self.errors.fetch_add(1, Ordering::AcqRel) + 1;
        if n >= limit {
            self.errors.store(0, Ordering::Release);
            self.passive.notify_one();
            return true;
        }
        false
    }
}

/// A request waiting in a backend queue.
#[derive(Debug)]
pub(crate) struct Waiter {
    pub grant: oneshot::Sender<Grant>,
}

/// The shared state of one backend.
#[derive(Debug)]
pub(crate) struct BackendState {
    pub servers: Vec<ServerState>,
    /// Bumped after any change of health or weight, so workers know to resynchronise.
    generation: AtomicU64,
    queue: Mutex<Queue<Waiter>>,
    /// Requests in the queue (so releases skip the lock when it is empty).
    queued: AtomicUsize,
    stick: Option<Mutex<StickTable<IpAddr>>>,
    /// Client addresses whose server changed since the peers were last sent them, when the
    /// stickiness table is shared (`stick.peers`).
    pub(crate) stick_changes: Option<Changes<IpAddr>>,
}

impl BackendState {
    fn new(backend: &Backend) -> Self {
        let servers = backend.servers.iter().map(ServerState::new).collect();
        Self {
            servers,
            generation: AtomicU64::new(0),
            queue: Mutex::new(Queue::new(backend.queue.max)),
            queued: AtomicUsize::new(0),
            stick: backend
                .stick
                .map(|s| Mutex::new(StickTable::new(s.size, s.expire))),
            stick_changes: backend
                .stick
                .filter(|s| s.peers.is_some())
                .map(|s| Changes::new(s.size)),
        }
    }

    /// Requests waiting in the queue now.
    pub(crate) fn queued(&self) -> usize {
        self.queued.load(Ordering::Relaxed)
    }

    /// The generation of health and weight.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// A server's state (`None` for an unknown id).
    pub(crate) fn server(&self, server: ServerId) -> Option<&ServerState> {
        self.servers.get(server)
    }

    /// Sets a server's health; returns whether it changed. Wakes queued requests when the
    /// server came up, and fails them all when no server is left up.
    pub(crate) fn set_up(&self, server: ServerId, up: bool) -> bool {
        let Some(s) = self.servers.get(server) else {
            return false;
        };
        if s.up.swap(up, Ordering::AcqRel) == up {
            return false;
        }
        self.generation.fetch_add(1, Ordering::AcqRel);
        if up {
            self.kick();
        } else if !self.servers.iter().any(ServerState::usable) {
            self.fail_waiters();
        } else {
            self.move_pinned(server);
        }
        true
    }

    /// Sets a server's effective weight; returns whether it changed.
    pub(crate) fn set_weight(&self, server: ServerId, weight: u32) -> bool {
        let Some(s) = self.servers.get(server) else {
            return false;
        };
        if s.weight.swap(weight, Ordering::AcqRel) == weight {
            return false;
        }
        self.generation.fetch_add(1, Ordering::AcqRel);
        if weight > 0 {
            self.kick();
        }
        true
    }

    /// Sets a server's configured weight (`set weight`) and its effective weight with it
    /// (slow start, if ramping, continues towards the new value). `false` for an unknown server.
    pub(crate) fn set_configured_weight(&self, server: ServerId, weight: u32) -> bool {
        let Some(s) = self.servers.get(server) else {
            return false;
        };
        s.configured_weight.store(weight, Ordering::Release);
        self.set_weight(server, weight);
        true
    }

    /// Sets a server's operator state; `false` for an unknown server. Maintenance sends the
    /// requests queued for it back to balancing (or fails them when no server is left).
    pub(crate) fn set_admin(&self, server: ServerId, admin: AdminState) -> bool {
        let Some(s) = self.servers.get(server) else {
            return false;
        };
        let before = admin_state(s.admin.swap(admin_code(admin), Ordering::AcqRel));
        if before == admin {
            return true;
        }
        if before == AdminState::Maint {
            s.resumed.notify_one();
        }
        self.generation.fetch_add(1, Ordering::AcqRel);
        match admin {
            AdminState::Maint if !self.servers.iter().any(ServerState::usable) => {
                self.fail_waiters();
            }
            AdminState::Maint => self.move_pinned(server),
            AdminState::Ready | AdminState::Drain => self.kick(),
        }
        true
    }

    /// Sends new connections of `server` to `address` (`set server addr`); idle pooled
    /// connections to the old address are dropped at their next checkout. `false` for an
    /// unknown server.
    pub(crate) fn set_address(&self, server: ServerId, address: SocketAddr) -> bool {
        let Some(s) = self.servers.get(server) else {
            return false;
        };
        *s.address.lock().unwrap_or_else(|e| e.into_inner()) = Some(address);
        s.moved.store(true, Ordering::Release);
        true
    }

    /// Publishes what DNS found for `server`: an address (it takes traffic there, new
    /// connections only; a check aimed at the server follows) or none (out of balancing,
    /// checks paused). Returns whether anything changed.
    pub(crate) fn set_resolved(&self, server: ServerId, address: Option<SocketAddr>) -> bool {
        let Some(s) = self.servers.get(server) else {
            return false;
        };
        let Some(address) = address else {
            if s.unresolved.swap(true, Ordering::AcqRel) {
                return false;
            }
            self.generation.fetch_add(1, Ordering::AcqRel);
            if self.servers.iter().any(ServerState::usable) {
                self.move_pinned(server);
            } else {
                self.fail_waiters();
            }
            return true;
        };
        let moved = s.runtime_address() != Some(address);
        if moved {
            self.set_address(server, address);
        }
        let was_out = s.unresolved.swap(false, Ordering::AcqRel);
        if was_out {
            self.generation.fetch_add(1, Ordering::AcqRel);
            s.resumed.notify_one();
            self.kick();
        }
        moved || was_out
    }

    fn lock_queue(&self) -> MutexGuard<'_, Queue<Waiter>> {
        // A panic while holding the lock cannot leave the queue inconsistent in a way that
        // matters more than losing it: keep serving.
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether a freed slot of `server` may go to a queued request: the server is up and not
    /// drained.
    fn serves_queue(&self, server: ServerId) -> bool {
        self.servers
            .get(server)
            .is_some_and(|s| s.usable() && s.balance_weight() > 0)
    }

    /// Gives a slot of `server` back: to the oldest waiter that can use it, else to the pool.
    pub(crate) fn release(&self, server: ServerId) {
        let Some(s) = self.servers.get(server) else {
            return;
        };
        if s.maxconn == 0 {
            return;
        }
        if self.queued.load(Ordering::Acquire) > 0 && self.serves_queue(server) {
            let mut queue = self.lock_queue();
            while let Some((_, waiter)) = queue.take_for(server) {
                self.queued.store(queue.len(), Ordering::Release);
                if waiter.grant.send(Grant::Server(server)).is_ok() {
                    return;
                }
            }
        }
        s.give_back();
    }

    /// Hands free slots of up servers to waiters, after a server came up or gained weight.
    fn kick(&self) {
        if self.queued.load(Ordering::Acquire) == 0 {
            return;
        }
        let mut queue = self.lock_queue();
        for (id, s) in self.servers.iter().enumerate() {
            if !self.serves_queue(id) {
                continue;
            }
            while !queue.is_empty() && s.try_take() {
                match queue.take_for(id) {
                    Some((_, waiter)) => {
                        if waiter.grant.send(Grant::Server(id)).is_err() {
                            s.give_back();
                        }
                    }
                    None => {
                        s.give_back();
                        break;
                    }
                }
            }
        }
        self.queued.store(queue.len(), Ordering::Release);
    }

    /// Sends the waiters pinned to `server` (now down) back to balancing.
    fn move_pinned(&self, server: ServerId) {
        if self.queued.load(Ordering::Acquire) == 0 {
            return;
        }
        let mut queue = self.lock_queue();
        for waiter in queue.take_pinned(server) {
            let _ = waiter.grant.send(Grant::Rebalance);
        }
        self.queued.store(queue.len(), Ordering::Release);
    }

    /// Answers every waiter "give up" (no server is up any more).
    fn fail_waiters(&self) {
        let mut queue = self.lock_queue();
        for waiter in queue.drain() {
            let _ = waiter.grant.send(Grant::GiveUp);
        }
        self.queued.store(0, Ordering::Release);
    }

    /// Queues a request; `Err` when the queue is full. `want` is the only server it may use
    /// (persistence), `deadline` when it gives up.
    pub(crate) fn enqueue(
        &self,
        want: Option<ServerId>,
        deadline: Nanos,
    ) -> Result<(Ticket, oneshot::Receiver<Grant>), ()> {
        let (tx, rx) = oneshot::channel();
        let mut queue = self.lock_queue();
        match queue.push(Waiter { grant: tx }, want, deadline) {
            Ok(ticket) => {
                self.queued.store(queue.len(), Ordering::Release);
                drop(queue);
                // A slot may have been given back between the caller's failed pick and the
                // push: look once more so the request does not wait for the next release.
                self.kick();
                Ok((ticket, rx))
            }
            Err(_) => Err(()),
        }
    }

    /// Withdraws a waiter that gave up; false when it was already granted (its receiver then
    /// holds the grant).
    pub(crate) fn withdraw(&self, ticket: Ticket) -> bool {
        let mut queue = self.lock_queue();
        let removed = queue.remove(ticket).is_some();
        self.queued.store(queue.len(), Ordering::Release);
        removed
    }

    /// The server `client` sticks to, if any (`stick`).
    pub(crate) fn stuck(&self, client: IpAddr, now: Nanos) -> Option<ServerId> {
        let table = self.stick.as_ref()?;
        table
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&client, now)
    }

    /// Remembers that `client` went to `server` (`stick`).
    pub(crate) fn stick(&self, client: IpAddr, server: ServerId, now: Nanos) {
        self.learn_stick(client, server, now);
        if let Some(c) = &self.stick_changes {
            c.mark(&client);
        }
    }

    /// [`BackendState::stick`] for an entry learnt from a peer: not sent back to the peers.
    pub(crate) fn learn_stick(&self, client: IpAddr, server: ServerId, now: Nanos) {
        if let Some(table) = &self.stick {
            table
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .put(client, server, now);
        }
    }

    /// The server of `client`, without refreshing the entry (what the peers are sent).
    pub(crate) fn stick_peek(&self, client: IpAddr, now: Nanos) -> Option<ServerId> {
        let table = self.stick.as_ref()?;
        let t = table.lock().unwrap_or_else(|e| e.into_inner());
        t.peek(&client, now).copied()
    }

    /// `show table NAME [key K]` for this backend's stickiness table (named like the backend,
    /// as in HAProxy): a header line, then `key=IP server_id=N server_key=NAME` per entry (at
    /// most `limit`), least recently used first; `None` without stickiness.
    pub(crate) fn show_stick(
        &self,
        backend: &Backend,
        only: Option<IpAddr>,
        limit: usize,
        now: Nanos,
    ) -> Option<String> {
        let mut t = self
            .stick
            .as_ref()?
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        t.purge(now);
        let mut out = format!(
            "# table: {}, type: ip, size: {}, used: {}",
            backend.name,
            t.size(),
            t.len()
        );
        let entries = t.iter(now).filter(|(k, _)| only.is_none_or(|o| o == **k));
        for (ip, server) in entries.take(limit) {
            let name = backend.servers.get(*server).map_or("", |s| s.name.as_str());
            out.push_str(&format!(
                "\nkey={ip} server_id={} server_key={name}",
                server + 1
            ));
        }
        Some(out)
    }

    /// Every live stickiness entry (at most `limit`), least recently used first.
    pub(crate) fn stick_entries(&self, now: Nanos, limit: usize) -> Vec<(IpAddr, ServerId)> {
        let Some(table) = &self.stick else {
            return Vec::new();
        };
        let t = table.lock().unwrap_or_else(|e| e.into_inner());
        t.iter(now).take(limit).map(|(k, v)| (*k, *v)).collect()
    }

    /// Whether this backend keeps a stickiness table.
    pub(crate) fn sticky(&self) -> bool {
        self.stick.is_some()
    }
}

fn admin_code(state: AdminState) -> u8 {
    match state {
        AdminState::Ready => 0,
        AdminState::Drain => 1,
        AdminState::Maint => 2,
    }
}

fn admin_state(code: u8) -> AdminState {
    match code {
        1 => AdminState::Drain,
        2 => AdminState::Maint,
        _ => AdminState::Ready,
    }
}

/// The clock shared state is stamped with: nanoseconds since the first call in this process
/// (workers' own clocks have their own epochs, and the stickiness table is shared).
pub(crate) fn now() -> Nanos {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    let epoch = EPOCH.get_or_init(Instant::now);
    u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// The shared state of every backend, in configuration order.
pub(crate) fn build(config: &Config) -> Arc<Vec<BackendState>> {
    for_backends(&config.backends)
}

/// The shared state of these backends.
pub(crate) fn for_backends(backends: &[Backend]) -> Arc<Vec<BackendState>> {
    Arc::new(backends.iter().map(BackendState::new).collect())
}

#[cfg(test)]
mod tests;
