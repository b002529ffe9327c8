//! The counter tables of a generation, shared by all its workers.
//!
//! One [`tern_balance::StickTable`] per `[[table]]` behind a mutex: the same LRU, expiry and
//! `size` bound as source stickiness, with an [`Entry`] of counters as the value. Every update
//! and read is one short critical section (a hash lookup and a few additions), so a counter
//! is exact across workers; only the rates are estimates ([`super::freq`]). Frontends whose
//! rules track nothing never touch a table. Memory per entry: at most about 300 bytes, plus a
//! string key's bytes (docs/configuration.md, "Rate limits"; the sizes are pinned by a test).

use std::net::IpAddr;
use std::sync::{Mutex, MutexGuard};

use tern_balance::{Nanos, StickTable};
use tern_config::{Counter, CounterTable, Store, TableKey};

use super::freq::FreqCtr;
use crate::exchange::servers::now;
use crate::peers::changes::Changes;

/// The most entries `show table` lists.
pub(crate) const SHOW_LIMIT: usize = 10_000;

/// A key of a table.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Key {
    Ip(IpAddr),
    Text(Box<[u8]>),
    Int(u64),
}

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Key::Ip(ip) => write!(f, "{ip}"),
            Key::Text(t) => write!(f, "{}", String::from_utf8_lossy(t)),
            Key::Int(n) => write!(f, "{n}"),
        }
    }
}

/// The counters of one key.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Entry {
    pub conn_cur: u32,
    pub conn_cnt: u32,
    pub http_req_cnt: u32,
    pub gpc0: u32,
    pub conn_rate: FreqCtr,
    pub http_req_rate: FreqCtr,
    pub http_err_rate: FreqCtr,
    pub bytes_in_rate: FreqCtr,
    pub bytes_out_rate: FreqCtr,
    pub gpc0_rate: FreqCtr,
}

/// One table.
#[derive(Debug)]
pub(crate) struct Table {
    pub name: String,
    pub key: TableKey,
    pub store: Store,
    entries: Mutex<StickTable<Key, Entry>>,
    /// Keys changed since the peers were last sent them, when the table is shared.
    pub(crate) changes: Option<Changes<Key>>,
}

/// Every table of a generation, in configuration order.
#[derive(Debug, Default)]
pub(crate) struct Tables(Vec<Table>);

impl Tables {
    pub(crate) fn build(tables: &[CounterTable]) -> Self {
        Self(
            tables
                .iter()
                .map(|t| Table {
                    name: t.name.clone(),
                    key: t.key,
                    store: t.store,
                    entries: Mutex::new(StickTable::new(t.size, t.expire)),
                    changes: t.peers.map(|_| Changes::new(t.size)),
                })
                .collect(),
        )
    }

    pub(crate) fn get(&self, i: usize) -> Option<&Table> {
        self.0.get(i)
    }

    /// Every table, in configuration order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Table> {
        self.0.iter()
    }

    /// The table named `name`, or an error listing the tables.
    fn named(&self, name: &str) -> Result<&Table, String> {
        self.0.iter().find(|t| t.name == name).ok_or_else(|| {
            let names: Vec<&str> = self.0.iter().map(|t| t.name.as_str()).collect();
            if names.is_empty() {
                format!("no table named '{name}': the configuration declares none")
            } else {
                format!("no table named '{name}': tables are {}", names.join(", "))
            }
        })
    }

    /// `show table [NAME [key K]]`: one line per table, or a table's header line and its
    /// entries (at most [`SHOW_LIMIT`]), least recently used first.
    pub(crate) fn show(&self, name: Option<&str>, key: Option<&str>) -> Result<String, String> {
        let Some(name) = name else {
            let lines: Vec<String> = self.0.iter().map(|t| t.header(now())).collect();
            return Ok(lines.join("\n"));
        };
        let t = self.named(name)?;
        let key = key.map(|k| t.parse_key(k)).transpose()?;
        let now = now();
        let mut out = t.header(now);
        for line in t.dump(key.as_ref(), SHOW_LIMIT, now) {
            out.push('\n');
            out.push_str(&line);
        }
        Ok(out)
    }

    /// `clear table NAME [key K]`: what was forgotten.
    pub(crate) fn clear(&self, name: &str, key: Option<&str>) -> Result<String, String> {
        let t = self.named(name)?;
        let key = key.map(|k| t.parse_key(k)).transpose()?;
        let n = t.clear(key.as_ref());
        Ok(format!("table {name}: {n} entries cleared"))
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Table {
    /// The entries, locked (a poisoned lock still holds consistent counters: taken over).
    fn lock(&self) -> MutexGuard<'_, StickTable<Key, Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Changes the entry of `key` (made if missing) and returns what `f` returns; `None` for a
    /// table of size 0.
    pub(crate) fn update<R>(
        &self,
        key: &Key,
        now: Nanos,
        f: impl FnOnce(&mut Entry) -> R,
    ) -> Option<R> {
        let r = self.learn(key, now, f);
        if let Some(c) = &self.changes {
            c.mark(key);
        }
        r
    }

    /// [`Table::update`] for a value learnt from a peer: not sent back to the peers.
    pub(crate) fn learn<R>(
        &self,
        key: &Key,
        now: Nanos,
        f: impl FnOnce(&mut Entry) -> R,
    ) -> Option<R> {
        let mut t = self.lock();
        t.get_or_insert_with(key, now, Entry::default).map(f)
    }

    /// The value of `key`, without refreshing it.
    pub(crate) fn peek(&self, key: &Key, now: Nanos) -> Option<Entry> {
        self.lock().peek(key, now).copied()
    }

    /// Every live entry (at most `limit`), least recently used first.
    pub(crate) fn entries(&self, now: Nanos, limit: usize) -> Vec<(Key, Entry)> {
        let t = self.lock();
        t.iter(now)
            .take(limit)
            .map(|(k, e)| (k.clone(), *e))
            .collect()
    }

    /// Changes the entry of `key` if it exists.
    pub(crate) fn update_existing<R>(
        &self,
        key: &Key,
        now: Nanos,
        f: impl FnOnce(&mut Entry) -> R,
    ) -> Option<R> {
        let r = self.lock().get_mut(key, now).map(f);
        if let (Some(c), Some(_)) = (&self.changes, &r) {
            c.mark(key);
        }
        r
    }

    /// The period of a stored rate, in nanoseconds.
    pub(crate) fn period(&self, counter: Counter) -> Option<Nanos> {
        let p = self.store.period(counter)?;
        Some(u64::try_from(p.as_nanos()).unwrap_or(u64::MAX))
    }

    /// Adds `n` to a stored rate of `e`.
    pub(crate) fn add(&self, e: &mut Entry, counter: Counter, now: Nanos, n: u32) {
        if let Some(period) = self.period(counter) {
            if let Some(f) = e.rate_mut(counter) {
                f.add(now, period, n);
            }
        }
    }

    /// The value of a stored counter of `e`; `None` when not stored.
    pub(crate) fn value(&self, e: &Entry, counter: Counter, now: Nanos) -> Option<u64> {
        if !self.store.keeps(counter) {
            return None;
        }
        Some(match counter {
            Counter::ConnCur => u64::from(e.conn_cur),
            Counter::ConnCnt => u64::from(e.conn_cnt),
            Counter::HttpReqCnt => u64::from(e.http_req_cnt),
            Counter::Gpc0 => u64::from(e.gpc0),
            rate => {
                let period = self.period(rate)?;
                e.rate(rate)?.rate(now, period)
            }
        })
    }

    /// `# table: NAME, type: ip, size: N, used: M`, as HAProxy's `show table`.
    fn header(&self, now: Nanos) -> String {
        let mut t = self.lock();
        t.purge(now);
        let kind = match self.key {
            TableKey::Ip => "ip",
            TableKey::Ipv6 => "ipv6",
            TableKey::String => "string",
            TableKey::Integer => "integer",
        };
        format!(
            "# table: {}, type: {kind}, size: {}, used: {}",
            self.name,
            t.size(),
            t.len()
        )
    }

    /// Every live entry at `now` (at most `limit`, or that of `only`), with the stored
    /// counters, for `show table`.
    fn dump(&self, only: Option<&Key>, limit: usize, now: Nanos) -> Vec<String> {
        let t = self.lock();
        t.iter(now)
            .filter(|(k, _)| only.is_none_or(|o| o == *k))
            .take(limit)
            .map(|(k, e)| {
                let mut line = format!("key={k}");
                for c in Counter::ALL {
                    if let Some(v) = self.value(e, c, now) {
                        let name = match (c, self.store.period(c)) {
                            (_, Some(p)) => format!("{}({})", c.name(), p.as_millis()),
                            _ => c.name().to_owned(),
                        };
                        line.push_str(&format!(" {name}={v}"));
                    }
                }
                line
            })
            .collect()
    }

    /// Forgets `key`, or every entry; how many were forgotten.
    fn clear(&self, key: Option<&Key>) -> usize {
        let mut t = self.lock();
        match key {
            Some(k) => usize::from(t.remove(k).is_some()),
            None => {
                let n = t.len();
                t.clear();
                n
            }
        }
    }

    /// `text` as a key of this table (for `show table NAME key K`).
    fn parse_key(&self, text: &str) -> Result<Key, String> {
        let key = match self.key {
            TableKey::Ip | TableKey::Ipv6 => text
                .parse::<IpAddr>()
                .ok()
                .map(|ip| Key::Ip(ip.to_canonical())),
            TableKey::Integer => text.parse().ok().map(Key::Int),
            TableKey::String => Some(Key::Text(text.as_bytes().into())),
        };
        key.ok_or_else(|| format!("'{text}' is not a key of table '{}'", self.name))
    }
}

impl Entry {
    pub(crate) fn rate(&self, counter: Counter) -> Option<&FreqCtr> {
        Some(match counter {
            Counter::ConnRate => &self.conn_rate,
            Counter::HttpReqRate => &self.http_req_rate,
            Counter::HttpErrRate => &self.http_err_rate,
            Counter::BytesInRate => &self.bytes_in_rate,
            Counter::BytesOutRate => &self.bytes_out_rate,
            Counter::Gpc0Rate => &self.gpc0_rate,
            _ => return None,
        })
    }

    pub(crate) fn rate_mut(&mut self, counter: Counter) -> Option<&mut FreqCtr> {
        Some(match counter {
            Counter::ConnRate => &mut self.conn_rate,
            Counter::HttpReqRate => &mut self.http_req_rate,
            Counter::HttpErrRate => &mut self.http_err_rate,
            Counter::BytesInRate => &mut self.bytes_in_rate,
            Counter::BytesOutRate => &mut self.bytes_out_rate,
            Counter::Gpc0Rate => &mut self.gpc0_rate,
            _ => return None,
        })
    }
}
