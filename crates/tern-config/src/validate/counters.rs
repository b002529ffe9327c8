//! Counter tables (`[[table]]`), `track-sc0|1|2` actions and the tables counter fetches name
//! (see `model/counters.rs`).
//!
//! Tables are named by rules and fetches before all tables are known (a frontend may track in
//! a table declared after it), so references are resolved in a last pass over the finished
//! model ([`Checker::resolve_tables`]). An unnamed table (`src_conn_rate`, `track-sc0 src`
//! without `table`) is the one named like the frontend or backend holding the rule, as in
//! HAProxy, where a proxy's own `stick-table` is the default.

use std::time::Duration;

use super::condition::key_fetch;
use super::Checker;
use crate::locate::KeyPath;
use crate::model::{
    Backend, Condition, ConnectionAction, Counter, CounterOp, CounterSource, CounterTable, Fetch,
    Frontend, HttpAction, HttpRule, Piece, Store, TableKey, TableRef, Track,
};
use crate::raw::RawTable;

/// The largest `size`: 16 Mi entries (at most about 5 GiB at the documented cost per entry).
const MAX_SIZE: u64 = 1 << 24;

impl Checker<'_> {
    /// The `[[table]]` list, at `path`.
    pub(super) fn tables(&mut self, raw: &[RawTable], path: &KeyPath) -> Vec<CounterTable> {
        let tables: Vec<CounterTable> = raw
            .iter()
            .enumerate()
            .map(|(i, t)| self.table(t, &path.index(i)))
            .collect();
        self.unique_names("table", raw.iter().map(|t| t.name.as_deref()));
        tables
    }

    fn table(&mut self, raw: &RawTable, at: &KeyPath) -> CounterTable {
        let name = self.name(at, raw.name.as_deref());
        let key = match raw.type_.as_deref() {
            Some("ip") => TableKey::Ip,
            Some("ipv6") => TableKey::Ipv6,
            Some("string") => TableKey::String,
            Some("integer") => TableKey::Integer,
            Some(other) => {
                let message =
                    format!("unknown table type `{other}`: expected ip, ipv6, string or integer");
                self.issue(&at.key("type"), message);
                TableKey::Ip
            }
            None => {
                self.issue(at, "missing key `type`: ip, ipv6, string or integer");
                TableKey::Ip
            }
        };
        if raw.size.is_none() {
            self.issue(
                at,
                "missing key `size`: the most entries held, e.g. \"100k\"",
            );
        }
        let size = self.size_in(&at.key("size"), raw.size.as_ref(), 1..=MAX_SIZE, 1) as usize;
        let expire = self.opt_duration(&at.key("expire"), raw.expire.as_ref());
        let expire = match expire {
            Some(d) if d.is_zero() => {
                self.issue(&at.key("expire"), "must be more than 0");
                d
            }
            Some(d) => d,
            None => {
                self.issue(
                    at,
                    "missing key `expire`: how long an unused entry is kept, e.g. \"30s\"",
                );
                Duration::from_secs(1)
            }
        };
        let mut store = Store::default();
        for (i, text) in raw.store.iter().flatten().enumerate() {
            match store_item(text) {
                Ok((counter, period)) => store.set(counter, period),
                Err(e) => self.issue(&at.key("store").index(i), e),
            }
        }
        if store == Store::default() {
            self.issue(
                at,
                "missing key `store`: the counters to keep, e.g. [\"http_req_rate(10s)\"]",
            );
        }
        let peers = self.peers_ref(&at.key("peers"), raw.peers.as_deref());
        CounterTable {
            name,
            key,
            size,
            expire,
            store,
            peers,
        }
    }

    /// A `track-sc0|1|2` action (`action` names the slot) with its `key` and `table`.
    pub(super) fn track(
        &mut self,
        action: &str,
        key: Option<&str>,
        table: Option<&str>,
        at: &KeyPath,
    ) -> Option<Track> {
        let slot = match action {
            "track-sc0" => 0,
            "track-sc1" => 1,
            _ => 2,
        };
        let Some(key) = key else {
            self.issue(at, "missing key `key`: the sample tracked, e.g. \"src\"");
            return None;
        };
        match key_fetch(key) {
            Ok(fetch) => Some(Track {
                slot,
                key: fetch,
                table: TableRef::named(table.unwrap_or("")),
            }),
            Err(e) => {
                self.issue(&at.key("key"), e);
                None
            }
        }
    }

    /// Resolves every table reference of the frontends and backends against `tables`.
    pub(super) fn resolve_tables(
        &mut self,
        tables: &[CounterTable],
        frontends: &mut [Frontend],
        backends: &mut [Backend],
    ) {
        let root = KeyPath::root();
        for (i, fe) in frontends.iter_mut().enumerate() {
            let at = root.key("frontend").index(i);
            let own = fe.name.clone();
            let mut r = Resolver {
                tables,
                own: &own,
                checker: self,
            };
            r.rules(&mut fe.http_request, &at.key("http_request"));
            r.rules(&mut fe.http_response, &at.key("http_response"));
            for (j, route) in fe.use_backend.iter_mut().enumerate() {
                r.condition(&mut route.condition, &at.key("use_backend").index(j));
            }
            let tcp = at.key("tcp_request");
            for (j, rule) in fe.tcp_request.content.iter_mut().enumerate() {
                r.condition(&mut rule.condition, &tcp.key("content").index(j));
            }
            for (j, rule) in fe.tcp_request.connection.iter_mut().enumerate() {
                let at = tcp.key("connection").index(j);
                r.condition(&mut rule.condition, &at);
                if let ConnectionAction::Track(t) = &mut rule.action {
                    r.track(t, &at);
                }
            }
        }
        for (i, be) in backends.iter_mut().enumerate() {
            let at = root.key("backend").index(i);
            let own = be.name.clone();
            let mut r = Resolver {
                tables,
                own: &own,
                checker: self,
            };
            r.rules(&mut be.http_request, &at.key("http_request"));
            r.rules(&mut be.http_response, &at.key("http_response"));
        }
    }
}

/// One frontend's or backend's resolution of table names.
struct Resolver<'a, 'c, 'b> {
    tables: &'a [CounterTable],
    /// The name of the frontend or backend: the default table's.
    own: &'a str,
    checker: &'c mut Checker<'b>,
}

impl Resolver<'_, '_, '_> {
    fn rules(&mut self, rules: &mut [HttpRule], path: &KeyPath) {
        for (j, rule) in rules.iter_mut().enumerate() {
            let at = path.index(j);
            self.condition(&mut rule.condition, &at);
            if let HttpAction::Track(t) = &mut rule.action {
                self.track(t, &at);
            }
            let values = match &mut rule.action {
                HttpAction::SetHeader { value, .. }
                | HttpAction::AddHeader { value, .. }
                | HttpAction::SetLine { value, .. }
                | HttpAction::SetVar { value, .. } => Some(value),
                _ => None,
            };
            for piece in values.into_iter().flat_map(|v| v.pieces.iter_mut()) {
                if let Piece::Fetch(f) = piece {
                    self.fetch(f, &at);
                }
            }
        }
    }

    fn condition(&mut self, condition: &mut Condition, at: &KeyPath) {
        for fetch in condition.fetches_mut() {
            self.fetch(fetch, at);
        }
    }

    fn fetch(&mut self, fetch: &mut Fetch, at: &KeyPath) {
        if let Fetch::Counter(c) = fetch {
            if let CounterSource::Src(table) = &mut c.source {
                if let Some(i) = self.table(table, at) {
                    self.stored(i, c.op, at);
                }
            }
        }
    }

    fn track(&mut self, track: &mut Track, at: &KeyPath) {
        let Some(i) = self.table(&mut track.table, at) else {
            return;
        };
        let ip_key = matches!(track.key, Fetch::Src);
        let table = &self.tables[i];
        let fits = match table.key {
            TableKey::Ip | TableKey::Ipv6 => ip_key,
            TableKey::String => true,
            TableKey::Integer => matches!(track.key, Fetch::DstPort | Fetch::HelloType),
        };
        if !fits {
            let message = format!(
                "table `{}` is of type {:?}: a key of {:?} does not fit it (ip and ipv6 tables \
                 take `src`, integer tables `dst_port`, string tables any text sample)",
                table.name, table.key, track.key
            );
            self.checker.issue(&at.key("key"), message);
        }
    }

    /// The index of the table `table` names (the own table when unnamed), after an issue
    /// when there is none.
    fn table(&mut self, table: &mut TableRef, at: &KeyPath) -> Option<usize> {
        let name = if table.name.is_empty() {
            self.own
        } else {
            table.name.as_str()
        };
        match self.tables.iter().position(|t| t.name == name) {
            Some(i) => {
                table.index = i;
                Some(i)
            }
            None => {
                let known: Vec<&str> = self.tables.iter().map(|t| t.name.as_str()).collect();
                let unnamed = if table.name.is_empty() {
                    " (no table was named, so the one named like this frontend or backend)"
                } else {
                    ""
                };
                let message = if known.is_empty() {
                    format!("no [[table]] named `{name}`{unnamed}: none is declared")
                } else {
                    format!(
                        "no [[table]] named `{name}`{unnamed}: declared are {}",
                        known.join(", ")
                    )
                };
                self.checker.issue(at, message);
                None
            }
        }
    }

    /// Reports a `src_` fetch of a counter its table does not store (it would never match).
    fn stored(&mut self, table: usize, op: CounterOp, at: &KeyPath) {
        let counter = match op {
            CounterOp::Get(c) => c,
            CounterOp::IncGpc0 | CounterOp::ClrGpc0 => Counter::Gpc0,
        };
        let t = &self.tables[table];
        if !t.store.keeps(counter) {
            let message = format!(
                "table `{}` does not store {}: add it to its `store`",
                t.name,
                counter.name()
            );
            self.checker.issue(at, message);
        }
    }
}

/// One `store` item: `conn_cur`, `http_req_rate(10s)`.
fn store_item(text: &str) -> Result<(Counter, Option<Duration>), String> {
    let (name, arg) = match text.split_once('(') {
        Some((name, rest)) => {
            let arg = rest
                .strip_suffix(')')
                .ok_or_else(|| format!("`{text}`: a `(` is not closed"))?;
            (name, Some(arg))
        }
        None => (text, None),
    };
    let known = || {
        let names: Vec<&str> = Counter::ALL.iter().map(|c| c.name()).collect();
        format!(
            "unknown counter `{name}`: expected one of {} (rates with their period: \
             http_req_rate(10s))",
            names.join(", ")
        )
    };
    let counter = Counter::named(name).ok_or_else(known)?;
    match (counter.is_rate(), arg) {
        (true, Some(period)) => match crate::units::parse_duration(period) {
            Ok(d) if !d.is_zero() => Ok((counter, Some(d))),
            Ok(_) => Err(format!("`{text}`: the period must be more than 0")),
            Err(e) => Err(format!("`{text}`: {e}")),
        },
        (true, None) => Err(format!(
            "`{name}` is a rate: give its period, e.g. {name}(10s)"
        )),
        (false, Some(_)) => Err(format!("`{name}` takes no period")),
        (false, None) => Ok((counter, None)),
    }
}

#[cfg(test)]
mod tests;
