//! An RFC 9112 head scanner written from the grammar, sharing no code with tern-h1 or
//! httparse: the second, independent oracle of the differential target, and the byte classes
//! the other checks use.
//!
//! It is lenient only where tern is lenient on purpose, so that "tern accepts ⇒ the scanner
//! accepts" can be asserted:
//! - empty lines before the start line are skipped (RFC 9112 §2.2 lets a server do so; tern
//!   skips them before a status line too, which only drops bytes tern does not forward);
//! - a bare LF ends a line as CRLF does (§2.2 lets a recipient do so); a CR not followed by LF
//!   is refused anywhere;
//! - a status line may stop after the status code (`HTTP/1.1 200`, no SP, as servers send and
//!   every client accepts).
//!
//! Everything else follows the ABNF: single SP between the parts of the start line, a token
//! method, a request-target of visible ASCII, `HTTP/` DIGIT `.` DIGIT, a three-digit status,
//! field names that are tokens directly followed by `:`, field values of VCHAR, obs-text, SP
//! and HTAB, and no obs-fold.

/// `tchar` (RFC 9110 §5.6.2).
pub(crate) fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// A token: one or more `tchar`.
pub(crate) fn is_token(s: &[u8]) -> bool {
    !s.is_empty() && s.iter().all(|b| is_tchar(*b))
}

/// `field-vchar / SP / HTAB` (RFC 9110 §5.5): VCHAR, obs-text, space, tab.
pub(crate) fn is_field_byte(b: u8) -> bool {
    b == b'\t' || b == b' ' || (0x21..=0x7e).contains(&b) || b >= 0x80
}

/// `s` without leading and trailing SP and HTAB.
pub(crate) fn trim_ows(s: &[u8]) -> &[u8] {
    let start = s.iter().position(|b| !matches!(b, b' ' | b'\t'));
    let end = s.iter().rposition(|b| !matches!(b, b' ' | b'\t'));
    match (start, end) {
        (Some(a), Some(z)) => &s[a..=z],
        _ => &[],
    }
}

/// The start line of a head, as the grammar splits it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StartLine<'a> {
    Request {
        method: &'a [u8],
        target: &'a [u8],
        minor: u8,
    },
    Status {
        minor: u8,
        code: u16,
        reason: &'a [u8],
    },
}

/// A head the scanner accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Head<'a> {
    /// Bytes up to and including the empty line.
    pub len: usize,
    pub start: StartLine<'a>,
    /// Field names and values (values without surrounding whitespace).
    pub fields: Vec<(&'a [u8], &'a [u8])>,
}

/// Scans the head at the start of `buf`: `Ok(Some(head))` when complete, `Ok(None)` when more
/// bytes are needed, `Err(why)` when the bytes break the grammar.
pub(crate) fn head(buf: &[u8], request: bool) -> Result<Option<Head<'_>>, &'static str> {
    let mut lines = Lines { buf, at: 0 };
    let first = loop {
        match lines.next()? {
            None => return Ok(None),
            Some([]) => continue,
            Some(l) => break l,
        }
    };
    let start = if request {
        request_line(first)?
    } else {
        status_line(first)?
    };
    let mut fields = Vec::new();
    loop {
        let Some(line) = lines.next()? else {
            return Ok(None);
        };
        if line.is_empty() {
            return Ok(Some(Head {
                len: lines.at,
                start,
                fields,
            }));
        }
        fields.push(field_line(line)?);
    }
}

struct Lines<'a> {
    buf: &'a [u8],
    at: usize,
}

impl<'a> Lines<'a> {
    /// The next line without its ending, or `None` when it is not complete yet.
    fn next(&mut self) -> Result<Option<&'a [u8]>, &'static str> {
        let rest = &self.buf[self.at..];
        let Some(lf) = rest.iter().position(|b| *b == b'\n') else {
            // A CR that is not the last byte cannot be followed by LF any more.
            if rest.iter().rev().skip(1).any(|b| *b == b'\r') {
                return Err("CR without LF");
            }
            return Ok(None);
        };
        let line = rest[..lf].strip_suffix(b"\r").unwrap_or(&rest[..lf]);
        if line.contains(&b'\r') {
            return Err("CR without LF");
        }
        self.at += lf + 1;
        Ok(Some(line))
    }
}

/// `method SP request-target SP HTTP-version`.
fn request_line(line: &[u8]) -> Result<StartLine<'_>, &'static str> {
    let mut parts = line.split(|b| *b == b' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err("request line is not three parts separated by single spaces");
    };
    if !is_token(method) {
        return Err("method is not a token");
    }
    if target.is_empty() || !target.iter().all(|b| (0x21..=0x7e).contains(b)) {
        return Err("request-target is not visible ASCII");
    }
    Ok(StartLine::Request {
        method,
        target,
        minor: version_minor(version)?,
    })
}

/// `HTTP-version SP status-code [ SP reason-phrase ]`.
fn status_line(line: &[u8]) -> Result<StartLine<'_>, &'static str> {
    let (version, rest) = line.split_at_checked(8).ok_or("status line too short")?;
    let minor = version_minor(version)?;
    let rest = rest.strip_prefix(b" ").ok_or("no SP after the version")?;
    let (code, rest) = rest
        .split_at_checked(3)
        .ok_or("status code is not 3 digits")?;
    if !code.iter().all(u8::is_ascii_digit) {
        return Err("status code is not 3 digits");
    }
    let code = code.iter().fold(0u16, |n, b| n * 10 + u16::from(b - b'0'));
    let reason = match rest {
        [] => rest,
        [b' ', reason @ ..] => reason,
        _ => return Err("no SP after the status code"),
    };
    if !reason.iter().all(|b| is_field_byte(*b)) {
        return Err("reason phrase has control bytes");
    }
    Ok(StartLine::Status {
        minor,
        code,
        reason,
    })
}

/// `HTTP/` DIGIT `.` DIGIT; returns the minor digit (tern and httparse know only 1.x).
fn version_minor(v: &[u8]) -> Result<u8, &'static str> {
    match v {
        [b'H', b'T', b'T', b'P', b'/', b'1', b'.', minor] if minor.is_ascii_digit() => {
            Ok(minor - b'0')
        }
        _ => Err("version is not HTTP/1.x"),
    }
}

/// `field-name ":" OWS field-value OWS`; no obs-fold.
fn field_line(line: &[u8]) -> Result<(&[u8], &[u8]), &'static str> {
    if matches!(line.first(), Some(b' ' | b'\t')) {
        return Err("obs-fold");
    }
    let colon = line
        .iter()
        .position(|b| *b == b':')
        .ok_or("field line without a colon")?;
    let (name, value) = (&line[..colon], &line[colon + 1..]);
    if !is_token(name) {
        return Err("field name is not a token");
    }
    if !value.iter().all(|b| is_field_byte(*b)) {
        return Err("field value has control bytes");
    }
    Ok((name, trim_ows(value)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_request_head_is_split_by_the_grammar() {
        let raw = b"\r\nGET /a HTTP/1.1\r\nHost: x\r\nX:  1 \r\n\r\nbody";
        let h = head(raw, true).unwrap().unwrap();
        assert_eq!(h.len, raw.len() - 4);
        assert_eq!(
            h.start,
            StartLine::Request {
                method: b"GET",
                target: b"/a",
                minor: 1
            }
        );
        assert_eq!(h.fields, [(&b"Host"[..], &b"x"[..]), (b"X", b"1")]);
    }

    #[test]
    fn bare_lf_is_a_line_end_but_a_lone_cr_is_refused() {
        assert!(head(b"GET / HTTP/1.1\nHost: x\n\n", true)
            .unwrap()
            .is_some());
        assert!(head(b"GET / HTTP/1.1\rHost: x\r\n\r\n", true).is_err());
        assert!(head(b"GET / HTTP/1.1\r\nHost: x\r", true)
            .unwrap()
            .is_none());
        assert!(head(b"GET / HTTP/1.1\r\nHost: x\rY", true).is_err());
    }

    #[test]
    fn looser_forms_are_refused() {
        for raw in [
            &b"GET  / HTTP/1.1\r\n\r\n"[..],
            b"GET / HTTP/2.0\r\n\r\n",
            b"GET / HTTP/1.1\r\nX : y\r\n\r\n",
            b"GET / HTTP/1.1\r\nX: y\r\n z\r\n\r\n",
            b"GET / HTTP/1.1\r\nX: \x7f\r\n\r\n",
            b"G(T / HTTP/1.1\r\n\r\n",
        ] {
            assert!(head(raw, true).is_err(), "{raw:?}");
        }
    }

    #[test]
    fn a_status_line_may_omit_the_reason() {
        let h = head(b"HTTP/1.0 204\r\n\r\n", false).unwrap().unwrap();
        assert_eq!(
            h.start,
            StartLine::Status {
                minor: 0,
                code: 204,
                reason: b""
            }
        );
        assert!(head(b"HTTP/1.1 20 OK\r\n\r\n", false).is_err());
    }
}
