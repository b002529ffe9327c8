//! `log_format`: the input is a frontend's `log_format` (first byte even) or its
//! `unique_id_format` (odd), in a generated configuration. An accepted format holds no control
//! byte but tab, only variables tern knows (a request id only those known when the request is
//! routed), samples numbered 0, 1, ... in order, and prints back to the same pieces.

use std::fmt::Write;
use std::path::Path;

use tern_config::{LogFlags, LogPiece, LogTemplate};

use crate::config::{fetch_name, frontend_config, only_frontend, toml_string, FILE};

/// The check of the `log_format` target.
pub fn log_format(data: &[u8]) {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let id = selector % 2 == 1;
    let Some(template) = compiled(text, id) else {
        return;
    };
    let mut printed = String::new();
    let mut slot = 0;
    for piece in &template.pieces {
        match piece {
            LogPiece::Text(t) => {
                assert!(!t.is_empty(), "an empty text piece");
                assert!(!t.contains(' '), "a space in a text piece: {t:?}");
                assert!(
                    !t.chars().any(|c| c.is_control() && c != '\t'),
                    "control character in {t:?}"
                );
                printed.push_str(&t.replace('%', "%%"));
            }
            LogPiece::Separator => printed.push(' '),
            LogPiece::Flags(f) => {
                let _ = write!(printed, "%{{{}}}o", flags(*f));
            }
            LogPiece::Var { var, flags: f } => {
                assert!(!id || var.at_request(), "{var:?} in a request id");
                let _ = write!(printed, "%{{{}}}{}", flags(*f), var.name());
            }
            LogPiece::Sample {
                fetch,
                flags: f,
                slot: s,
            } => {
                assert_eq!(*s, slot, "samples out of order");
                slot += 1;
                let _ = write!(printed, "%{{{}}}[{}]", flags(*f), fetch_name(fetch));
            }
        }
    }
    assert_eq!(slot, template.samples, "sample count");
    let again = compiled(&printed, id).unwrap_or_else(|| panic!("{printed:?} is refused"));
    assert_eq!(again, template, "{text:?} printed as {printed:?}");
}

/// `+Q+X+E` for the flags set.
fn flags(f: LogFlags) -> String {
    let mut out = String::new();
    for (on, name) in [(f.quote, "+Q"), (f.hex, "+X"), (f.escape, "+E")] {
        if on {
            out.push_str(name);
        }
    }
    out
}

/// The format compiled by the configuration, if accepted.
fn compiled(text: &str, id: bool) -> Option<LogTemplate> {
    let key = if id { "unique_id_format" } else { "log_format" };
    let line = format!("{key} = {}", toml_string(text));
    let config = match tern_config::parse(&frontend_config(&line), Path::new(FILE)) {
        Ok(c) => c,
        Err(errors) => {
            assert!(!errors.0.is_empty());
            return None;
        }
    };
    let log = &only_frontend(&config).request_log;
    let template = if id {
        log.unique_id_format.clone()
    } else {
        log.log_format.as_deref().cloned()
    };
    Some(template.unwrap_or_else(|| panic!("{key} accepted but not kept")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documented_formats_round_trip() {
        log_format(b"\x00%ci:%cp [%tr] %ft %b/%s %TR/%Tw/%Tc/%Tr/%Ta %ST %B %tsc %hr %{+Q}r");
        log_format(b"\x01%{+X}o %ci:%cp_%fi:%fp_%Ts_%rt:%pid");
        log_format(b"\x00%[hdr(host)] %{+Q+E}[var(txn.a)] 100%% %{}o%CS");
        log_format(b"\x01%ST");
    }
}
