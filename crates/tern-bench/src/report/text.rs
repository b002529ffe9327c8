//! The report as text for people: one labelled line per topic, latency tables, and the
//! validity verdict last, where it is seen.

use std::fmt;

use hdrhistogram::Histogram;

use super::{error_count, per_second, Report, CLIENT_BOUND_SHARE};
use crate::latency::{summary, PERCENTILES};
use crate::series::median;
use crate::stats::{ErrorKind, Stats, STATUS_NAMES};

/// Percentile columns of the text tables (indexes into [`PERCENTILES`]).
const COLUMNS: [usize; 6] = [0, 2, 3, 4, 5, 7];

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let set = &self.settings;
        writeln!(f, "target      {}", set.target)?;
        self.fmt_settings(f)?;
        self.fmt_tls(f)?;
        let s = &self.stats;
        writeln!(
            f,
            "requests    {} ({:.1}/s)   connections {} ({:.1}/s)   received {} ({}/s)",
            s.requests,
            self.request_rate(),
            s.connections,
            self.connection_rate(),
            bytes(s.bytes as f64),
            bytes(self.byte_rate())
        )?;
        if s.tls.is_some() || s.full_handshakes + s.resumed_handshakes > 0 {
            writeln!(
                f,
                "handshakes  full {} ({} with HelloRetryRequest), resumed {} \
                 (sessions offered {})",
                s.full_handshakes, s.hello_retries, s.resumed_handshakes, s.resume_attempts
            )?;
        }
        fmt_outcomes(f, s)?;
        fmt_latency(f, s)?;
        fmt_series(f, s)?;
        self.fmt_reference(f)?;
        self.fmt_cpu(f)?;
        self.fmt_validity(f)
    }
}

impl Report {
    fn fmt_settings(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let set = &self.settings;
        let cpus = match set.cpus.as_slice() {
            [] => "not pinned".to_owned(),
            list => format!("CPUs {list:?}"),
        };
        let load = match set.rate {
            Some(rate) => format!(
                "open loop {rate}/s, at most {} connections",
                set.connections
            ),
            None => format!("closed loop, {} connections", set.connections),
        };
        let load = match set.streams {
            Some(m) => format!("{load} × {m} HTTP/2 streams"),
            None => load,
        };
        let per_conn = match set.requests_per_conn {
            0 => "unlimited".to_owned(),
            n => n.to_string(),
        };
        writeln!(
            f,
            "settings    {load}, requests/connection {per_conn}, threads {} ({cpus}), \
             {:.1} s measured after {:.1} s ramp + {:.1} s warm-up, timeout {:.1} s",
            set.threads,
            set.duration.as_secs_f64(),
            set.ramp.as_secs_f64(),
            set.warmup.as_secs_f64(),
            set.timeout.as_secs_f64()
        )
    }

    fn fmt_tls(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let set = &self.settings;
        let Some(tls) = &self.stats.tls else {
            return Ok(());
        };
        let resume = match set.resume {
            Some(mode) => format!("{mode} for {:.0}% of connections", set.resume_ratio * 100.0),
            None => "off".to_owned(),
        };
        writeln!(
            f,
            "tls         {} {} {} {}, ALPN {}, {} client, certificate {}, resumption {resume}",
            tls.version,
            tls.suite,
            tls.key_exchange,
            tls.group,
            tls.alpn.as_deref().unwrap_or("none"),
            tls.engine,
            set.verify
        )
    }

    fn fmt_reference(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (Some(r), Some((url, rate))) = (&self.reference, &self.settings.reference) else {
            return Ok(());
        };
        writeln!(
            f,
            "reference   {url} at {rate}/s: {} responses ({:.1}/s), {} errors",
            r.requests,
            per_second(r.requests, self.measured),
            error_count(r)
        )?;
        fmt_row(f, "ref total", &r.total)
    }

    fn fmt_cpu(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (Some(cpu), Some((per_req, per_conn)), Some(share)) =
            (self.cpu, self.cpu_us_per(), self.cpu_share())
        else {
            return writeln!(f, "client cpu  unavailable (/proc/self/stat not readable)");
        };
        let peak = self
            .cpu_share_per_second()
            .into_iter()
            .fold(0.0f64, f64::max);
        writeln!(
            f,
            "client cpu  user {:.2} s + system {:.2} s = {:.0}% of {} CPU(s) (peak second {:.0}%); \
             {per_req:.1} µs per request, {per_conn:.1} µs per connection",
            cpu.user.as_secs_f64(),
            cpu.system.as_secs_f64(),
            share * 100.0,
            self.cpu_capacity,
            peak * 100.0
        )?;
        if self.client_bound() {
            writeln!(
                f,
                "WARNING     the client used more than {:.0}% of its CPUs: the result may be \
                 limited by the client, not the server (add --threads/--cpus)",
                CLIENT_BOUND_SHARE * 100.0
            )?;
        }
        Ok(())
    }

    fn fmt_validity(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = &self.validity;
        if v.valid {
            writeln!(f, "valid       yes")?;
        } else {
            writeln!(f, "valid       NO")?;
        }
        for reason in &v.reasons {
            writeln!(f, "  invalid:  {reason}")?;
        }
        for note in &v.notes {
            writeln!(f, "  note:     {note}")?;
        }
        Ok(())
    }
}

fn fmt_outcomes(f: &mut fmt::Formatter<'_>, s: &Stats) -> fmt::Result {
    write!(f, "responses  ")?;
    for (name, n) in STATUS_NAMES.iter().zip(s.status) {
        write!(f, " {name} {n}")?;
    }
    write!(f, "\nerrors      {} (", error_count(s))?;
    for (i, kind) in ErrorKind::ALL.iter().enumerate() {
        let sep = if i == 0 { "" } else { ", " };
        write!(f, "{sep}{} {}", kind.name(), s.errors_of(*kind))?;
    }
    writeln!(
        f,
        ", 4xx {}, 5xx {}, other {})",
        s.status[3], s.status[4], s.status[5]
    )?;
    if s.abandoned > 0 {
        writeln!(f, "abandoned   {} (in flight at the deadline)", s.abandoned)?;
    }
    Ok(())
}

fn fmt_latency(f: &mut fmt::Formatter<'_>, s: &Stats) -> fmt::Result {
    write!(f, "latency µs   ")?;
    for i in COLUMNS {
        write!(f, " {:>9}", PERCENTILES[i].0)?;
    }
    writeln!(f, " {:>9} {:>9}", "max", "mean")?;
    for (name, h) in [
        ("connect", &s.connect),
        ("handshake", &s.handshake),
        ("ttfb", &s.ttfb),
        ("total", &s.total),
    ] {
        fmt_row(f, name, h)?;
    }
    Ok(())
}

/// One latency row; nothing for an empty histogram.
fn fmt_row(f: &mut fmt::Formatter<'_>, name: &str, h: &Histogram<u64>) -> fmt::Result {
    if h.is_empty() {
        return Ok(());
    }
    let sum = summary(h);
    write!(f, "  {name:<10}")?;
    for i in COLUMNS {
        write!(f, " {:>9}", sum.percentiles[i].1)?;
    }
    writeln!(f, " {:>9} {:>9.0}", sum.max, sum.mean)
}

fn fmt_series(f: &mut fmt::Formatter<'_>, s: &Stats) -> fmt::Result {
    let series = &s.series;
    if series.seconds() == 0 {
        return Ok(());
    }
    let line = |values: &[u64]| {
        let min = values.iter().min().copied().unwrap_or(0);
        let max = values.iter().max().copied().unwrap_or(0);
        format!("min {min}, median {:.0}, max {max}", median(values))
    };
    writeln!(
        f,
        "per second  requests {}; connections {}; errors {}; active {}",
        line(&series.requests),
        line(&series.connections),
        line(&series.errors_total()),
        line(&series.active)
    )
}

/// Bytes with a binary unit.
fn bytes(n: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = n;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{value:.0} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}
