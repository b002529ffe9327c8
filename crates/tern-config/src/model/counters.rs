//! Stick-table counters: per-key request counters for rate limits and abuse control
//! (HAProxy's `stick-table ... store`, `track-sc0|1|2`, and the `sc*_` and `src_` fetches).
//!
//! A [`CounterTable`] is declared once (`[[table]]`) and shared by every frontend and backend
//! that names it. A rule *tracks* a key in it (`track-sc0 src`): the entry of that key counts
//! the connections and requests of whoever tracks it, and conditions read the counters back
//! through a tracking slot (`sc0_http_req_rate`) or by the client's address
//! (`src_http_req_rate(T)`). Table names are resolved to indexes during validation
//! ([`TableRef`]), so the data path never looks a name up.

use std::time::Duration;

use super::Fetch;

/// A table of counters (`[[table]]`, HAProxy's `stick-table` with `store`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterTable {
    pub name: String,
    /// What a key is.
    pub key: TableKey,
    /// The most entries held at once; a full table evicts the least recently used.
    pub size: usize,
    /// An entry is forgotten this long after its last use.
    pub expire: Duration,
    /// What each entry counts.
    pub store: Store,
    /// The peers section (index in `Config::peers`) the entries are shared with.
    pub peers: Option<usize>,
}

/// The type of a table's keys (`type ip|ipv6|string|integer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableKey {
    /// IPv4 addresses (IPv6 ones are kept too, as HAProxy's IPv4-mapped keys).
    Ip,
    Ipv6,
    /// Text, at most [`MAX_STRING_KEY`] bytes (longer samples are cut, as HAProxy's `len`).
    String,
    /// A decimal integer sample.
    Integer,
}

/// The longest string key kept (HAProxy's default `len` for `type string`).
pub const MAX_STRING_KEY: usize = 32;

/// The counters a table stores (`store ...`); rates carry their period.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Store {
    pub conn_cur: bool,
    pub conn_cnt: bool,
    pub conn_rate: Option<Duration>,
    pub http_req_cnt: bool,
    pub http_req_rate: Option<Duration>,
    pub http_err_rate: Option<Duration>,
    pub bytes_in_rate: Option<Duration>,
    pub bytes_out_rate: Option<Duration>,
    pub gpc0: bool,
    pub gpc0_rate: Option<Duration>,
}

/// One counter of an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counter {
    ConnCur,
    ConnCnt,
    ConnRate,
    HttpReqCnt,
    HttpReqRate,
    HttpErrRate,
    BytesInRate,
    BytesOutRate,
    Gpc0,
    Gpc0Rate,
}

impl Counter {
    /// Every counter, in the order `show table` lists them.
    pub const ALL: [Counter; 10] = [
        Counter::ConnCur,
        Counter::ConnCnt,
        Counter::ConnRate,
        Counter::HttpReqCnt,
        Counter::HttpReqRate,
        Counter::HttpErrRate,
        Counter::BytesInRate,
        Counter::BytesOutRate,
        Counter::Gpc0,
        Counter::Gpc0Rate,
    ];

    /// HAProxy's name of the counter (`http_req_rate`).
    pub fn name(self) -> &'static str {
        match self {
            Counter::ConnCur => "conn_cur",
            Counter::ConnCnt => "conn_cnt",
            Counter::ConnRate => "conn_rate",
            Counter::HttpReqCnt => "http_req_cnt",
            Counter::HttpReqRate => "http_req_rate",
            Counter::HttpErrRate => "http_err_rate",
            Counter::BytesInRate => "bytes_in_rate",
            Counter::BytesOutRate => "bytes_out_rate",
            Counter::Gpc0 => "gpc0",
            Counter::Gpc0Rate => "gpc0_rate",
        }
    }

    /// The counter named `name`.
    pub fn named(name: &str) -> Option<Counter> {
        Counter::ALL.into_iter().find(|c| c.name() == name)
    }

    /// Whether the counter is a rate over a period.
    pub fn is_rate(self) -> bool {
        matches!(
            self,
            Counter::ConnRate
                | Counter::HttpReqRate
                | Counter::HttpErrRate
                | Counter::BytesInRate
                | Counter::BytesOutRate
                | Counter::Gpc0Rate
        )
    }
}

impl Store {
    /// Whether the table keeps `counter`.
    pub fn keeps(&self, counter: Counter) -> bool {
        match counter {
            Counter::ConnCur => self.conn_cur,
            Counter::ConnCnt => self.conn_cnt,
            Counter::HttpReqCnt => self.http_req_cnt,
            Counter::Gpc0 => self.gpc0,
            rate => self.period(rate).is_some(),
        }
    }

    /// The period of a stored rate.
    pub fn period(&self, counter: Counter) -> Option<Duration> {
        match counter {
            Counter::ConnRate => self.conn_rate,
            Counter::HttpReqRate => self.http_req_rate,
            Counter::HttpErrRate => self.http_err_rate,
            Counter::BytesInRate => self.bytes_in_rate,
            Counter::BytesOutRate => self.bytes_out_rate,
            Counter::Gpc0Rate => self.gpc0_rate,
            _ => None,
        }
    }

    /// Keeps `counter`, with `period` for a rate.
    pub fn set(&mut self, counter: Counter, period: Option<Duration>) {
        match counter {
            Counter::ConnCur => self.conn_cur = true,
            Counter::ConnCnt => self.conn_cnt = true,
            Counter::HttpReqCnt => self.http_req_cnt = true,
            Counter::Gpc0 => self.gpc0 = true,
            Counter::ConnRate => self.conn_rate = period,
            Counter::HttpReqRate => self.http_req_rate = period,
            Counter::HttpErrRate => self.http_err_rate = period,
            Counter::BytesInRate => self.bytes_in_rate = period,
            Counter::BytesOutRate => self.bytes_out_rate = period,
            Counter::Gpc0Rate => self.gpc0_rate = period,
        }
    }
}

/// A table named in a rule or fetch, resolved to its index in [`super::Config::tables`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableRef {
    /// As written; empty for "the table named like this frontend or backend" (HAProxy's
    /// default: the current proxy's own table).
    pub name: String,
    pub index: usize,
}

impl TableRef {
    /// A reference to be resolved by validation.
    pub fn named(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            index: usize::MAX,
        }
    }
}

/// A sample of a table's counters (`sc0_http_req_rate`, `src_conn_rate(T)`, `sc_inc_gpc0(0)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterFetch {
    pub source: CounterSource,
    pub op: CounterOp,
}

/// Which entry a counter fetch reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CounterSource {
    /// The entry tracked in slot 0, 1 or 2 (`sc0_...`, `sc_...(0)`); absent when nothing is
    /// tracked there.
    Tracked(u8),
    /// The entry of the client's address in a table (`src_...`); absent when it has none.
    Src(TableRef),
}

/// What a counter fetch does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CounterOp {
    /// Reads a counter (`..._get_gpc0` reads `gpc0`).
    Get(Counter),
    /// Adds one to `gpc0` (and `gpc0_rate`) and returns the new value (`..._inc_gpc0`).
    IncGpc0,
    /// Sets `gpc0` to zero and returns the value it had (`..._clr_gpc0`).
    ClrGpc0,
}

/// A `track-sc0|1|2` action: the entry of `key`'s sample in `table` is tracked in `slot`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Track {
    pub slot: u8,
    pub key: Fetch,
    pub table: TableRef,
}

/// The tracking slots (HAProxy's default `tune.stick-counters`).
pub const TRACK_SLOTS: u8 = 3;
