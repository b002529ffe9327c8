//! A writer for the Prometheus text exposition format, version 0.0.4.
//!
//! It knows the format's rules so the families in `prometheus.rs` need not: `# HELP` and
//! `# TYPE` before a family's samples, label values and help text escaped. Names are the
//! caller's constants; debug builds check them.

use std::fmt::{Display, Write as _};

/// The content type of the format, for the HTTP listener.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A metric family's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    Counter,
    Gauge,
    Histogram,
}

impl Type {
    fn as_str(self) -> &'static str {
        match self {
            Self::Counter => "counter",
            Self::Gauge => "gauge",
            Self::Histogram => "histogram",
        }
    }
}

/// The text being written.
#[derive(Debug, Default)]
pub struct Exposition {
    out: String,
}

impl Exposition {
    /// Starts family `name`; its samples follow.
    pub fn family(&mut self, name: &str, ty: Type, help: &str) {
        debug_assert!(valid_name(name), "bad metric name {name}");
        let help = help.replace('\\', "\\\\").replace('\n', "\\n");
        // Writing to a String cannot fail.
        let _ = writeln!(self.out, "# HELP {name} {help}");
        let _ = writeln!(self.out, "# TYPE {name} {}", ty.as_str());
    }

    /// One sample of the current family. `value` must print as a Prometheus number (an
    /// integer or a finite float: Rust prints neither with an exponent).
    pub fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: impl Display) {
        self.out.push_str(name);
        if !labels.is_empty() {
            self.out.push('{');
            for (i, (label, value)) in labels.iter().enumerate() {
                debug_assert!(valid_name(label), "bad label name {label}");
                if i > 0 {
                    self.out.push(',');
                }
                self.out.push_str(label);
                self.out.push_str("=\"");
                escape_label(&mut self.out, value);
                self.out.push('"');
            }
            self.out.push('}');
        }
        let _ = writeln!(self.out, " {value}");
    }

    /// The text written.
    pub fn finish(self) -> String {
        self.out
    }
}

fn escape_label(out: &mut String, value: &str) {
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// `[a-zA-Z_][a-zA-Z0-9_]*` (tern's names never use the colon reserved for recording rules).
fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_label_values_and_help() {
        let mut e = Exposition::default();
        e.family("tern_x_total", Type::Counter, "A \\ help\nline.");
        e.sample("tern_x_total", &[("a", "q\"b\\s\nn"), ("b", "ok")], 3);
        e.sample("tern_x_total", &[], 4.5);
        assert_eq!(
            e.finish(),
            "# HELP tern_x_total A \\\\ help\\nline.\n# TYPE tern_x_total counter\n\
             tern_x_total{a=\"q\\\"b\\\\s\\nn\",b=\"ok\"} 3\ntern_x_total 4.5\n"
        );
    }

    #[test]
    fn names() {
        assert!(valid_name("tern_a1_total"));
        assert!(!valid_name("1a"));
        assert!(!valid_name("a-b"));
        assert!(!valid_name(""));
    }
}
