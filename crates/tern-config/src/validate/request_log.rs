//! A frontend's `unique_id_format`, `unique_id_header`, `capture_request_headers`,
//! `capture_response_headers` and `log_format` (HAProxy's `unique-id-*`, `capture ... header`,
//! `log-format`).
//!
//! Formats are compiled here (`template.rs`), so a variable tern does not write, or one that
//! a request id cannot know yet, is a `tern check` error with its line, never a line written
//! differently from HAProxy's.

mod template;

use std::sync::Arc;

use super::http_rules::is_token_text;
use super::Checker;
use crate::locate::KeyPath;
use crate::model::{Capture, ProxyMode, RequestLog, CAPTURES_MAX, CAPTURE_MAX};
use crate::raw::{RawCapture, RawFrontend};
use template::{compile, Use};

impl Checker<'_> {
    /// The request id, captures and log format of frontend `raw` (in `mode`).
    pub(super) fn request_log(
        &mut self,
        raw: &RawFrontend,
        mode: ProxyMode,
        path: &KeyPath,
    ) -> RequestLog {
        let http = mode == ProxyMode::Http;
        let format = |c: &mut Self, text: Option<&String>, key: &str, used: Use| {
            let text = text?;
            compile(text, used)
                .map_err(|e| c.issue(&path.key(key), e))
                .ok()
        };
        let unique_id_format = format(
            self,
            raw.unique_id_format.as_ref(),
            "unique_id_format",
            Use::UniqueId,
        );
        if unique_id_format.is_some() && !http {
            self.issue(
                &path.key("unique_id_format"),
                "request ids are not supported yet on TCP frontends",
            );
        }
        let log_format = format(
            self,
            raw.log_format.as_ref(),
            "log_format",
            Use::Log { http },
        );
        let unique_id_header = raw.unique_id_header.as_ref().map(|name| {
            let at = path.key("unique_id_header");
            if !is_token_text(name) {
                self.issue(&at, format!("`{name}` is not a header name"));
            } else if raw.unique_id_format.is_none() {
                self.issue(&at, "needs `unique_id_format`: the id the header carries");
            } else if !http {
                self.issue(&at, "a TCP frontend has no request to add a header to");
            }
            name.clone()
        });
        let capture_request = self.captures(
            raw.capture_request_headers.as_deref(),
            http,
            &path.key("capture_request_headers"),
        );
        let capture_response = self.captures(
            raw.capture_response_headers.as_deref(),
            http,
            &path.key("capture_response_headers"),
        );
        RequestLog {
            unique_id_format,
            unique_id_header,
            capture_request,
            capture_response,
            log_format: log_format.map(Arc::new),
        }
    }

    fn captures(&mut self, raw: Option<&[RawCapture]>, http: bool, path: &KeyPath) -> Vec<Capture> {
        let raw = raw.unwrap_or_default();
        if !raw.is_empty() && !http {
            self.issue(path, "a TCP frontend has no headers to capture");
        }
        if raw.len() > CAPTURES_MAX {
            self.issue(path, format!("at most {CAPTURES_MAX} captures"));
        }
        raw.iter()
            .enumerate()
            .map(|(i, c)| {
                let at = path.index(i);
                let name = match &c.name {
                    Some(n) if is_token_text(n) => n.to_ascii_lowercase(),
                    Some(n) => {
                        self.issue(&at.key("name"), format!("`{n}` is not a header name"));
                        String::new()
                    }
                    None => {
                        self.issue(&at, "missing key `name`: the header to capture");
                        String::new()
                    }
                };
                let len = match c.len {
                    None => {
                        self.issue(&at, "missing key `len`: the bytes of the value to keep");
                        0
                    }
                    Some(len) => self.int_in(&at.key("len"), Some(len), 1..=CAPTURE_MAX as i64, 1),
                };
                Capture {
                    name,
                    len: len as usize,
                }
            })
            .collect()
    }
}
