//! `[control]`, as written (checked in `validate/control.rs`).

use std::fmt;

use serde::de::Deserializer;
use serde::Deserialize;

use super::{RawDuration, TextOrInt, TextOrIntVisitor};

/// `[control]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawControl {
    pub socket: Option<String>,
    pub socket_mode: Option<RawMode>,
    pub http: Option<String>,
    pub token: Option<String>,
    pub token_file: Option<String>,
    pub stats_refresh: Option<RawDuration>,
    /// Basic authentication on the HTTP listener: the `[[userlist]]` of its users.
    pub userlist: Option<String>,
    pub realm: Option<String>,
}

/// A file mode as written: an octal string (`"0600"`) or a TOML integer (`0o600`).
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct RawMode(pub TextOrInt);

impl fmt::Debug for RawMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            TextOrInt::Text(text) => write!(f, "RawMode({text:?})"),
            TextOrInt::Int(v) => write!(f, "RawMode({v:#o})"),
        }
    }
}

impl<'de> Deserialize<'de> for RawMode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TextOrIntVisitor("an octal file mode string like \"0600\""))
            .map(RawMode)
    }
}
