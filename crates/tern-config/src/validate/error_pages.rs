//! `error_pages` of a frontend or backend, and the `file` of a `return` rule: files read and
//! checked here, at load time, so a malformed page stops the configuration (with the file's
//! own line) instead of reaching a client.
//!
//! An `errorfile` is a whole HTTP/1.x response, as HAProxy's: a status line, fields, an empty
//! line, the body (LF or CRLF line ends); it is sent as HTTP/1.1, as all of tern's answers. Its `Content-Length`, if any, must be the body's
//! length; `Transfer-Encoding` is refused; `Connection` is dropped. tern writes the framing
//! and `Connection` of every answer itself.

use super::http_rules::is_token_text;
use super::Checker;
use crate::locate::KeyPath;
use crate::model::{ErrorPage, ErrorPages, DENY_STATUSES, MAX_ERROR_PAGE};
use crate::raw::{RawErrorPage, RawErrorPages};

impl Checker<'_> {
    /// The pages of `error_pages`, at `path`.
    pub(super) fn error_pages(
        &mut self,
        raw: Option<&RawErrorPages>,
        path: &KeyPath,
    ) -> ErrorPages {
        let mut pages = ErrorPages::default();
        for (key, raw) in raw.into_iter().flatten() {
            let at = path.key(key);
            let status = match key.parse::<u16>() {
                Ok(s) if DENY_STATUSES.contains(&s) => s,
                _ => {
                    let list: Vec<String> = DENY_STATUSES.iter().map(u16::to_string).collect();
                    self.issue(
                        &at,
                        format!(
                            "`{key}` is not a status tern answers itself: one of {}",
                            list.join(", ")
                        ),
                    );
                    continue;
                }
            };
            if let Some(page) = self.error_page(status, raw, &at) {
                pages.set(status, page);
            }
        }
        pages
    }

    fn error_page(&mut self, status: u16, raw: &RawErrorPage, at: &KeyPath) -> Option<ErrorPage> {
        if let Some(file) = &raw.errorfile {
            for (key, set) in [
                ("content_type", raw.content_type.is_some()),
                ("body", raw.body.is_some()),
                ("file", raw.file.is_some()),
            ] {
                if set {
                    self.issue(
                        &at.key(key),
                        "`errorfile` is a whole response: give it alone",
                    );
                }
            }
            let at = at.key("errorfile");
            let bytes = self.read_page_file(file, &at)?;
            return match parse_errorfile(&bytes) {
                Ok(page) => Some(page),
                Err((line, e)) => {
                    self.issue(&at, format!("{file}:{line}: {e}"));
                    None
                }
            };
        }
        let Some(content_type) = raw.content_type.as_deref() else {
            self.issue(
                at,
                "a page needs `errorfile`, or `content_type` with `body` or `file`",
            );
            return None;
        };
        if content_type.is_empty() || content_type.chars().any(char::is_control) {
            self.issue(
                &at.key("content_type"),
                "must be a media type, e.g. \"text/html\"",
            );
        }
        let body = self.page_body(raw.body.as_deref(), raw.file.as_deref(), at)?;
        let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status)).into_bytes();
        head.extend_from_slice(format!("content-type: {content_type}\r\n").as_bytes());
        Some(ErrorPage { head, body })
    }

    /// The body of a page or a `return` rule: `body`, or the bytes of `file`.
    pub(super) fn page_body(
        &mut self,
        body: Option<&str>,
        file: Option<&str>,
        at: &KeyPath,
    ) -> Option<Vec<u8>> {
        match (body, file) {
            (Some(_), Some(_)) => {
                self.issue(&at.key("file"), "give `body` or `file`, not both");
                None
            }
            (Some(b), None) => Some(b.as_bytes().to_vec()),
            (None, Some(f)) => self.read_page_file(f, &at.key("file")),
            (None, None) => Some(Vec::new()),
        }
    }

    /// Reads a page's file (relative to the configuration's directory), bounded.
    fn read_page_file(&mut self, file: &str, at: &KeyPath) -> Option<Vec<u8>> {
        let path = self.base_dir.join(file);
        match std::fs::read(&path) {
            Ok(bytes) if bytes.len() <= MAX_ERROR_PAGE => Some(bytes),
            Ok(bytes) => {
                self.issue(
                    at,
                    format!(
                        "{file}: {} bytes, over the limit of {MAX_ERROR_PAGE}",
                        bytes.len()
                    ),
                );
                None
            }
            Err(e) => {
                self.issue(at, format!("{}: {e}", path.display()));
                None
            }
        }
    }
}

/// The reason phrase tern writes for `status`.
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        407 => "Proxy Authentication Required",
        408 => "Request Timeout",
        410 => "Gone",
        413 => "Payload Too Large",
        425 => "Too Early",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "",
    }
}

/// Parses a whole HTTP response; the error's line (1-based) and text.
pub(crate) fn parse_errorfile(bytes: &[u8]) -> Result<ErrorPage, (usize, String)> {
    let text_end = find(bytes, b"\r\n\r\n")
        .map(|at| (at, at + 4))
        .into_iter()
        .chain(find(bytes, b"\n\n").map(|at| (at, at + 2)))
        .min();
    let lines_total = bytes.iter().filter(|&&b| b == b'\n').count() + 1;
    let Some((head_end, body_start)) = text_end else {
        return Err((
            lines_total,
            "no end of the head (an empty line after the fields)".into(),
        ));
    };
    let head = std::str::from_utf8(&bytes[..head_end])
        .map_err(|_| (1, "the head is not text".to_owned()))?;
    let body = bytes[body_start..].to_vec();
    let mut out = Vec::new();
    for (i, line) in head.split('\n').enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let no = i + 1;
        if i == 0 {
            status_line(line).map_err(|e| (no, e))?;
            // tern answers in HTTP/1.1 (the file may say HTTP/1.0, as HAProxy's own do).
            out.extend_from_slice(b"HTTP/1.1");
            out.extend_from_slice(&line.as_bytes()["HTTP/1.x".len()..]);
            out.extend_from_slice(b"\r\n");
            continue;
        }
        let Some((name, value)) = line.split_once(':') else {
            return Err((no, format!("`{line}` is not a field (`name: value`)")));
        };
        if !is_token_text(name) {
            return Err((no, format!("`{name}` is not a field name")));
        }
        let value = value.trim_matches([' ', '\t']);
        if value.chars().any(|c| c.is_control() && c != '\t') {
            return Err((no, "control character in a field value".into()));
        }
        match name.to_ascii_lowercase().as_str() {
            "content-length" => {
                if value.parse::<usize>().ok() != Some(body.len()) {
                    return Err((
                        no,
                        format!(
                            "Content-Length {value} but the body has {} bytes",
                            body.len()
                        ),
                    ));
                }
            }
            "transfer-encoding" => {
                return Err((no, "Transfer-Encoding: the body must be given whole".into()))
            }
            "connection" | "keep-alive" => {}
            _ => {
                out.extend_from_slice(line.as_bytes());
                out.extend_from_slice(b"\r\n");
            }
        }
    }
    Ok(ErrorPage { head: out, body })
}

/// `HTTP/1.0 NNN reason` or `HTTP/1.1 NNN reason`.
fn status_line(line: &str) -> Result<(), String> {
    let mut words = line.splitn(3, ' ');
    let version = words.next().unwrap_or_default();
    let code = words.next().unwrap_or_default();
    if version != "HTTP/1.0" && version != "HTTP/1.1" {
        return Err(format!(
            "`{line}` is not a status line (`HTTP/1.1 503 Service Unavailable`)"
        ));
    }
    match code.parse::<u16>() {
        Ok(200..=599) if code.len() == 3 => Ok(()),
        _ => Err(format!("`{code}` is not a status from 200 to 599")),
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn errorfiles_are_parsed_and_their_framing_dropped() {
        let page = parse_errorfile(
            b"HTTP/1.0 503 Service Unavailable\nCache-Control: no-cache\nConnection: close\n\
              Content-Type: text/html\nContent-Length: 5\n\nsorry",
        )
        .unwrap();
        assert_eq!(
            page.head,
            b"HTTP/1.1 503 Service Unavailable\r\nCache-Control: no-cache\r\nContent-Type: text/html\r\n"
        );
        assert_eq!(page.body, b"sorry");
        let page = parse_errorfile(b"HTTP/1.1 429 Slow\r\n\r\n").unwrap();
        assert!(page.body.is_empty());
    }

    #[test]
    fn malformed_errorfiles_name_their_line() {
        for (text, line, needle) in [
            (&b"HTP/1.0 503 x\n\n"[..], 1, "not a status line"),
            (b"HTTP/1.1 5033 x\n\n", 1, "not a status"),
            (
                b"HTTP/1.1 503 x\nContent-Type text/html\n\n",
                2,
                "not a field",
            ),
            (
                b"HTTP/1.1 503 x\nA: 1\nContent-Length: 9\n\nshort",
                3,
                "body has 5 bytes",
            ),
            (b"HTTP/1.1 503 x\nA: 1\n", 3, "no end of the head"),
            (
                b"HTTP/1.1 503 x\nTransfer-Encoding: chunked\n\n",
                2,
                "Transfer-Encoding",
            ),
        ] {
            let (l, e) = parse_errorfile(text).unwrap_err();
            assert_eq!(l, line, "{e}");
            assert!(e.contains(needle), "{e}");
        }
    }
}
