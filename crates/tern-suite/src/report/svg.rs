//! A very small SVG writer: shapes, escaped text, and the scales and ticks charts need.
//!
//! Hand-written so the HTML report is one self-contained file with no script and no library:
//! it opens anywhere, offline, years from now, and a reviewer can read the markup. Every text
//! goes through [`escape`], since labels come from scenario files (workload and target names).

use std::fmt::Write as _;

/// Escapes text for SVG/HTML content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Horizontal text alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    Start,
    Middle,
    End,
}

impl Anchor {
    fn name(self) -> &'static str {
        match self {
            Anchor::Start => "start",
            Anchor::Middle => "middle",
            Anchor::End => "end",
        }
    }
}

/// An SVG document under construction.
#[derive(Debug, Clone)]
pub struct Svg {
    width: f64,
    height: f64,
    body: String,
}

/// Coordinates with two decimals: enough for a screen, and stable in tests.
fn n(v: f64) -> String {
    if v.is_finite() {
        format!("{:.2}", v)
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_owned()
    } else {
        "0".to_owned()
    }
}

impl Svg {
    pub fn new(width: f64, height: f64) -> Self {
        Self {
            width,
            height,
            body: String::with_capacity(8192),
        }
    }

    pub fn line(&mut self, (x1, y1): (f64, f64), (x2, y2): (f64, f64), stroke: &str, width: f64) {
        let _ = writeln!(
            self.body,
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"{}\"/>",
            n(x1),
            n(y1),
            n(x2),
            n(y2),
            escape(stroke),
            n(width)
        );
    }

    pub fn rect(&mut self, (x, y): (f64, f64), (w, h): (f64, f64), fill: &str) {
        let _ = writeln!(
            self.body,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>",
            n(x),
            n(y),
            n(w.max(0.0)),
            n(h.max(0.0)),
            escape(fill)
        );
    }

    pub fn polyline(&mut self, points: &[(f64, f64)], stroke: &str, width: f64, dashed: bool) {
        if points.is_empty() {
            return;
        }
        let pts: Vec<String> = points
            .iter()
            .map(|&(x, y)| format!("{},{}", n(x), n(y)))
            .collect();
        let dash = if dashed {
            " stroke-dasharray=\"5,3\""
        } else {
            ""
        };
        let _ = writeln!(
            self.body,
            "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"{dash} points=\"{}\"/>",
            escape(stroke),
            n(width),
            pts.join(" ")
        );
    }

    pub fn text(&mut self, (x, y): (f64, f64), anchor: Anchor, size: f64, text: &str) {
        let _ = writeln!(
            self.body,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"{}\" font-size=\"{}\">{}</text>",
            n(x),
            n(y),
            anchor.name(),
            n(size),
            escape(text)
        );
    }

    /// Text rotated a quarter turn counter-clockwise (a y-axis label).
    pub fn vtext(&mut self, (x, y): (f64, f64), size: f64, text: &str) {
        let _ = writeln!(
            self.body,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"{}\" transform=\"rotate(-90 {} {})\">{}</text>",
            n(x),
            n(y),
            n(size),
            n(x),
            n(y),
            escape(text)
        );
    }

    /// The finished `<svg>` element, with an accessible title.
    pub fn finish(self, title: &str) -> String {
        format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" \
             font-family=\"sans-serif\" role=\"img\">\n<title>{}</title>\n{}</svg>\n",
            escape(title),
            self.body,
            w = n(self.width),
            h = n(self.height),
        )
    }
}

/// A linear map from a data range to a pixel range.
#[derive(Debug, Clone, Copy)]
pub struct Linear {
    pub d0: f64,
    pub d1: f64,
    pub r0: f64,
    pub r1: f64,
}

impl Linear {
    pub fn map(&self, v: f64) -> f64 {
        let span = self.d1 - self.d0;
        if span.abs() < f64::EPSILON {
            return self.r0;
        }
        self.r0 + (v - self.d0) / span * (self.r1 - self.r0)
    }
}

/// A base-10 logarithmic map (values clamped to the domain's lower bound).
#[derive(Debug, Clone, Copy)]
pub struct Log10 {
    pub d0: f64,
    pub d1: f64,
    pub r0: f64,
    pub r1: f64,
}

impl Log10 {
    pub fn map(&self, v: f64) -> f64 {
        let lin = Linear {
            d0: self.d0.log10(),
            d1: self.d1.log10(),
            r0: self.r0,
            r1: self.r1,
        };
        lin.map(v.max(self.d0).log10())
    }
}

/// Round tick values from 0 to at least `max`: steps of 1, 2 or 5 × 10^k, about five ticks.
pub fn nice_ticks(max: f64) -> Vec<f64> {
    if !(max.is_finite() && max > 0.0) {
        return vec![0.0, 1.0];
    }
    let raw = max / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let count = (max / step).ceil() as usize;
    (0..=count).map(|i| i as f64 * step).collect()
}

/// Powers of ten covering `[min, max]` (at least two).
pub fn log_ticks(min: f64, max: f64) -> Vec<f64> {
    let lo = min.max(1e-9).log10().floor() as i32;
    let hi = (max.max(min * 10.0).log10().ceil() as i32).max(lo + 1);
    (lo..=hi).map(|e| 10f64.powi(e)).collect()
}

/// A compact number: 950, 1.2k, 34k, 1.5M.
pub fn short(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{}M", trim(v / 1e6))
    } else if a >= 1e3 {
        format!("{}k", trim(v / 1e3))
    } else {
        trim(v)
    }
}

fn trim(v: f64) -> String {
    let s = if v.abs() >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    };
    s.trim_end_matches(".0").to_owned()
}

/// A latency in µs as "850 µs", "12.5 ms", "1.20 s".
pub fn latency(us: f64) -> String {
    if us < 1_000.0 {
        format!("{us:.0} µs")
    } else if us < 1_000_000.0 {
        let ms = us / 1_000.0;
        if ms < 10.0 {
            format!("{ms:.2} ms")
        } else {
            format!("{ms:.1} ms")
        }
    } else {
        format!("{:.2} s", us / 1e6)
    }
}
