//! The client side of the control API, for `tern ctl`: send one command line, read its answer.
//!
//! Blocking I/O with timeouts and no runtime: a client sends one line and exits. Over the Unix
//! socket the answer ends at the first empty line (`api/wire.rs`); over HTTP (`--http`), the
//! command goes to `POST /v1/command` in a plain HTTP/1.1 request and the answer is the JSON
//! envelope.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::api::command::Format;
use crate::api::wire::{Answer, MAX_LINE};

/// Largest HTTP answer read (a `show stat` of a big configuration stays far below).
const MAX_HTTP_ANSWER: u64 = 64 * 1024 * 1024;

/// Why no answer came back.
#[derive(Debug, thiserror::Error)]
pub enum CtlError {
    /// Nothing to talk to: no socket, nobody listening, no permission.
    #[error("cannot reach the control socket `{}`: {source}{}", path.display(), hint(source))]
    Unreachable { path: PathBuf, source: io::Error },
    #[error("cannot reach the control API at {target}: {source}")]
    HttpUnreachable { target: String, source: io::Error },
    /// The command cannot be sent as one line.
    #[error("{0}")]
    BadCommand(String),
    /// The exchange broke off.
    #[error("no answer from {target}: {source}")]
    NoAnswer { target: String, source: io::Error },
    #[error("unexpected answer from {target}: {message}")]
    BadAnswer { target: String, message: String },
}

fn hint(e: &io::Error) -> &'static str {
    match e.kind() {
        io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused => {
            " (is tern running, with `control.socket` set to this path? use -s or TERN_SOCKET)"
        }
        io::ErrorKind::PermissionDenied => {
            " (the socket's mode, `control.socket_mode`, decides who may connect)"
        }
        _ => "",
    }
}

/// `words` as one command line, checked to be one line within the size limit.
pub fn command_line(words: &[String], json: bool) -> Result<(Format, String), CtlError> {
    let mut line = words.join(" ");
    let prefixed = words
        .first()
        .is_some_and(|w| w.eq_ignore_ascii_case("json"));
    let format = if json || prefixed {
        Format::Json
    } else {
        Format::Text
    };
    if json && !prefixed {
        line = format!("json {line}");
    }
    if line.contains(['\n', '\r']) {
        return Err(CtlError::BadCommand(
            "a command is one line: remove the line breaks from its words".into(),
        ));
    }
    if line.len() + 1 > MAX_LINE {
        return Err(CtlError::BadCommand(format!(
            "the command is longer than {MAX_LINE} bytes"
        )));
    }
    Ok((format, line))
}

/// Sends `line` on the Unix socket at `path` and reads its answer.
pub fn send_unix(
    path: &Path,
    format: Format,
    line: &str,
    timeout: Duration,
) -> Result<Answer, CtlError> {
    let target = path.display().to_string();
    let no_answer = |source| CtlError::NoAnswer {
        target: target.clone(),
        source,
    };
    let stream = UnixStream::connect(path).map_err(|source| CtlError::Unreachable {
        path: path.to_path_buf(),
        source,
    })?;
    stream.set_read_timeout(Some(timeout)).map_err(no_answer)?;
    stream.set_write_timeout(Some(timeout)).map_err(no_answer)?;
    (&stream)
        .write_all(format!("{line}\n").as_bytes())
        .map_err(no_answer)?;
    let mut reader = BufReader::new(&stream);
    let mut lines = Vec::new();
    loop {
        let mut buf = String::new();
        let n = reader.read_line(&mut buf).map_err(no_answer)?;
        if n == 0 {
            if lines.is_empty() {
                return Err(no_answer(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the connection closed before an answer",
                )));
            }
            break;
        }
        let text = buf.trim_end_matches(['\n', '\r']);
        if text.is_empty() {
            break;
        }
        lines.push(text.to_owned());
    }
    Ok(Answer::from_lines(format, &lines))
}

/// Sends `line` to `POST /v1/command` at `url` (`http://HOST:PORT` or `HOST:PORT`).
pub fn send_http(
    url: &str,
    token: Option<&str>,
    format: Format,
    line: &str,
    timeout: Duration,
) -> Result<Answer, CtlError> {
    let authority = url
        .strip_prefix("http://")
        .unwrap_or(url)
        .split('/')
        .next()
        .unwrap_or("");
    if url.starts_with("https://") || authority.is_empty() {
        return Err(CtlError::BadCommand(format!(
            "`{url}` is not an http://HOST:PORT address (the control listener speaks plain HTTP)"
        )));
    }
    let target = authority.to_owned();
    let unreachable = |source| CtlError::HttpUnreachable {
        target: target.clone(),
        source,
    };
    let addr = authority
        .to_socket_addrs()
        .map_err(unreachable)?
        .next()
        .ok_or_else(|| unreachable(io::Error::new(io::ErrorKind::NotFound, "no address")))?;
    let mut stream = TcpStream::connect_timeout(&addr, timeout).map_err(unreachable)?;
    let no_answer = |source| CtlError::NoAnswer {
        target: target.clone(),
        source,
    };
    stream.set_read_timeout(Some(timeout)).map_err(no_answer)?;
    stream.set_write_timeout(Some(timeout)).map_err(no_answer)?;
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    let request = format!(
        "POST /v1/command HTTP/1.1\r\nHost: {authority}\r\nContent-Type: text/plain\r\n\
         Content-Length: {}\r\nConnection: close\r\n{auth}\r\n{line}",
        line.len()
    );
    stream.write_all(request.as_bytes()).map_err(no_answer)?;
    let mut raw = Vec::new();
    stream
        .take(MAX_HTTP_ANSWER)
        .read_to_end(&mut raw)
        .map_err(no_answer)?;
    http_answer(&raw, format).map_err(|message| CtlError::BadAnswer { target, message })
}

/// Reads the envelope out of a raw HTTP response.
fn http_answer(raw: &[u8], format: Format) -> Result<Answer, String> {
    let text = String::from_utf8_lossy(raw);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| "not an HTTP response".to_owned())?;
    let status = head.lines().next().unwrap_or("").to_owned();
    let envelope: Value =
        serde_json::from_str(body.trim()).map_err(|_| format!("`{status}` without a JSON body"))?;
    let ok = envelope.get("ok").and_then(Value::as_bool).unwrap_or(false);
    let body = match format {
        Format::Json => envelope.to_string(),
        Format::Text if ok => match envelope.get("output") {
            Some(Value::String(text)) => text.clone(),
            Some(other) => serde_json::to_string_pretty(other).unwrap_or_default(),
            None => String::new(),
        },
        Format::Text => {
            let error = envelope.get("error").and_then(Value::as_str).unwrap_or("");
            format!("error: {error}")
        }
    };
    Ok(Answer { ok, body })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split(' ').map(str::to_owned).collect()
    }

    #[test]
    fn command_lines() {
        assert_eq!(
            command_line(&words("show info"), false).unwrap(),
            (Format::Text, "show info".to_owned())
        );
        assert_eq!(
            command_line(&words("show info"), true).unwrap(),
            (Format::Json, "json show info".to_owned())
        );
        assert_eq!(
            command_line(&words("json show info"), true).unwrap(),
            (Format::Json, "json show info".to_owned())
        );
        assert!(command_line(&["show\ninfo".to_owned()], false).is_err());
        assert!(command_line(&["x".repeat(MAX_LINE)], false).is_err());
    }

    #[test]
    fn http_answers() {
        let raw = b"HTTP/1.1 403 Forbidden\r\ncontent-type: application/json\r\n\r\n\
                    {\"ok\":false,\"output\":null,\"error\":\"no token\"}\n";
        let answer = http_answer(raw, Format::Text).unwrap();
        assert_eq!(
            answer,
            Answer {
                ok: false,
                body: "error: no token".into()
            }
        );
        let raw = b"HTTP/1.1 200 OK\r\n\r\n{\"ok\":true,\"output\":\"done\",\"error\":null}";
        assert_eq!(http_answer(raw, Format::Text).unwrap().body, "done");
        assert!(http_answer(raw, Format::Json)
            .unwrap()
            .body
            .starts_with('{'));
        assert!(http_answer(b"garbage", Format::Text).is_err());
    }

    #[test]
    fn unreachable_socket_names_the_path() {
        let path = Path::new("/nonexistent-tern/ctl.sock");
        let err = send_unix(path, Format::Text, "show info", Duration::from_secs(1)).unwrap_err();
        let message = err.to_string();
        assert!(matches!(err, CtlError::Unreachable { .. }));
        assert!(message.contains("/nonexistent-tern/ctl.sock"), "{message}");
        assert!(message.contains("control.socket"), "{message}");
    }
}
