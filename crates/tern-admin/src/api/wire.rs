//! How answers travel on the Unix socket, shared by the server (`unix.rs`) and the client
//! (`tern ctl`, `ctl.rs`).
//!
//! A client writes one command per line (at most [`MAX_LINE`] bytes, `\n` or `\r\n`). The
//! server answers each line, in order, with the answer's lines followed by one empty line, as
//! HAProxy's CLI does; a client may therefore send several commands at once and split the
//! answers at the empty lines. An answer never contains an empty line of its own: one is sent as
//! a line holding a single space.
//!
//! - A text answer that failed starts with `error: `; a successful one never does.
//! - A JSON answer (the `json` prefix) is one line: `{"ok": bool, "output": ..., "error": ...}`,
//!   the same envelope as the HTTP listener's `POST /v1/command`.

use serde_json::{json, Value};

use super::command::Format;
use super::exec::{Failure, Output};

/// Longest command line, line ending included.
pub const MAX_LINE: usize = 4096;

/// First characters of a failed text answer.
pub const ERROR_PREFIX: &str = "error: ";

/// The `{ok, output, error}` envelope of an answer.
pub fn envelope(result: Result<Output, Failure>) -> Value {
    match result {
        Ok(output) => json!({ "ok": true, "output": output.into_json(), "error": null }),
        Err(failure) => json!({ "ok": false, "output": null, "error": failure.to_string() }),
    }
}

/// The bytes sent for one answer, end marker included.
pub fn frame(format: Format, result: Result<Output, Failure>) -> String {
    let body = match (format, result) {
        (Format::Json, result) => envelope(result).to_string(),
        (Format::Text, Ok(Output::Text(text))) => text,
        (Format::Text, Ok(Output::Json(value))) => {
            serde_json::to_string_pretty(&value).unwrap_or_default()
        }
        (Format::Text, Err(failure)) => format!("{ERROR_PREFIX}{failure}"),
    };
    frame_text(&body)
}

/// `body`'s lines, each ended by `\n`, empty ones sent as one space, then the empty end line.
pub fn frame_text(body: &str) -> String {
    let mut framed = String::with_capacity(body.len() + 2);
    for line in body.trim_end_matches(['\n', '\r']).lines() {
        framed.push_str(if line.is_empty() { " " } else { line });
        framed.push('\n');
    }
    framed.push('\n');
    framed
}

/// One answer as a client reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The command was carried out.
    pub ok: bool,
    /// The answer's lines (without the end marker), `\n`-separated.
    pub body: String,
}

impl Answer {
    /// Judges an answer's lines (as read up to the empty end line) to a command sent with
    /// the `json` prefix or without.
    pub fn from_lines(format: Format, lines: &[String]) -> Self {
        let body = lines.join("\n");
        let ok = match format {
            Format::Json => serde_json::from_str::<Value>(&body)
                .ok()
                .and_then(|value| value.get("ok").and_then(Value::as_bool))
                .unwrap_or(false),
            Format::Text => !lines
                .first()
                .is_some_and(|first| first.starts_with(ERROR_PREFIX)),
        };
        Self { ok, body }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::command::ParseError;

    #[test]
    fn text_answers_end_with_an_empty_line_and_hold_none() {
        assert_eq!(frame_text("a\n\nb\n"), "a\n \nb\n\n");
        assert_eq!(frame_text(""), "\n");
        let ok = frame(Format::Text, Ok(Output::Text("done".into())));
        assert_eq!(ok, "done\n\n");
        let err = frame(
            Format::Text,
            Err(Failure::Parse(ParseError("bad\nusage: x".into()))),
        );
        assert_eq!(err, "error: bad\nusage: x\n\n");
    }

    #[test]
    fn json_answers_are_one_line_envelopes() {
        let framed = frame(Format::Json, Ok(Output::Json(json!({"a": [1, 2]}))));
        assert_eq!(framed.trim_end().lines().count(), 1, "{framed}");
        assert!(framed.ends_with("}\n\n"));
        let value: Value = serde_json::from_str(framed.trim_end()).expect("JSON");
        assert_eq!(value["ok"], true);
        assert_eq!(value["output"]["a"][1], 2);
        let failed = frame(Format::Json, Err(Failure::Forbidden("no".into())));
        let value: Value = serde_json::from_str(failed.trim_end()).expect("JSON");
        assert_eq!(value, json!({"ok": false, "output": null, "error": "no"}));
    }

    fn lines(s: &str) -> Vec<String> {
        s.lines().map(str::to_owned).collect()
    }

    #[test]
    fn clients_judge_answers() {
        let text = |s: &str| Answer::from_lines(Format::Text, &lines(s)).ok;
        let json = |s: &str| Answer::from_lines(Format::Json, &lines(s)).ok;
        assert!(text("version: 1"));
        assert!(text(r#"{"ok": false}"#), "text output that looks like JSON");
        assert!(!text("error: no\nusage: x"));
        assert!(text(""));
        assert!(!json(r#"{"ok":false,"output":null,"error":"x"}"#));
        assert!(json(r#"{"ok":true,"output":1,"error":null}"#));
        assert!(!json("not json"));
    }
}
