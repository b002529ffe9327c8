//! `[access_log]`: the target (stdout, stderr, a file, syslog over UDP or a Unix socket), the
//! line format, the buffer and the frontends that log.
//!
//! The target is one string, the way operators write it elsewhere (`udp://10.0.0.1:514`,
//! `unix:/dev/log`); anything that is neither a keyword nor a `scheme:` is a file path, resolved
//! against the configuration file's directory like certificate paths. A UDP host is resolved
//! once, here, like server addresses. Whether the file or socket can be opened is not checked
//! here but at start-up, where it is opened (a configuration is often checked on another
//! machine). The `syslog` table only makes sense for syslog targets, so it is refused elsewhere
//! rather than silently ignored.

#[cfg(test)]
mod tests;

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;

use super::{is_name_char, Checker};
use crate::locate::KeyPath;
use crate::model::{AccessLogSettings, LogFormat, LogTarget, SyslogFraming, SyslogSettings};
use crate::raw::{RawAccessLog, RawSyslog};

/// Lines waiting for the writer thread by default (each slot takes about 1.7 KiB).
const DEFAULT_BUFFER: i64 = 1024;
/// The port of `udp://host` without one.
const SYSLOG_PORT: u16 = 514;
/// Longest syslog tag (RFC 3164 allows 32 characters).
const MAX_TAG: usize = 32;

/// Facility names, as HAProxy (and syslog(3)) spell them, and their numbers.
const FACILITIES: [(&str, u8); 25] = [
    ("kern", 0),
    ("user", 1),
    ("mail", 2),
    ("daemon", 3),
    ("auth", 4),
    ("syslog", 5),
    ("lpr", 6),
    ("news", 7),
    ("uucp", 8),
    ("cron", 9),
    ("auth2", 10),
    ("authpriv", 10),
    ("ftp", 11),
    ("ntp", 12),
    ("audit", 13),
    ("alert", 14),
    ("cron2", 15),
    ("local0", 16),
    ("local1", 17),
    ("local2", 18),
    ("local3", 19),
    ("local4", 20),
    ("local5", 21),
    ("local6", 22),
    ("local7", 23),
];

impl Checker<'_> {
    /// `[access_log]`; `frontends` are the names of the `[[frontend]]` tables.
    pub(super) fn access_log(
        &mut self,
        raw: &RawAccessLog,
        frontends: &[Option<&str>],
        path: &KeyPath,
    ) -> AccessLogSettings {
        let target = self.log_target(raw.target.as_deref(), &path.key("target"));
        let format = match raw.format.as_deref() {
            None | Some("text") => LogFormat::Text,
            Some("json") => LogFormat::Json,
            Some(other) => {
                self.issue(
                    &path.key("format"),
                    format!("unknown format `{other}`: expected \"text\" or \"json\""),
                );
                LogFormat::Text
            }
        };
        let buffer = self.int_in(
            &path.key("buffer"),
            raw.buffer,
            1..=1_000_000,
            DEFAULT_BUFFER,
        ) as usize;
        let frontends = raw
            .frontends
            .as_ref()
            .map(|list| self.logged_frontends(list, frontends, &path.key("frontends")));
        let syslog = match &raw.syslog {
            None => SyslogSettings::default(),
            Some(s) => {
                if !target.is_syslog() {
                    self.issue(
                        &path.key("syslog"),
                        "applies only to syslog targets (\"udp://host:port\" or \"unix:/path\")",
                    );
                }
                self.syslog(s, &path.key("syslog"))
            }
        };
        AccessLogSettings {
            target,
            format,
            buffer,
            frontends,
            syslog,
        }
    }

    fn log_target(&mut self, raw: Option<&str>, path: &KeyPath) -> LogTarget {
        let parsed = match raw {
            None | Some("stdout") => Ok(LogTarget::Stdout),
            Some("stderr") => Ok(LogTarget::Stderr),
            Some(text) => self.log_destination(text),
        };
        parsed.unwrap_or_else(|message| {
            self.issue(path, message);
            LogTarget::Stdout
        })
    }

    /// A target other than the two keywords: `udp://`, `unix:` or a file path.
    fn log_destination(&self, text: &str) -> Result<LogTarget, String> {
        if let Some(rest) = text.strip_prefix("udp://") {
            return resolve_udp(rest).map(LogTarget::Udp);
        }
        if let Some(rest) = text.strip_prefix("unix:") {
            if rest.is_empty() {
                return Err("`unix:` needs a socket path, e.g. \"unix:/dev/log\"".to_owned());
            }
            return Ok(LogTarget::Unix(self.log_path(rest)));
        }
        if let Some((scheme, _)) = text.split_once("://") {
            return Err(format!(
                "unsupported target scheme `{scheme}://`: use \"stdout\", \"stderr\", a file \
                 path, \"udp://host:port\" or \"unix:/path\""
            ));
        }
        if text.is_empty() {
            return Err(
                "must not be empty: use \"stdout\", \"stderr\", a file path, \
                        \"udp://host:port\" or \"unix:/path\""
                    .to_owned(),
            );
        }
        Ok(LogTarget::File(self.log_path(text)))
    }

    /// A path made absolute against the configuration file's directory.
    fn log_path(&self, raw: &str) -> PathBuf {
        let joined = self.base_dir.join(raw);
        std::path::absolute(&joined).unwrap_or(joined)
    }

    fn logged_frontends(
        &mut self,
        list: &[String],
        known: &[Option<&str>],
        path: &KeyPath,
    ) -> Vec<String> {
        if list.is_empty() {
            self.issue(
                path,
                "lists no frontend: name at least one, or leave `frontends` out to log them all",
            );
        }
        for (i, name) in list.iter().enumerate() {
            if !known.contains(&Some(name.as_str())) {
                let names: Vec<&str> = known.iter().flatten().copied().collect();
                self.issue(
                    &path.index(i),
                    format!(
                        "unknown frontend `{name}`; frontends are: {}",
                        names.join(", ")
                    ),
                );
            }
        }
        list.to_vec()
    }

    fn syslog(&mut self, raw: &RawSyslog, path: &KeyPath) -> SyslogSettings {
        let mut settings = SyslogSettings::default();
        match raw.framing.as_deref() {
            None | Some("rfc3164") => {}
            Some("rfc5424") => settings.framing = SyslogFraming::Rfc5424,
            Some(other) => self.issue(
                &path.key("framing"),
                format!("unknown framing `{other}`: expected \"rfc3164\" or \"rfc5424\""),
            ),
        }
        if let Some(name) = raw.facility.as_deref() {
            match FACILITIES.iter().find(|(n, _)| *n == name) {
                Some(&(_, number)) => settings.facility = number,
                None => self.issue(
                    &path.key("facility"),
                    format!(
                        "unknown facility `{name}`: expected one of kern, user, mail, daemon, \
                         auth, syslog, lpr, news, uucp, cron, auth2, ftp, ntp, audit, alert, \
                         cron2, local0 to local7"
                    ),
                ),
            }
        }
        if let Some(tag) = &raw.tag {
            if tag.is_empty() || tag.len() > MAX_TAG || !tag.chars().all(is_name_char) {
                self.issue(
                    &path.key("tag"),
                    format!(
                        "invalid tag `{tag}`: use 1 to {MAX_TAG} letters, digits, `_`, `.` or `-`"
                    ),
                );
            } else {
                settings.tag = tag.clone();
            }
        }
        settings
    }
}

/// `host:port` (or `host`, port 514) of a UDP syslog server, resolved once.
fn resolve_udp(text: &str) -> Result<SocketAddr, String> {
    if let Ok(address) = text.parse::<SocketAddr>() {
        return nonzero_port(address, text);
    }
    let (host, port) = match text.rsplit_once(':') {
        // An IPv6 address without brackets has colons but no port.
        Some((host, port)) if !host.contains(':') || host.ends_with(']') => {
            let port = port
                .parse::<u16>()
                .map_err(|_| format!("invalid port `{port}` in `udp://{text}`"))?;
            (host, port)
        }
        _ => (text, SYSLOG_PORT),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() {
        return Err(format!(
            "`udp://{text}` needs a host, e.g. \"udp://127.0.0.1:514\""
        ));
    }
    let address = (host, port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve `{host}`: {e}"))?
        .next()
        .ok_or_else(|| format!("`{host}` resolves to no address"))?;
    nonzero_port(address, text)
}

fn nonzero_port(address: SocketAddr, text: &str) -> Result<SocketAddr, String> {
    if address.port() == 0 {
        return Err(format!(
            "`udp://{text}` has port 0; give the syslog server's port (usually 514)"
        ));
    }
    Ok(address)
}
