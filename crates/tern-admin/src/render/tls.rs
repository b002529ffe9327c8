//! A frontend's TLS counters, sorted into labelled groups.
//!
//! The proxy names its TLS counters only through [`TlsSnapshot::lines`] (the names of versions,
//! groups and suites live next to the tables that count them). This module reads those names
//! back into groups the renderers can label: the `tls` line is, in order, full-handshake
//! versions, resumed versions, full groups, resumed groups, `cert_*`, `fail_*`, then admission
//! events; `tls_suites` is `full_*` then `resumed_*`; `tls_latency` is `le_<n><unit>` bounds
//! then `gt_*`. A test feeds a snapshot with every counter set and checks that each name lands
//! in a group, so a change of naming in the proxy fails there rather than in a dashboard.

use tern_proxy::stats::TlsSnapshot;

/// `full` or `resumed`.
pub type Kind = &'static str;

/// One counter with its kind (if it has one) and its name within its group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Count {
    pub kind: Option<Kind>,
    pub name: String,
    pub value: u64,
}

/// One latency bucket: handshakes that took at most `le_seconds` (`None`: longer than every
/// bound) and more than the previous bound. Not cumulative.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bucket {
    pub le_seconds: Option<f64>,
    pub count: u64,
}

/// A frontend's TLS counters by group.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TlsBreakdown {
    pub versions: Vec<Count>,
    pub groups: Vec<Count>,
    pub suites: Vec<Count>,
    /// Full handshakes by the key type of the certificate served.
    pub certificates: Vec<Count>,
    pub failures: Vec<Count>,
    pub admission: Vec<Count>,
    /// Empty when a bound could not be read (see the module docs).
    pub latency: Vec<Bucket>,
}

impl TlsBreakdown {
    /// Sorts the counters of `snap`.
    pub fn of(snap: &TlsSnapshot) -> Self {
        let mut out = Self::default();
        let [tls, suites, latency] = snap.lines();
        out.split_tls(tls.1);
        for (name, value) in suites.1 {
            if let Some((kind, rest)) = kind_of(&name) {
                out.suites.push(count(Some(kind), rest, value));
            }
        }
        out.latency = buckets(&latency.1).unwrap_or_default();
        out
    }

    /// Walks the `tls` line through its stages (see the module docs).
    fn split_tls(&mut self, fields: Vec<(String, u64)>) {
        const STAGES: [&str; 7] = [
            "full_", "resumed_", "full_", "resumed_", "cert_", "fail_", "",
        ];
        let mut stage = 0;
        for (name, value) in fields {
            while stage < STAGES.len() - 1 && !name.starts_with(STAGES[stage]) {
                stage += 1;
            }
            let rest = &name[STAGES[stage].len()..];
            let kind = match stage {
                0 | 2 => Some("full"),
                1 | 3 => Some("resumed"),
                _ => None,
            };
            let group = match stage {
                0 | 1 => &mut self.versions,
                2 | 3 => &mut self.groups,
                4 => &mut self.certificates,
                5 => &mut self.failures,
                _ => &mut self.admission,
            };
            group.push(count(kind, rest, value));
        }
    }

    /// Handshakes counted in the latency histogram.
    pub fn handshakes(&self) -> u64 {
        self.latency.iter().map(|b| b.count).sum()
    }
}

fn count(kind: Option<Kind>, name: &str, value: u64) -> Count {
    Count {
        kind,
        name: name.to_owned(),
        value,
    }
}

fn kind_of(name: &str) -> Option<(Kind, &str)> {
    if let Some(rest) = name.strip_prefix("full_") {
        Some(("full", rest))
    } else {
        name.strip_prefix("resumed_").map(|rest| ("resumed", rest))
    }
}

/// Reads `le_100us`, `le_2ms`, `le_5s` and `gt_5s`; `None` if any name is not one of these.
fn buckets(fields: &[(String, u64)]) -> Option<Vec<Bucket>> {
    fields
        .iter()
        .map(|(name, count)| {
            let le_seconds = if name.starts_with("gt_") {
                None
            } else {
                Some(seconds(name.strip_prefix("le_")?)?)
            };
            Some(Bucket {
                le_seconds,
                count: *count,
            })
        })
        .collect()
}

/// `100us`, `2ms`, `5s` in seconds (through whole microseconds, so that `100us` is exactly the
/// double nearest 0.0001 and prints as such).
fn seconds(bound: &str) -> Option<f64> {
    let (digits, micros) = if let Some(n) = bound.strip_suffix("us") {
        (n, 1)
    } else if let Some(n) = bound.strip_suffix("ms") {
        (n, 1_000)
    } else {
        (bound.strip_suffix('s')?, 1_000_000)
    };
    let n: u32 = digits.parse().ok()?;
    Some(f64::from(n.checked_mul(micros)?) / 1e6)
}

#[cfg(test)]
mod tests;
