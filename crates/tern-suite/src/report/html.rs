//! `report.html`: one self-contained page — the Markdown report's tables plus inline SVG charts,
//! with a little inline CSS and no script, font or image from anywhere else.

use std::fmt::Write as _;

use super::charts::{bar_chart, line_chart, steps, Series, XAxis, PALETTE};
use super::svg::{escape, short};
use super::tables::{self, Table};
use super::{summarize, us1};
use crate::results::{Percentiles, SuiteReport, WorkloadResult};

const STYLE: &str = "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}\
table{border-collapse:collapse;margin:1em 0;font-size:13px}th,td{border:1px solid #ccc;padding:3px 7px;\
text-align:right}th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}\
.settings{font-style:italic;color:#444}.charts svg{display:block;margin:1em 0;max-width:100%;height:auto}\
.partial{background:#fee;border:1px solid #c00;padding:.5em}pre{background:#f6f6f6;padding:.7em;overflow:auto}";

pub fn render(r: &SuiteReport) -> String {
    let s = &r.scenario;
    let mut h = String::with_capacity(64 * 1024);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n\
         <style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        escape(&s.title),
        escape(&s.title)
    );
    if s.partial {
        h.push_str("<p class=\"partial\">Partial report: the run was stopped before the end (see the notes).</p>\n");
    }
    for para in s.about.split("\n\n").filter(|p| !p.trim().is_empty()) {
        let _ = writeln!(h, "<p>{}</p>", escape(para));
    }
    let _ = writeln!(
        h,
        "<p>Scenario <code>{}</code> ({}), {} – {}{}.</p>",
        escape(&s.name),
        escape(&s.file),
        escape(&s.started),
        escape(&s.finished),
        if s.quick > 1.0 {
            format!(", durations divided by {} (--quick)", s.quick)
        } else {
            String::new()
        }
    );
    machine(&mut h, r);
    let _ = writeln!(
        h,
        "<h2>Method</h2>\n<p>{}</p>",
        escape(super::markdown::METHOD)
    );
    if !r.notes.is_empty() {
        h.push_str("<h2>Notes</h2>\n<ul>\n");
        for n in &r.notes {
            let _ = writeln!(h, "<li>{}</li>", escape(n));
        }
        h.push_str("</ul>\n");
    }
    let colors = target_colors(r);
    for w in &r.workloads {
        workload(&mut h, w, &colors);
    }
    if let Some(speed) = &r.speed {
        h.push_str("<h2>tern speed</h2>\n");
        match &speed.error {
            Some(e) => {
                let _ = writeln!(h, "<p>Not included: {}</p>", escape(e));
            }
            None => {
                let _ = writeln!(h, "<pre>{}</pre>", escape(speed.text.trim_end()));
            }
        }
    }
    h.push_str("</body>\n</html>\n");
    h
}

fn machine(h: &mut String, r: &SuiteReport) {
    let m = &r.machine;
    let s = &r.scenario;
    h.push_str("<h2>Machine and tools</h2>\n<ul>\n");
    let _ = writeln!(
        h,
        "<li>CPU: {} ({} CPUs online), Linux {}, load average {} at start, {} at the end</li>",
        escape(&m.cpu_model),
        m.cpus_online,
        escape(&m.kernel),
        escape(&m.load_average),
        escape(&m.load_average_end)
    );
    let _ = writeln!(
        h,
        "<li>CPUs: targets {:?}, client {:?}, backends {:?}; {} backend(s); monitor URI <code>{}</code></li>",
        s.cpus.target,
        s.cpus.client,
        s.cpus.backends,
        s.backends,
        escape(&s.monitor_uri)
    );
    for (tool, version) in &r.versions {
        let _ = writeln!(h, "<li>{}: {}</li>", escape(tool), escape(version));
    }
    for t in r.targets.iter().filter(|t| t.skipped.is_some()) {
        let _ = writeln!(
            h,
            "<li>target {} skipped: {}</li>",
            escape(&t.name),
            escape(t.skipped.as_deref().unwrap_or(""))
        );
    }
    h.push_str("</ul>\n");
}

/// A colour per target, in report order, the same in every chart.
fn target_colors(r: &SuiteReport) -> Vec<(String, &'static str)> {
    r.targets
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.clone(), PALETTE[i % PALETTE.len()]))
        .collect()
}

fn color_of(colors: &[(String, &'static str)], target: &str) -> &'static str {
    colors
        .iter()
        .find(|(n, _)| n == target)
        .map_or("#777", |(_, c)| c)
}

fn table(h: &mut String, t: &Table) {
    h.push_str("<table>\n<tr>");
    for c in &t.header {
        let _ = write!(h, "<th>{}</th>", escape(c));
    }
    h.push_str("</tr>\n");
    for row in &t.rows {
        h.push_str("<tr>");
        for (i, c) in row.iter().enumerate() {
            // A short row is a note (n/a, failed) spanning the remaining columns.
            let span = if i + 1 == row.len() && row.len() < t.header.len() {
                format!(
                    " colspan=\"{}\" style=\"text-align:left\"",
                    t.header.len() - i
                )
            } else {
                String::new()
            };
            let _ = write!(h, "<td{span}>{}</td>", escape(c));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n");
}

fn workload(h: &mut String, w: &WorkloadResult, colors: &[(String, &'static str)]) {
    let _ = writeln!(h, "<h2>{}</h2>", escape(&w.name));
    if !w.about.is_empty() {
        let _ = writeln!(h, "<p>{}</p>", escape(&w.about));
    }
    let _ = writeln!(h, "<p class=\"settings\">{}</p>", escape(&w.settings));
    table(h, &tables::summary(w));
    if let Some(runs) = tables::runs(w) {
        table(h, &runs);
    }
    for p in tables::notes(w) {
        let _ = writeln!(h, "<p>Note: {}</p>", escape(&p));
    }
    let charts = charts(w, colors);
    if !charts.is_empty() {
        let _ = writeln!(h, "<div class=\"charts\">\n{charts}</div>");
    }
}

/// Percentile points of a probe that reports only fixed percentiles.
fn percentile_points(p: &Percentiles) -> Vec<(f64, f64)> {
    [
        (0.301, p.p50),
        (1.0, p.p90),
        (2.0, p.p99),
        (3.0, p.p99_9),
        (4.0, p.p99_99),
        (5.0, p.p99_999),
        (6.0, p.p99_9999),
    ]
    .iter()
    .map(|&(x, v)| (x, v as f64))
    .collect()
}

/// Lines of the two line charts: per-second rate and latency percentiles, one per run.
fn series(w: &WorkloadResult, colors: &[(String, &'static str)]) -> (Vec<Series>, Vec<Series>) {
    let mut rate = Vec::new();
    let mut curves = Vec::new();
    for r in &w.runs {
        let Some(m) = r.outcome.measured() else {
            continue;
        };
        let color = color_of(colors, &r.target);
        let line = |points| Series {
            label: r.target.clone(),
            color,
            points,
            dashed: false,
        };
        rate.push(line(steps(&m.client.per_second)));
        curves.push(line(
            m.client
                .curve
                .iter()
                .map(|&(x, us)| (x, us as f64))
                .collect(),
        ));
        if let Some(reference) = &m.client.reference {
            curves.push(Series {
                label: "reference (straight to a backend)".to_owned(),
                color: "#777",
                points: percentile_points(reference),
                dashed: true,
            });
        }
    }
    (rate, curves)
}

fn charts(w: &WorkloadResult, colors: &[(String, &'static str)]) -> String {
    let (rate, curves) = series(w, colors);
    if rate.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    let title = format!("{}: rate over time, every run", w.name);
    out.push_str(&line_chart(
        &title,
        XAxis::Seconds,
        "responses per second",
        false,
        &rate,
    ));
    let title = format!("{}: latency percentiles, every run", w.name);
    out.push_str(&line_chart(&title, XAxis::Nines, "latency", true, &curves));
    let sums = summarize(w);
    let bars =
        |f: fn(&super::TargetSummary<'_>) -> Option<f64>| -> Vec<(String, &'static str, f64)> {
            sums.iter()
                .filter_map(|s| Some((s.target.to_owned(), color_of(colors, s.target), f(s)?)))
                .collect()
        };
    let cpu = bars(|s| s.cpu_per_op.map(|c| c.median));
    if !cpu.is_empty() {
        let title = format!(
            "{}: target CPU-µs per operation (median; lower is better)",
            w.name
        );
        out.push_str(&bar_chart(&title, "CPU-µs per operation", &cpu, us1));
    }
    let rates = bars(|s| s.rate.map(|r| r.median));
    let title = format!("{}: {} (median; higher is better)", w.name, w.unit);
    out.push_str(&bar_chart(&title, &w.unit, &rates, short));
    out
}
