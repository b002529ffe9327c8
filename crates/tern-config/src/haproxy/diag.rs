//! Errors and warnings of the HAProxy front end.
//!
//! Nothing in a `.cfg` is silently ignored: a keyword is translated, or it is an error (unknown,
//! or "not supported yet"), or it is a [`Warning`]: it has no effect in tern, or tern does
//! something close but not identical. Errors are [`ConfigError`]s like the TOML stage's,
//! located at the `.cfg` line with the section as context (`haproxy.cfg:12: backend app:
//! unknown keyword 'foo'`). Warnings are collected and printed together, as one warning that
//! lists them ([`format_warnings`]).

use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::ConfigError;

/// Why a keyword produced a warning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WarningKind {
    /// The keyword does nothing in tern (`user`, `daemon`, `log`, ...).
    NoEffect,
    /// tern does something close to what HAProxy documents, not exactly it.
    Approximate,
}

/// A keyword of a HAProxy configuration that tern accepts with a difference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub file: PathBuf,
    /// 1-based line of the keyword.
    pub line: usize,
    /// The section: `global`, `defaults`, `frontend web`, `backend app`, `listen stats`.
    pub context: String,
    pub keyword: String,
    pub kind: WarningKind,
    /// What tern does instead, or why nothing is needed.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            WarningKind::NoEffect => "has no effect in tern",
            WarningKind::Approximate => "is approximated",
        };
        write!(
            f,
            "{}:{}: {}: '{}' {what}: {}",
            self.file.display(),
            self.line,
            self.context,
            self.keyword,
            self.message
        )
    }
}

/// The warnings as one message: a header line, then one indented line per warning, in file
/// order. Empty when there are none.
pub fn format_warnings(warnings: &[Warning]) -> String {
    let Some(first) = warnings.first() else {
        return String::new();
    };
    let mut sorted: Vec<&Warning> = warnings.iter().collect();
    sorted.sort_by_key(|w| w.line);
    let count = warnings.len();
    let noun = if count == 1 { "keyword" } else { "keywords" };
    let mut text = format!(
        "warning: {}: {count} {noun} with no effect in tern or mapped approximately:",
        first.file.display()
    );
    for warning in sorted {
        text.push_str("\n  ");
        text.push_str(&warning.to_string());
    }
    text
}

/// Collects the problems of one conversion.
#[derive(Debug)]
pub(crate) struct Diag {
    file: PathBuf,
    pub errors: Vec<ConfigError>,
    pub warnings: Vec<Warning>,
}

impl Diag {
    pub fn new(file: &Path) -> Self {
        Self {
            file: file.to_path_buf(),
            errors: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// An error at `line` of the `.cfg`, in section `context` (may be empty).
    pub fn error(&mut self, line: usize, context: &str, message: impl Into<String>) {
        let error = ConfigError {
            file: self.file.clone(),
            line: Some(line),
            key_path: context.to_owned(),
            message: message.into(),
        };
        if !self.errors.contains(&error) {
            self.errors.push(error);
        }
    }

    pub fn unknown(&mut self, line: usize, context: &str, keyword: &str) {
        self.error(line, context, format!("unknown keyword '{keyword}'"));
    }

    /// `what` is quoted as written: a keyword, or a keyword with its argument.
    pub fn unsupported(&mut self, line: usize, context: &str, what: &str) {
        self.error(
            line,
            context,
            format!("keyword '{what}' is not supported yet"),
        );
    }

    /// Like [`Diag::unsupported`], with a reason or a hint.
    pub fn unsupported_because(&mut self, line: usize, context: &str, what: &str, why: &str) {
        self.error(
            line,
            context,
            format!("keyword '{what}' is not supported yet: {why}"),
        );
    }

    pub fn no_effect(&mut self, line: usize, context: &str, keyword: &str, why: &str) {
        self.warn(line, context, keyword, WarningKind::NoEffect, why);
    }

    pub fn approx(&mut self, line: usize, context: &str, keyword: &str, what: &str) {
        self.warn(line, context, keyword, WarningKind::Approximate, what);
    }

    fn warn(
        &mut self,
        line: usize,
        context: &str,
        keyword: &str,
        kind: WarningKind,
        message: &str,
    ) {
        let warning = Warning {
            file: self.file.clone(),
            line,
            context: context.to_owned(),
            keyword: keyword.to_owned(),
            kind,
            message: message.to_owned(),
        };
        if !self.warnings.contains(&warning) {
            self.warnings.push(warning);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_read_file_line_context_message() {
        let mut diag = Diag::new(Path::new("haproxy.cfg"));
        diag.unknown(12, "backend app", "foo");
        diag.unsupported(3, "frontend web", "send-proxy-v3");
        diag.unknown(12, "backend app", "foo");
        let text: Vec<String> = diag.errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            [
                "haproxy.cfg:12: backend app: unknown keyword 'foo'",
                "haproxy.cfg:3: frontend web: keyword 'send-proxy-v3' is not supported yet",
            ]
        );
    }

    #[test]
    fn warnings_are_listed_in_one_message_in_line_order() {
        let mut diag = Diag::new(Path::new("h.cfg"));
        diag.approx(
            9,
            "frontend web",
            "alpn",
            "tern has no HTTP/2: alpn = [\"http/1.1\"]",
        );
        diag.no_effect(2, "global", "user", "tern runs as the user that starts it");
        assert_eq!(
            format_warnings(&diag.warnings),
            "warning: h.cfg: 2 keywords with no effect in tern or mapped approximately:\n  \
             h.cfg:2: global: 'user' has no effect in tern: tern runs as the user that starts it\n  \
             h.cfg:9: frontend web: 'alpn' is approximated: tern has no HTTP/2: alpn = [\"http/1.1\"]"
        );
        assert_eq!(format_warnings(&[]), "");
    }
}
