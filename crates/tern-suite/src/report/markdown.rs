//! `report.md`: the tables, ready to paste into BENCHMARKS.md or an issue.

use std::fmt::Write as _;

use super::tables;
use crate::results::{SuiteReport, WorkloadResult};

/// Markdown cells must not break the table.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

pub fn render(r: &SuiteReport) -> String {
    let mut md = String::with_capacity(16 * 1024);
    let s = &r.scenario;
    let _ = writeln!(md, "# {}\n", cell(&s.title));
    if s.partial {
        md.push_str("**Partial report**: the run was stopped before the end (see the notes).\n\n");
    }
    if !s.about.is_empty() {
        let _ = writeln!(md, "{}\n", s.about);
    }
    let _ = writeln!(
        md,
        "Scenario `{}` ({}), {} – {}{}.\n",
        s.name,
        s.file,
        s.started,
        s.finished,
        if s.quick > 1.0 {
            format!(", durations divided by {} (`--quick`)", s.quick)
        } else {
            String::new()
        }
    );
    machine(&mut md, r);
    let _ = writeln!(md, "\n## Method\n\n{METHOD}");
    if !r.notes.is_empty() {
        md.push_str("\n## Notes\n\n");
        for n in &r.notes {
            let _ = writeln!(md, "- {}", cell(n));
        }
    }
    for w in &r.workloads {
        workload(&mut md, w);
    }
    if let Some(speed) = &r.speed {
        md.push_str("\n## tern speed\n\n");
        match &speed.error {
            Some(e) => {
                let _ = writeln!(md, "Not included: {}", cell(e));
            }
            None => {
                let _ = writeln!(md, "```text\n{}\n```", speed.text.trim_end());
            }
        }
    }
    md
}

/// How the figures were obtained, for both reports.
pub(super) const METHOD: &str = "Each measurement starts a fresh target with a generated configuration (in `configs/`), runs a \
discarded warm-up, then the measured run with the `tern bench` client in-process, pinned to the \
client CPUs. Target CPU time is utime + stime from `/proc/PID/stat` summed over the target's \
process tree, read right before and after the measured window; CPU-µs/op = that time ÷ the \
successful responses the client received (with one request per connection, each is also a \
connection and its full handshake); per CPU-s = 1 s ÷ CPU-µs/op, the operations (connections, \
or requests) per second of the target's CPU time; Gbit/s per core = the bytes the client received \
per second of the target's CPU time (bulk responses); \
target CPU use = that time ÷ (window × target CPUs): well below 100 % while the client is not \
saturated means something else held the rate down (on a shared machine, other processes on the \
target's CPUs), and CPU-µs/op is then the figure to compare. † marks a run the generator judged \
invalid (client-bound, unsteady, stopped early; see the notes under the table). \
Targets are interleaved within each run, in reverse order every other run. Rates and CPU-µs/op are medians over the runs with the \
min–max spread; latencies are medians of each percentile over the runs (max: the largest). \
\"vs tern\" columns: this target ÷ tern, measured in the same suite run. The client never \
resumes TLS sessions and counts full and resumed handshakes; the server-side counts are read \
from the target where it can tell.";

fn machine(md: &mut String, r: &SuiteReport) {
    let m = &r.machine;
    let s = &r.scenario;
    md.push_str("## Machine and tools\n\n");
    let _ = writeln!(
        md,
        "- CPU: {} ({} CPUs online), Linux {}, load average {} at start, {} at the end",
        cell(&m.cpu_model),
        m.cpus_online,
        m.kernel,
        m.load_average,
        m.load_average_end
    );
    let _ = writeln!(
        md,
        "- CPUs: targets {:?} (unless a workload says otherwise), client {:?}, backends {:?}; {} backend(s) (`tern term`); monitor URI `{}`",
        s.cpus.target, s.cpus.client, s.cpus.backends, s.backends, s.monitor_uri
    );
    for (tool, version) in &r.versions {
        let _ = writeln!(md, "- {tool}: {}", cell(version));
    }
    for t in &r.targets {
        if let Some(why) = &t.skipped {
            let _ = writeln!(md, "- target {} skipped: {}", t.name, cell(why));
        }
    }
}

fn workload(md: &mut String, w: &WorkloadResult) {
    let _ = writeln!(md, "\n## {}\n", cell(&w.name));
    if !w.about.is_empty() {
        let _ = writeln!(md, "{}\n", w.about);
    }
    let _ = writeln!(md, "*{}*\n", cell(&w.settings));
    table(md, &tables::summary(w));
    if let Some(runs) = tables::runs(w) {
        md.push('\n');
        table(md, &runs);
    }
    for p in tables::notes(w) {
        let _ = writeln!(md, "\nNote: {}", cell(&p));
    }
}

fn table(md: &mut String, t: &tables::Table) {
    let line = |cells: &[String]| {
        let inner: Vec<String> = cells.iter().map(|c| cell(c)).collect();
        format!("| {} |\n", inner.join(" | "))
    };
    md.push_str(&line(&t.header));
    md.push_str(&format!("|{}\n", "---|".repeat(t.header.len())));
    for row in &t.rows {
        md.push_str(&line(row));
    }
}
