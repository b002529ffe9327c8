//! One `[[workload]]`: its keys, or those of `[defaults]`, checked and turned into a
//! [`Workload`] (the TLS keys are in `tls.rs`).

use std::time::Duration;

use super::{Ctx, Pick};
use crate::scenario::locate::KeyPath;
use crate::scenario::raw::{RawNumber, RawWorkload};
use crate::scenario::{CpuSets, FindMaxSpec, Load, Mode, Workload};

type Field<T> = fn(&RawWorkload) -> &Option<T>;

impl Ctx<'_> {
    /// A duration key (default in milliseconds); `zero` allows "0s".
    fn dur_of(
        &mut self,
        p: &Pick<'_>,
        key: &str,
        field: Field<String>,
        default: u64,
        zero: bool,
    ) -> Duration {
        match p.get(field, key) {
            Some((v, at)) => self.duration(v, &at, zero),
            None => Duration::from_millis(default),
        }
    }

    /// An integer key within `lo..=hi`.
    fn int_of(
        &mut self,
        p: &Pick<'_>,
        key: &str,
        field: Field<i64>,
        default: usize,
        (lo, hi): (i64, i64),
    ) -> usize {
        p.get(field, key)
            .map_or(default, |(v, at)| self.int(*v, &at, lo, hi))
    }

    /// A positive rate key.
    fn rate_of(&mut self, p: &Pick<'_>, key: &str, field: Field<RawNumber>, default: f64) -> f64 {
        p.get(field, key)
            .map_or(default, |(v, at)| self.positive(*v, &at))
    }

    pub(super) fn workload(
        &mut self,
        w: &RawWorkload,
        d: &RawWorkload,
        wp: &KeyPath,
        cpus: &CpuSets,
        monitor_uri: &str,
    ) -> Workload {
        let p = Pick { w, d, wp };
        let name = match &w.name {
            Some(n) => self.name(n, &wp.key("name")),
            None => {
                self.issue(&wp.key("name"), "missing: name the workload");
                String::new()
            }
        };
        let path = match p.get(|r| &r.path, "path") {
            Some((v, at)) => self.path(v, &at),
            None => "/".to_owned(),
        };
        let mode = self.mode(&p, &path, monitor_uri);
        let response_bytes = match p.get(|r| &r.response_bytes, "response_bytes") {
            Some((v, at)) => Some(self.int(*v, &at, 0, 1 << 36) as u64),
            None => size_param(&path),
        };
        let target_cpus = match p.get(|r| &r.target_cpus, "target_cpus") {
            Some((v, at)) => self.cpu_list(v, &at),
            None => cpus.target.clone(),
        };
        Workload {
            name,
            about: p
                .get(|r| &r.about, "about")
                .map(|(v, _)| v.trim().to_owned())
                .unwrap_or_default(),
            mode,
            tls: self.tls(&p),
            requests_per_conn: self.int_of(
                &p,
                "requests_per_conn",
                |r| &r.requests_per_conn,
                0,
                (0, 1 << 40),
            ) as u64,
            h2_streams: self.h2(&p),
            load: self.load(&p),
            duration: self.dur_of(&p, "duration", |r| &r.duration, 10_000, false),
            warmup: self.dur_of(&p, "warmup", |r| &r.warmup, 1_000, true),
            ramp: self.dur_of(&p, "ramp", |r| &r.ramp, 0, true),
            runs: self.int_of(&p, "runs", |r| &r.runs, 1, (1, 100)) as u32,
            find_max: self.find_max(&p),
            reference: self.reference(&p),
            target_cpus,
            client_threads: self.int_of(
                &p,
                "client_threads",
                |r| &r.client_threads,
                cpus.client.len(),
                (1, 1024),
            ) as u32,
            timeout: self.dur_of(&p, "timeout", |r| &r.timeout, 2_000, false),
            response_bytes,
            path,
        }
    }

    /// `mode = "http"` (default) or `"tcp"`. A TCP relay never reads a request, so a workload
    /// relying on one is refused: the monitor URI (answered by an HTTP proxy itself; a relay
    /// would pass it to a backend, measuring something else) and HTTP/2 streams (multiplexed by
    /// an HTTP proxy, which the relays are not).
    fn mode(&mut self, p: &Pick<'_>, path: &str, monitor_uri: &str) -> Mode {
        let mode = match p.get(|r| &r.mode, "mode") {
            None => Mode::Http,
            Some((v, _)) if v == "http" => Mode::Http,
            Some((v, _)) if v == "tcp" => Mode::Tcp,
            Some((v, at)) => {
                self.issue(&at, format!("{v:?}: expected \"http\" or \"tcp\""));
                Mode::Http
            }
        };
        if mode != Mode::Tcp {
            return mode;
        }
        if path == monitor_uri {
            let at = p
                .get(|r| &r.path, "path")
                .map_or_else(|| p.wp.key("path"), |(_, at)| at);
            self.issue(
                &at,
                format!(
                    "{path:?} is the monitor URI, which a TCP relay does not answer: \
                     in mode = \"tcp\" ask a backend for a page, e.g. \"/?s=107\""
                ),
            );
        }
        if let Some((_, at)) = p.get(|r| &r.h2, "h2").filter(|(v, _)| **v) {
            self.issue(
                &at,
                "HTTP/2 streams need an HTTP proxy: a workload with mode = \"tcp\" is HTTP/1.1 \
                 relayed whole (drop h2, or use mode = \"http\")",
            );
        }
        mode
    }

    /// Closed loop (`concurrency`) or open loop (`rate`, over at most `concurrency` connections).
    fn load(&mut self, p: &Pick<'_>) -> Load {
        let connections =
            self.int_of(p, "concurrency", |r| &r.concurrency, 32, (1, 100_000)) as u32;
        match p.get(|r| &r.rate, "rate") {
            Some((rate, at)) => {
                if !self.host.open_loop {
                    self.issue(
                        &at,
                        "this tern bench has no open loop (--rate) yet: use concurrency",
                    );
                }
                Load::Open {
                    rate: self.positive(*rate, &at),
                    connections,
                }
            }
            None => Load::Closed { connections },
        }
    }

    /// `h2 = true` and its `streams` per connection (default 1, as `h2load -m`); the generator
    /// drives HTTP/2 in a closed loop only.
    fn h2(&mut self, p: &Pick<'_>) -> Option<u32> {
        let on = p.get(|r| &r.h2, "h2").is_some_and(|(v, _)| *v);
        let streams = self.int_of(p, "streams", |r| &r.streams, 1, (1, 1024)) as u32;
        if !on {
            if let Some((_, at)) = p.get(|r| &r.streams, "streams") {
                self.issue(
                    &at,
                    "streams are HTTP/2 streams per connection: add h2 = true",
                );
            }
            return None;
        }
        for (key, set) in [
            ("rate", p.get(|r| &r.rate, "rate").map(|(_, at)| at)),
            (
                "find_max",
                p.get(|r| &r.find_max, "find_max")
                    .filter(|(v, _)| **v)
                    .map(|(_, at)| at),
            ),
        ] {
            if let Some(at) = set {
                self.issue(
                    &at,
                    format!("{key}: tern bench --h2 has a closed loop only (use concurrency and streams)"),
                );
            }
        }
        Some(streams)
    }

    fn find_max(&mut self, p: &Pick<'_>) -> Option<FindMaxSpec> {
        let slo_max = self.dur_of(p, "slo_max", |r| &r.slo_max, 2_000, false);
        let time = self.dur_of(p, "find_max_time", |r| &r.find_max_time, 60_000, false);
        let start_rate = self.rate_of(p, "start_rate", |r| &r.start_rate, 200.0);
        let trial = self.dur_of(p, "trial_duration", |r| &r.trial_duration, 2_000, false);
        let resolution = match p.get(|r| &r.resolution, "resolution") {
            Some((v, at)) => {
                let number = v.trim().trim_end_matches('%');
                if !number
                    .parse::<f64>()
                    .is_ok_and(|n| n > 0.0 && n.is_finite())
                {
                    self.issue(
                        &at,
                        format!("{v:?}: expected a share like \"5%\" or a rate like \"50\""),
                    );
                }
                v.trim().to_owned()
            }
            None => "5%".to_owned(),
        };
        let on = p.get(|r| &r.find_max, "find_max").is_some_and(|(v, _)| *v);
        on.then_some(FindMaxSpec {
            slo_max,
            time,
            start_rate,
            trial,
            resolution,
        })
    }

    fn reference(&mut self, p: &Pick<'_>) -> Option<f64> {
        let rate = self.rate_of(p, "reference_rate", |r| &r.reference_rate, 100.0);
        let on = p
            .get(|r| &r.reference, "reference")
            .is_some_and(|(v, _)| *v);
        on.then_some(rate)
    }
}

/// Body size asked of `tern term` with `s=` in the query (`107`, `1m`, `16m`, `4k`, `1g`).
fn size_param(path: &str) -> Option<u64> {
    let query = path.split_once('?')?.1;
    let value = query
        .split('&')
        .filter_map(|kv| kv.strip_prefix("s="))
        .next_back()?;
    let (digits, mult) = match value.as_bytes().last()? {
        b'k' | b'K' => (&value[..value.len() - 1], 1u64 << 10),
        b'm' | b'M' => (&value[..value.len() - 1], 1 << 20),
        b'g' | b'G' => (&value[..value.len() - 1], 1 << 30),
        _ => (value, 1),
    };
    digits.parse::<u64>().ok()?.checked_mul(mult)
}
