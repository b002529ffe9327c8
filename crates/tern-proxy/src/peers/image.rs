//! Entries as updates and back: what a shared table's entry looks like on the wire, and what
//! an update from a peer changes in the table.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use tern_balance::Nanos;
use tern_config::Counter;
use tern_peers::table::dt;
use tern_peers::{Freq, Key as WireKey, KeyType, TableDef, Update, Value};

use super::{Kind, Section, Shared};
use crate::track::freq::FreqCtr;
use crate::track::table::{Entry, Key, Table};

/// How many dictionary entries (`server_key`) a session remembers, as HAProxy's cache.
pub(super) const DICT_ENTRIES: u64 = 128;

/// The updates of the entries changed since the last call, for every table of `s`.
pub(super) fn changed(s: &Section, now: Nanos) -> super::Batch {
    let mut batch = Vec::new();
    for (i, t) in s.tables.iter().enumerate() {
        match &t.kind {
            Kind::Stick { backend, servers } => {
                let Some(state) = s.states.get(*backend) else {
                    continue;
                };
                let Some(changes) = &state.stick_changes else {
                    continue;
                };
                for ip in changes.take() {
                    if let Some(server) = state.stick_peek(ip, now) {
                        batch.extend(stick_update(&t.def, ip, server, servers).map(|u| (i, u)));
                    }
                }
            }
            Kind::Counters { table } => {
                let Some(ct) = s.counters.get(*table) else {
                    continue;
                };
                let Some(changes) = &ct.changes else {
                    continue;
                };
                for key in changes.take() {
                    if let Some(e) = ct.peek(&key, now) {
                        batch.extend(counter_update(&t.def, ct, &key, &e, now).map(|u| (i, u)));
                    }
                }
            }
        }
    }
    batch
}

/// Every live entry of table `t` of `s` (a full resync), at most its size.
pub(super) fn all(s: &Section, t: &Shared, now: Nanos) -> Vec<Update> {
    match &t.kind {
        Kind::Stick { backend, servers } => s
            .states
            .get(*backend)
            .map(|state| state.stick_entries(now, usize::MAX))
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(ip, server)| stick_update(&t.def, ip, server, servers))
            .collect(),
        Kind::Counters { table } => {
            let Some(ct) = s.counters.get(*table) else {
                return Vec::new();
            };
            ct.entries(now, usize::MAX)
                .into_iter()
                .filter_map(|(k, e)| counter_update(&t.def, ct, &k, &e, now))
                .collect()
        }
    }
}

fn stick_update(def: &TableDef, ip: IpAddr, server: usize, servers: &[String]) -> Option<Update> {
    let name = servers.get(server)?;
    let values = vec![
        (dt::SERVER_ID, Value::Int(server as u64 + 1)),
        (
            dt::SERVER_KEY,
            Value::Dict {
                id: server as u64 % DICT_ENTRIES + 1,
                text: Some(name.as_bytes().to_vec()),
            },
        ),
    ];
    Some(Update {
        id: None,
        expire_ms: None,
        key: wire_key(def, &Key::Ip(ip))?,
        values,
    })
}

fn counter_update(def: &TableDef, t: &Table, key: &Key, e: &Entry, now: Nanos) -> Option<Update> {
    let mut values = Vec::new();
    for d in def.types() {
        let c = counter(d)?;
        let v = match c {
            Counter::ConnCnt => Value::Int(u64::from(e.conn_cnt)),
            Counter::HttpReqCnt => Value::Int(u64::from(e.http_req_cnt)),
            Counter::Gpc0 => Value::Int(u64::from(e.gpc0)),
            rate => {
                let f = e.rate(rate).copied().unwrap_or_default();
                let (elapsed_ms, curr, prev) = f.to_wire(now, t.period(rate).unwrap_or(1));
                Value::Freq(Freq {
                    elapsed_ms,
                    curr,
                    prev,
                })
            }
        };
        values.push((d, v));
    }
    Some(Update {
        id: None,
        expire_ms: None,
        key: wire_key(def, key)?,
        values,
    })
}

/// tern's counter of a data type (`None` for one tern does not keep).
fn counter(d: u8) -> Option<Counter> {
    Some(match d {
        dt::CONN_CNT => Counter::ConnCnt,
        dt::CONN_RATE => Counter::ConnRate,
        dt::HTTP_REQ_CNT => Counter::HttpReqCnt,
        dt::HTTP_REQ_RATE => Counter::HttpReqRate,
        dt::HTTP_ERR_RATE => Counter::HttpErrRate,
        dt::BYTES_IN_RATE => Counter::BytesInRate,
        dt::BYTES_OUT_RATE => Counter::BytesOutRate,
        dt::GPC0 => Counter::Gpc0,
        dt::GPC0_RATE => Counter::Gpc0Rate,
        _ => return None,
    })
}

/// A key on the wire; `None` for one the table's wire type cannot hold (an IPv6 client in a
/// `type ip` table, as HAProxy's).
fn wire_key(def: &TableDef, key: &Key) -> Option<WireKey> {
    Some(match (def.key_type, key) {
        (KeyType::Ipv4, Key::Ip(IpAddr::V4(a))) => WireKey::Ipv4(a.octets()),
        (KeyType::Ipv4, Key::Ip(IpAddr::V6(a))) => WireKey::Ipv4(a.to_ipv4_mapped()?.octets()),
        (KeyType::Ipv6, Key::Ip(IpAddr::V4(a))) => WireKey::Ipv6(a.to_ipv6_mapped().octets()),
        (KeyType::Ipv6, Key::Ip(IpAddr::V6(a))) => WireKey::Ipv6(a.octets()),
        (KeyType::Sint, Key::Int(n)) => WireKey::Int(u32::try_from(*n).ok()?),
        (KeyType::Str, Key::Text(t)) => WireKey::Str(t.to_vec()),
        _ => return None,
    })
}

/// A wire key as a key of a table of `key_type` (tern's own key type, from its definition).
fn local_key(key: &WireKey) -> Option<Key> {
    Some(match key {
        WireKey::Ipv4(a) => Key::Ip(IpAddr::V4(Ipv4Addr::from(*a))),
        WireKey::Ipv6(a) => Key::Ip(Ipv6Addr::from(*a).to_canonical()),
        WireKey::Int(n) => Key::Int(u64::from(*n)),
        WireKey::Str(t) => Key::Text(t.as_slice().into()),
        WireKey::Bin(_) => return None,
    })
}

/// Applies an update from a peer to table `t` of `s`; `server_key` texts are looked up in
/// `dict` (the session's dictionary cache). Returns whether the entry was taken.
pub(super) fn apply(
    s: &Section,
    t: &Shared,
    u: &Update,
    dict: &[Option<Vec<u8>>],
    now: Nanos,
) -> bool {
    let Some(key) = local_key(&u.key) else {
        return false;
    };
    match &t.kind {
        Kind::Stick { backend, servers } => {
            let Key::Ip(ip) = key else { return false };
            let Some(server) = server_of(u, dict, servers) else {
                return false;
            };
            let Some(state) = s.states.get(*backend) else {
                return false;
            };
            state.learn_stick(ip, server, now);
            true
        }
        Kind::Counters { table } => {
            let Some(ct) = s.counters.get(*table) else {
                return false;
            };
            ct.learn(&key, now, |e| set_counters(ct, e, u, now))
                .is_some()
        }
    }
}

/// The server an update names: by `server_key` (its name) when it matches one, else by
/// `server_id` (HAProxy's 1-based default numbering).
fn server_of(u: &Update, dict: &[Option<Vec<u8>>], servers: &[String]) -> Option<usize> {
    let text = match u.get(dt::SERVER_KEY) {
        Some(Value::Dict { text: Some(t), .. }) => Some(t.as_slice()),
        Some(Value::Dict { id, text: None }) => dict
            .get(usize::try_from(*id).ok()?.checked_sub(1)?)?
            .as_deref(),
        _ => None,
    };
    if let Some(i) = text.and_then(|t| servers.iter().position(|s| s.as_bytes() == t)) {
        return Some(i);
    }
    match u.get(dt::SERVER_ID) {
        Some(Value::Int(id)) => {
            let i = usize::try_from(*id).ok()?.checked_sub(1)?;
            (i < servers.len()).then_some(i)
        }
        _ => None,
    }
}

/// Merges a peer's counters into this node's entry. Counts and rates keep the larger of the
/// two (a peer's value includes what it learnt from this node, so each node converges on the
/// fleet's total, missing only increments made on two nodes within one update interval):
/// replacing them, as HAProxy does, lets each node overwrite the others' requests, and a rate
/// limit spread over N nodes would let through up to N times its limit. `gpc0` is replaced,
/// so a clear (`sc-clr-gpc0`) on one node reaches the others.
fn set_counters(t: &Table, e: &mut Entry, u: &Update, now: Nanos) {
    for (d, v) in &u.values {
        let Some(c) = counter(*d).filter(|c| t.store.keeps(*c)) else {
            continue;
        };
        let clamp = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
        match (c, v) {
            (Counter::ConnCnt, Value::Int(n)) => e.conn_cnt = e.conn_cnt.max(clamp(*n)),
            (Counter::HttpReqCnt, Value::Int(n)) => e.http_req_cnt = e.http_req_cnt.max(clamp(*n)),
            (Counter::Gpc0, Value::Int(n)) => e.gpc0 = clamp(*n),
            (rate, Value::Freq(f)) => {
                let period = t.period(rate).unwrap_or(1);
                if let Some(r) = e.rate_mut(rate) {
                    let learnt = FreqCtr::from_wire(now, f.elapsed_ms, f.curr, f.prev);
                    if learnt.rate(now, period) >= r.rate(now, period) {
                        *r = learnt;
                    }
                }
            }
            _ => {}
        }
    }
}
