//! The three kinds of chart in the HTML report, as SVG strings.
//!
//! - Rate over time: one line per target and run, from the per-second series, so a sagging or
//!   noisy run is seen at once (the rules ask for a flat series).
//! - Latency percentiles: x is the number of nines (0 = 0 %, 1 = 90 %, 2 = 99 % … 6 = 99.9999 %),
//!   y is latency on a log scale, the style of seed 001's graphs: the tail is where load
//!   balancers differ, and a linear axis would hide it.
//! - Bars: one per target, e.g. CPU-µs per operation, labelled with their values.

use super::svg::{latency, log_ticks, nice_ticks, short, Anchor, Linear, Log10, Svg};

const W: f64 = 680.0;
const H: f64 = 320.0;
const LEFT: f64 = 72.0;
const RIGHT: f64 = 40.0;
const TOP: f64 = 28.0;
const BOTTOM: f64 = 62.0;
const AXIS: &str = "#444";
const GRID: &str = "#ddd";

/// Colours by target position, distinguishable for common colour blindness.
pub const PALETTE: [&str; 6] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
];

/// One line of a chart.
#[derive(Debug, Clone)]
pub struct Series {
    pub label: String,
    pub color: &'static str,
    pub points: Vec<(f64, f64)>,
    pub dashed: bool,
}

/// The x axis of a line chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XAxis {
    /// Seconds from the start of the window.
    Seconds,
    /// Nines of a percentile, 0 to 6.
    Nines,
}

fn frame(svg: &mut Svg, title: &str) -> ((f64, f64), (f64, f64)) {
    svg.text((W / 2.0, 18.0), Anchor::Middle, 14.0, title);
    ((LEFT, W - RIGHT), (H - BOTTOM, TOP))
}

fn legend(svg: &mut Svg, series: &[Series]) -> f64 {
    let mut seen: Vec<(&str, &str, bool)> = Vec::new();
    for s in series {
        if !seen.iter().any(|(l, _, _)| *l == s.label) {
            seen.push((&s.label, s.color, s.dashed));
        }
    }
    let mut x = LEFT;
    let y = H - 8.0;
    for (label, color, dashed) in seen {
        svg.polyline(&[(x, y - 4.0), (x + 18.0, y - 4.0)], color, 2.5, dashed);
        svg.text((x + 22.0, y), Anchor::Start, 11.0, label);
        x += 30.0 + 6.5 * label.chars().count() as f64;
    }
    x
}

/// A line chart; `log_y` puts y on a log scale (latencies).
pub fn line_chart(
    title: &str,
    x_axis: XAxis,
    y_label: &str,
    log_y: bool,
    series: &[Series],
) -> String {
    let mut svg = Svg::new(W, H);
    let ((x0, x1), (y0, y1)) = frame(&mut svg, title);
    let (mut xmax, mut ymin, mut ymax) = (0f64, f64::MAX, 0f64);
    for &(x, y) in series.iter().flat_map(|s| &s.points) {
        xmax = xmax.max(x);
        ymax = ymax.max(y);
        if y > 0.0 {
            ymin = ymin.min(y);
        }
    }
    let xmax = match x_axis {
        XAxis::Nines => 6.0,
        XAxis::Seconds => xmax.max(1.0),
    };
    let sx = Linear {
        d0: 0.0,
        d1: xmax,
        r0: x0,
        r1: x1,
    };
    x_ticks(&mut svg, x_axis, &sx, xmax, (y0, y1));
    let map_y = y_scale(&mut svg, log_y, (ymin, ymax), (x0, x1), (y0, y1));
    svg.vtext((14.0, (y0 + y1) / 2.0), 11.0, y_label);
    svg.line((x0, y0), (x1, y0), AXIS, 1.0);
    svg.line((x0, y0), (x0, y1), AXIS, 1.0);
    for s in series {
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .map(|&(x, y)| (sx.map(x), map_y(y)))
            .collect();
        svg.polyline(&pts, s.color, 1.8, s.dashed);
    }
    legend(&mut svg, series);
    svg.finish(title)
}

fn x_ticks(svg: &mut Svg, x_axis: XAxis, sx: &Linear, xmax: f64, (y0, y1): (f64, f64)) {
    let ticks: Vec<(f64, String)> = match x_axis {
        XAxis::Nines => ["0%", "90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%"]
            .iter()
            .enumerate()
            .map(|(i, l)| (i as f64, (*l).to_owned()))
            .collect(),
        XAxis::Seconds => nice_ticks(xmax)
            .into_iter()
            .filter(|t| *t <= xmax)
            .map(|t| (t, short(t)))
            .collect(),
    };
    for (t, label) in &ticks {
        let x = sx.map(*t);
        svg.line((x, y0), (x, y1), GRID, 1.0);
        svg.text((x, y0 + 15.0), Anchor::Middle, 11.0, label);
    }
    let label = match x_axis {
        XAxis::Nines => "percentile",
        XAxis::Seconds => "seconds into the measured window",
    };
    svg.text(
        ((sx.r0 + sx.r1) / 2.0, y0 + 30.0),
        Anchor::Middle,
        11.0,
        label,
    );
}

/// Draws the y grid and labels; returns the data → pixel map.
fn y_scale(
    svg: &mut Svg,
    log_y: bool,
    (ymin, ymax): (f64, f64),
    (x0, x1): (f64, f64),
    (y0, y1): (f64, f64),
) -> Box<dyn Fn(f64) -> f64> {
    let grid = |svg: &mut Svg, y: f64, label: String| {
        svg.line((x0, y), (x1, y), GRID, 1.0);
        svg.text((x0 - 6.0, y + 4.0), Anchor::End, 11.0, &label);
    };
    if log_y {
        let ticks = log_ticks(if ymin == f64::MAX { 1.0 } else { ymin }, ymax.max(1.0));
        let (lo, hi) = (ticks[0], ticks[ticks.len() - 1]);
        let sy = Log10 {
            d0: lo,
            d1: hi,
            r0: y0,
            r1: y1,
        };
        for t in &ticks {
            grid(svg, sy.map(*t), latency(*t));
        }
        Box::new(move |v| sy.map(v))
    } else {
        let ticks = nice_ticks(ymax);
        let top = ticks.last().copied().unwrap_or(1.0);
        let sy = Linear {
            d0: 0.0,
            d1: top,
            r0: y0,
            r1: y1,
        };
        for t in &ticks {
            grid(svg, sy.map(*t), short(*t));
        }
        Box::new(move |v| sy.map(v))
    }
}

/// A per-second series as steps: each second's value held from its start to its end.
pub fn steps(values: &[u64]) -> Vec<(f64, f64)> {
    values
        .iter()
        .enumerate()
        .flat_map(|(i, v)| [(i as f64, *v as f64), (i as f64 + 1.0, *v as f64)])
        .collect()
}

/// One bar per entry (label, colour, value), labelled with `fmt(value)`.
pub fn bar_chart(
    title: &str,
    y_label: &str,
    bars: &[(String, &'static str, f64)],
    fmt: fn(f64) -> String,
) -> String {
    let mut svg = Svg::new(W, H);
    let ((x0, x1), (y0, y1)) = frame(&mut svg, title);
    let max = bars.iter().map(|b| b.2).fold(0.0, f64::max);
    let ticks = nice_ticks(max);
    let top = ticks.last().copied().unwrap_or(1.0);
    let sy = Linear {
        d0: 0.0,
        d1: top,
        r0: y0,
        r1: y1,
    };
    for t in &ticks {
        svg.line((x0, sy.map(*t)), (x1, sy.map(*t)), GRID, 1.0);
        svg.text((x0 - 6.0, sy.map(*t) + 4.0), Anchor::End, 11.0, &short(*t));
    }
    svg.vtext((14.0, (y0 + y1) / 2.0), 11.0, y_label);
    let slot = (x1 - x0) / bars.len().max(1) as f64;
    let width = (slot * 0.6).min(90.0);
    for (i, (label, color, value)) in bars.iter().enumerate() {
        let cx = x0 + slot * (i as f64 + 0.5);
        let y = sy.map(*value);
        svg.rect((cx - width / 2.0, y), (width, y0 - y), color);
        svg.text((cx, y - 4.0), Anchor::Middle, 11.0, &fmt(*value));
        svg.text((cx, y0 + 15.0), Anchor::Middle, 11.0, label);
    }
    svg.line((x0, y0), (x1, y0), AXIS, 1.0);
    svg.line((x0, y0), (x0, y1), AXIS, 1.0);
    svg.finish(title)
}
