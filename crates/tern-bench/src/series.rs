//! Per-second series of the measured window, and the rule that decides whether they are flat.
//!
//! Why per second: a total over the window hides a stall, a slow start or a rate that decays as
//! some resource runs out; a benchmark is only meaningful over a steady window (seed 001's
//! method). The series are indexed by whole seconds from the start of the window; events are
//! put in the second they finished in.
//!
//! The flatness rule ([`flatness`]): a series is flat when every second is within
//! [`MAX_DEVIATION`] (20%) of the median second **and** its coefficient of variation (standard
//! deviation over mean) is at most [`MAX_CV`] (10%). The first catches a single stalled or
//! bursting second, the second a series that wobbles throughout. Fewer than
//! [`MIN_SECONDS`] whole seconds are too few to judge: the rule then says so instead of passing.

/// Error classes of [`Series::errors`]: the five [`ErrorKind`](crate::stats::ErrorKind)s, then
/// the status classes counted as errors.
pub const ERROR_CLASSES: [&str; 8] = [
    "connect", "tls", "timeout", "io", "protocol", "4xx", "5xx", "other",
];

/// A second more than this share away from the median makes a series not flat.
pub const MAX_DEVIATION: f64 = 0.20;

/// A coefficient of variation above this makes a series not flat.
pub const MAX_CV: f64 = 0.10;

/// The fewest whole seconds the flatness rule judges.
pub const MIN_SECONDS: usize = 3;

/// Counts per whole second of the measured window.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Series {
    /// Connections established.
    pub connections: Vec<u64>,
    /// Responses completed (any status).
    pub requests: Vec<u64>,
    /// Response bytes received.
    pub bytes: Vec<u64>,
    /// Errors by class, indexed like [`ERROR_CLASSES`].
    pub errors: [Vec<u64>; 8],
    /// Connections open at the end of each second.
    pub active: Vec<u64>,
}

impl Series {
    /// Zeroed series of `seconds` seconds.
    pub fn new(seconds: usize) -> Self {
        let zero = || vec![0; seconds];
        Self {
            connections: zero(),
            requests: zero(),
            bytes: zero(),
            errors: std::array::from_fn(|_| zero()),
            active: zero(),
        }
    }

    /// Whole seconds covered.
    pub fn seconds(&self) -> usize {
        self.requests.len()
    }

    /// Adds another thread's series, second by second.
    pub fn merge(&mut self, other: &Series) {
        add(&mut self.connections, &other.connections);
        add(&mut self.requests, &other.requests);
        add(&mut self.bytes, &other.bytes);
        for (mine, theirs) in self.errors.iter_mut().zip(&other.errors) {
            add(mine, theirs);
        }
        add(&mut self.active, &other.active);
    }

    /// Keeps the first `seconds` seconds.
    pub fn truncate(&mut self, seconds: usize) {
        self.connections.truncate(seconds);
        self.requests.truncate(seconds);
        self.bytes.truncate(seconds);
        for e in &mut self.errors {
            e.truncate(seconds);
        }
        self.active.truncate(seconds);
    }

    /// Errors of every class in each second.
    pub fn errors_total(&self) -> Vec<u64> {
        (0..self.seconds())
            .map(|s| {
                self.errors
                    .iter()
                    .map(|e| e.get(s).copied().unwrap_or(0))
                    .sum()
            })
            .collect()
    }
}

fn add(into: &mut [u64], from: &[u64]) {
    for (a, b) in into.iter_mut().zip(from) {
        *a += b;
    }
}

/// What the flatness rule found about one series.
#[derive(Debug, Clone, PartialEq)]
pub enum Flatness {
    /// Every second within the bounds.
    Flat,
    /// Fewer than [`MIN_SECONDS`] whole seconds: not judged.
    TooShort,
    /// Not flat, with a sentence saying why.
    NotFlat(String),
}

/// Median of the values (mean of the middle two for an even count); 0 for none.
pub fn median(values: &[u64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    let n = sorted.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => sorted[n / 2] as f64,
        _ => (sorted[n / 2 - 1] as f64 + sorted[n / 2] as f64) / 2.0,
    }
}

/// Coefficient of variation (population standard deviation over mean); 0 for a zero mean.
pub fn coefficient_of_variation(values: &[u64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let n = values.len() as f64;
    let mean = values.iter().map(|&v| v as f64).sum::<f64>() / n;
    if mean == 0.0 {
        return 0.0;
    }
    let var = values
        .iter()
        .map(|&v| (v as f64 - mean).powi(2))
        .sum::<f64>()
        / n;
    var.sqrt() / mean
}

/// Applies the flatness rule (see the module documentation) to the series `name`.
pub fn flatness(name: &str, values: &[u64]) -> Flatness {
    if values.len() < MIN_SECONDS {
        return Flatness::TooShort;
    }
    let med = median(values);
    if med == 0.0 {
        return Flatness::NotFlat(format!("{name}: the median second is 0"));
    }
    let worst = values
        .iter()
        .enumerate()
        .map(|(i, &v)| (i, v, (v as f64 - med) / med))
        .max_by(|a, b| a.2.abs().total_cmp(&b.2.abs()));
    if let Some((second, value, dev)) = worst {
        if dev.abs() > MAX_DEVIATION {
            return Flatness::NotFlat(format!(
                "{name}: second {second} had {value}, {:+.0}% from the median {med:.0} \
                 (limit ±{:.0}%)",
                dev * 100.0,
                MAX_DEVIATION * 100.0
            ));
        }
    }
    let cv = coefficient_of_variation(values);
    if cv > MAX_CV {
        return Flatness::NotFlat(format!(
            "{name}: coefficient of variation {:.1}% (limit {:.0}%)",
            cv * 100.0,
            MAX_CV * 100.0
        ));
    }
    Flatness::Flat
}

#[cfg(test)]
mod tests;
