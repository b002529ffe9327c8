//! Stick-table counters on the data path: what a session tracks (`track-sc0|1|2`), the
//! counters it bumps, and what `sc*_` and `src_` fetches read.
//!
//! A session holds up to three tracked entries ([`Tracking`], HAProxy's stick counters), each
//! a table index and a key, never a pointer into the table: every update looks the key up
//! under the table's lock ([`table`]), so an entry can be evicted or cleared at any time. A
//! track by `tcp_request.connection` lasts as long as the connection and counts it
//! (`conn_cnt`, `conn_rate`) and each of its requests (`http_req_*`); a track by an
//! `http_request` rule lasts for its request and counts it. Both hold `conn_cur` while they
//! last. `http_err_rate` counts answers of status 4xx, as HAProxy does. An HTTP/2 stream starts
//! with a copy of its connection's tracks ([`Tracking::inherit`]): its requests count there,
//! and its rules read them, while the connection alone holds their `conn_cur`.
//!
//! A session of a generation without tables has no tables to reach (`Tracking::default`),
//! and the request path pays one emptiness check. The slots live behind one box made only when
//! the generation has tables: every connection holds a `Tracking`, most of them idle, and the
//! slots would add 120 bytes to each.

// A rate over a sliding period.
pub(crate) mod freq;
// The tables and their entries.
pub(crate) mod table;

use std::net::IpAddr;
use std::sync::Arc;

use tern_config::{Counter, CounterFetch, CounterOp, CounterSource, TRACK_SLOTS};

use crate::exchange::servers::now;
use table::{Key, Tables};

/// One tracked entry.
#[derive(Debug, Clone)]
struct Slot {
    table: usize,
    key: Key,
    /// Tracked for the whole connection (`tcp_request.connection`), else for the request.
    connection: bool,
    /// This session started the track and gives its `conn_cur` back; an HTTP/2 stream's copy
    /// of its connection's tracks does not.
    owned: bool,
}

/// The entries a session tracks; `None` when the generation has no table.
#[derive(Debug, Default)]
pub(crate) struct Tracking(Option<Box<Tracked>>);

/// The tables and the slots of a session of a generation with tables.
#[derive(Debug)]
struct Tracked {
    tables: Arc<Tables>,
    slots: [Option<Slot>; TRACK_SLOTS as usize],
}

impl Tracking {
    /// Tracking in `tables` (off when there is none).
    pub(crate) fn new(tables: &Arc<Tables>) -> Self {
        Self((!tables.is_empty()).then(|| {
            Box::new(Tracked {
                tables: Arc::clone(tables),
                slots: Default::default(),
            })
        }))
    }

    /// The key type of table `table`; `None` without tables.
    pub(crate) fn key_type(&self, table: usize) -> Option<tern_config::TableKey> {
        Some(self.0.as_ref()?.tables.get(table)?.key)
    }

    /// Whether nothing is tracked.
    pub(crate) fn is_idle(&self) -> bool {
        self.0
            .as_ref()
            .is_none_or(|t| t.slots.iter().all(Option::is_none))
    }

    /// Tracks `key` of `table` in `slot` (a slot already in use is kept, as in HAProxy) and
    /// counts the start: `conn_cur`, and `conn_cnt`/`conn_rate` for a connection or
    /// `http_req_*` for a request.
    pub(crate) fn track(&mut self, slot: u8, table: usize, key: Key, connection: bool) {
        let Some(tracked) = self.0.as_deref_mut() else {
            return;
        };
        let tables = &tracked.tables;
        let Some(free) = tracked
            .slots
            .get_mut(usize::from(slot))
            .filter(|s| s.is_none())
        else {
            return;
        };
        let Some(t) = tables.get(table) else { return };
        let now = now();
        t.update(&key, now, |e| {
            e.conn_cur = e.conn_cur.saturating_add(1);
            if connection {
                e.conn_cnt = e.conn_cnt.saturating_add(1);
                t.add(e, Counter::ConnRate, now, 1);
            } else {
                e.http_req_cnt = e.http_req_cnt.saturating_add(1);
                t.add(e, Counter::HttpReqRate, now, 1);
            }
        });
        *free = Some(Slot {
            table,
            key,
            connection,
            owned: true,
        });
    }

    /// What an HTTP/2 stream of this connection tracks from the start: the connection's
    /// entries, counting its requests, without holding their `conn_cur`.
    pub(crate) fn inherit(&self) -> Tracking {
        let Some(tracked) = self.0.as_deref() else {
            return Tracking(None);
        };
        let slots = tracked
            .slots
            .clone()
            .map(|s| s.map(|s| Slot { owned: false, ..s }));
        Tracking(Some(Box::new(Tracked {
            tables: Arc::clone(&tracked.tables),
            slots,
        })))
    }

    /// A request starts on the connection: its connection-long entries count it.
    pub(crate) fn request_started(&mut self) {
        self.each(
            |s| s.connection,
            |t, e, now| {
                e.http_req_cnt = e.http_req_cnt.saturating_add(1);
                t.add(e, Counter::HttpReqRate, now, 1);
            },
        );
    }

    /// tern or a server answered the request with `status`: 4xx are counted as errors.
    pub(crate) fn answered(&mut self, status: u16) {
        if (400..500).contains(&status) {
            self.each(|_| true, |t, e, now| t.add(e, Counter::HttpErrRate, now, 1));
        }
    }

    /// The request moved `bytes_in` from the client and `bytes_out` to it.
    pub(crate) fn transferred(&mut self, bytes_in: u64, bytes_out: u64) {
        let clamp = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
        self.each(
            |_| true,
            |t, e, now| {
                t.add(e, Counter::BytesInRate, now, clamp(bytes_in));
                t.add(e, Counter::BytesOutRate, now, clamp(bytes_out));
            },
        );
    }

    /// The request ended: its own tracks stop.
    pub(crate) fn request_ended(&mut self) {
        self.release(|s| !s.connection);
    }

    /// The value a counter fetch reads (and its operation), for a client at `peer`.
    pub(crate) fn counter(&self, fetch: &CounterFetch, peer: IpAddr) -> Option<u64> {
        let tracked = self.0.as_deref()?;
        let tables = &tracked.tables;
        let (table, key) = match &fetch.source {
            CounterSource::Tracked(slot) => {
                let s = tracked.slots.get(usize::from(*slot))?.as_ref()?;
                (s.table, std::borrow::Cow::Borrowed(&s.key))
            }
            CounterSource::Src(table) => {
                let t = tables.get(table.index)?;
                let key = match t.key {
                    tern_config::TableKey::String => {
                        Key::Text(peer.to_canonical().to_string().into_bytes().into())
                    }
                    tern_config::TableKey::Integer => return None,
                    _ => Key::Ip(peer.to_canonical()),
                };
                (table.index, std::borrow::Cow::Owned(key))
            }
        };
        let t = tables.get(table)?;
        let now = now();
        match fetch.op {
            CounterOp::Get(c) => t.update_existing(&key, now, |e| t.value(e, c, now))?,
            CounterOp::IncGpc0 if t.store.gpc0 => t.update(&key, now, |e| {
                e.gpc0 = e.gpc0.saturating_add(1);
                t.add(e, Counter::Gpc0Rate, now, 1);
                u64::from(e.gpc0)
            }),
            CounterOp::ClrGpc0 if t.store.gpc0 => {
                t.update_existing(&key, now, |e| u64::from(std::mem::take(&mut e.gpc0)))
            }
            _ => None,
        }
    }

    /// Applies `f` to the entry of every tracked slot `which` selects.
    fn each(
        &mut self,
        which: impl Fn(&Slot) -> bool,
        f: impl Fn(&table::Table, &mut table::Entry, tern_balance::Nanos),
    ) {
        if self.is_idle() {
            return;
        }
        let Some(tracked) = self.0.as_deref() else {
            return;
        };
        let now = now();
        for s in tracked.slots.iter().flatten().filter(|s| which(s)) {
            if let Some(t) = tracked.tables.get(s.table) {
                t.update_existing(&s.key, now, |e| f(t, e, now));
            }
        }
    }

    /// Stops the tracks `which` selects, giving back their `conn_cur`.
    fn release(&mut self, which: impl Fn(&Slot) -> bool) {
        if self.is_idle() {
            return;
        }
        let Some(tracked) = self.0.as_deref_mut() else {
            return;
        };
        let now = now();
        for slot in &mut tracked.slots {
            if let Some(s) = slot.take_if(|s| which(s)).filter(|s| s.owned) {
                if let Some(t) = tracked.tables.get(s.table) {
                    t.update_existing(&s.key, now, |e| e.conn_cur = e.conn_cur.saturating_sub(1));
                }
            }
        }
    }
}

impl Drop for Tracking {
    /// The session ended: every track stops.
    fn drop(&mut self) {
        if !self.is_idle() {
            self.release(|_| true);
        }
    }
}

#[cfg(test)]
mod tests;
