//! Percentiles of the latency histograms: the fixed table of the report and the curve for
//! plots.
//!
//! Why a "nines" curve: tail latency is read on a log scale of `1 / (1 - q)` (seed 001 plots to
//! 99.9999%). The curve takes [`CURVE_POINTS_PER_DECADE`] quantiles per decade of that scale, from
//! 0 to 99.9999%, plus the maximum, so every decade of the tail has the same resolution. Values
//! come from HdrHistogram with three significant figures: each is the highest value equivalent
//! to the recorded ones at that quantile, within 0.1%.

use hdrhistogram::Histogram;

/// Percentiles of the report table, as (label, quantile).
pub const PERCENTILES: [(&str, f64); 8] = [
    ("p50", 0.5),
    ("p75", 0.75),
    ("p90", 0.9),
    ("p99", 0.99),
    ("p99.9", 0.999),
    ("p99.99", 0.9999),
    ("p99.999", 0.99999),
    ("p99.9999", 0.999999),
];

/// Points per decade of `1 / (1 - q)` in [`curve`].
pub const CURVE_POINTS_PER_DECADE: u32 = 10;

/// Decades of nines in [`curve`]: up to 99.9999%.
pub const CURVE_DECADES: u32 = 6;

/// A summary of one histogram.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Samples.
    pub count: u64,
    /// Smallest sample.
    pub min: u64,
    /// Largest sample.
    pub max: u64,
    /// Mean.
    pub mean: f64,
    /// Standard deviation.
    pub stdev: f64,
    /// The [`PERCENTILES`], in order.
    pub percentiles: Vec<(&'static str, u64)>,
}

/// Summarises `h` (all zero when empty).
pub fn summary(h: &Histogram<u64>) -> Summary {
    if h.is_empty() {
        return Summary {
            count: 0,
            min: 0,
            max: 0,
            mean: 0.0,
            stdev: 0.0,
            percentiles: PERCENTILES.iter().map(|&(l, _)| (l, 0)).collect(),
        };
    }
    Summary {
        count: h.len(),
        min: h.min(),
        max: h.max(),
        mean: h.mean(),
        stdev: h.stdev(),
        percentiles: PERCENTILES
            .iter()
            .map(|&(label, q)| (label, h.value_at_quantile(q)))
            .collect(),
    }
}

/// The quantiles of [`curve`]: `1 - 10^(-k / points)` for k = 0 … decades × points.
pub fn curve_quantiles() -> Vec<f64> {
    let steps = CURVE_DECADES * CURVE_POINTS_PER_DECADE;
    (0..=steps)
        .map(|k| 1.0 - 10f64.powf(-f64::from(k) / f64::from(CURVE_POINTS_PER_DECADE)))
        .collect()
}

/// The percentile curve of `h` as (percentile in %, value) points, ending with (100, max);
/// empty for an empty histogram.
pub fn curve(h: &Histogram<u64>) -> Vec<(f64, u64)> {
    if h.is_empty() {
        return Vec::new();
    }
    let mut points: Vec<(f64, u64)> = curve_quantiles()
        .into_iter()
        .map(|q| (q * 100.0, h.value_at_quantile(q)))
        .collect();
    points.push((100.0, h.max()));
    points
}

#[cfg(test)]
mod tests;
