//! Per-object rates for `show stat`: sessions and requests per second of each frontend,
//! requests per second of each backend and server, over the last [`WINDOW`].
//!
//! Sampled with the process-wide rates (`rates.rs`), once a second on the API thread, keyed
//! by name (servers come and go with `add server`/`del server`, and a reload may reorder
//! them). An object whose total went down, or that is new, has no rate until it has two
//! samples.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::rates::WINDOW;
use crate::View;

/// Totals by key (`frontend NAME sessions`, `backend NAME requests`, `server B/S requests`).
type Totals = HashMap<String, u64>;

/// The sampled totals, shared by the sampler and the commands.
#[derive(Debug, Clone, Default)]
pub struct ObjectRates {
    samples: Arc<Mutex<VecDeque<(Instant, Totals)>>>,
}

/// Rates by key, per second.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Current(HashMap<String, f64>);

impl Current {
    /// The rate of `key`, if known.
    pub fn get(&self, key: &str) -> Option<f64> {
        self.0.get(key).copied()
    }

    /// A rate as a table cell: one decimal, `-` when unknown.
    pub fn cell(&self, key: &str) -> String {
        self.get(key)
            .map_or_else(|| "-".to_owned(), |r| format!("{r:.1}"))
    }

    /// `{key: rate}`, sorted by key.
    pub fn to_json(&self) -> serde_json::Value {
        let mut keys: Vec<&String> = self.0.keys().collect();
        keys.sort();
        serde_json::Value::Object(
            keys.into_iter()
                .map(|k| (k.clone(), ((self.0[k] * 10.0).round() / 10.0).into()))
                .collect(),
        )
    }
}

/// The key of a frontend's, backend's or server's counter.
pub fn key(kind: &str, name: &str, counter: &str) -> String {
    format!("{kind} {name} {counter}")
}

fn totals(view: &View) -> Totals {
    let mut out = Totals::new();
    let stats = &view.stats;
    for (fe, c) in view.config.frontends.iter().zip(&stats.frontends) {
        out.insert(key("frontend", &fe.name, "sessions"), c.sessions);
        out.insert(key("frontend", &fe.name, "requests"), c.requests);
    }
    for (b, be) in view.config.backends.iter().enumerate() {
        if let Some(c) = stats.backends.get(b) {
            out.insert(key("backend", &be.name, "requests"), c.requests);
        }
        for (server, c) in be
            .servers
            .iter()
            .zip(stats.servers.get(b).into_iter().flatten())
        {
            let name = format!("{}/{}", be.name, server.name);
            out.insert(key("server", &name, "requests"), c.requests);
        }
    }
    out
}

impl ObjectRates {
    /// Records the totals of `view`, taken at `at`.
    pub fn record(&self, view: &View, at: Instant) {
        let sample = totals(view);
        let Ok(mut samples) = self.samples.lock() else {
            return;
        };
        samples.push_back((at, sample));
        while samples
            .front()
            .is_some_and(|(first, _)| at.saturating_duration_since(*first) > WINDOW)
        {
            samples.pop_front();
        }
    }

    /// Rates between the oldest and the newest sample, for every key in both whose total did
    /// not go down.
    pub fn current(&self) -> Current {
        let Ok(samples) = self.samples.lock() else {
            return Current::default();
        };
        let (Some((t0, first)), Some((t1, last))) = (samples.front(), samples.back()) else {
            return Current::default();
        };
        let secs = t1.saturating_duration_since(*t0).as_secs_f64();
        if secs <= 0.0 {
            return Current::default();
        }
        Current(
            last.iter()
                .filter_map(|(k, &now)| {
                    let then = *first.get(k)?;
                    (now >= then).then(|| (k.clone(), (now - then) as f64 / secs))
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Arc;
    use std::time::Duration;

    use tern_proxy::stats::{BackendSnapshot, FrontendSnapshot, ServerSnapshot};
    use tern_proxy::StatsSnapshot;

    use super::*;
    use crate::Info;

    fn view(requests: u64) -> View {
        let toml = "[[frontend]]\nname = \"web\"\nbind = [\"127.0.0.1:0\"]\n\
                    default_backend = \"app\"\n[[backend]]\nname = \"app\"\n\
                    servers = [ { name = \"s1\", address = \"127.0.0.1:1\" } ]\n";
        let config = tern_config::parse(toml, std::path::Path::new("t.toml")).unwrap();
        View {
            info: Info {
                version: String::new(),
                pid: 0,
                started: std::time::SystemTime::UNIX_EPOCH,
                uptime: Duration::ZERO,
                workers: 1,
                generation: 0,
                draining_generations: 0,
                connections: 0,
                profiling: false,
                crypto_batch: None,
            },
            config: Arc::new(config),
            stats: StatsSnapshot {
                frontends: vec![FrontendSnapshot {
                    sessions: requests / 10,
                    requests,
                    ..FrontendSnapshot::default()
                }],
                backends: vec![BackendSnapshot {
                    requests,
                    ..BackendSnapshot::default()
                }],
                servers: vec![vec![ServerSnapshot {
                    requests,
                    ..ServerSnapshot::default()
                }]],
                ..StatsSnapshot::default()
            },
        }
    }

    #[test]
    fn rates_by_name_over_the_window() {
        let rates = ObjectRates::default();
        let t0 = Instant::now();
        assert_eq!(rates.current().cell("frontend web requests"), "-");
        for s in 0..=4u64 {
            rates.record(&view(s * 500), t0 + Duration::from_secs(s));
        }
        let now = rates.current();
        assert_eq!(now.get("frontend web requests"), Some(500.0));
        assert_eq!(now.get("frontend web sessions"), Some(50.0));
        assert_eq!(now.get("backend app requests"), Some(500.0));
        assert_eq!(now.cell("server app/s1 requests"), "500.0");
        assert_eq!(now.get("server app/nope requests"), None);
    }

    #[test]
    fn a_total_that_went_down_has_no_rate() {
        let rates = ObjectRates::default();
        let t0 = Instant::now();
        rates.record(&view(1000), t0);
        rates.record(&view(10), t0 + Duration::from_secs(1));
        assert_eq!(rates.current().get("frontend web requests"), None);
    }
}
