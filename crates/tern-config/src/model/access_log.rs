//! The access log (`[access_log]`): one line per request, where it goes and how it is written.
//!
//! The model only describes the sink; tern-proxy opens it (`AccessLog::open`) and formats the
//! lines. Absent `[access_log]`, nothing is logged and the request path pays one branch.

use std::net::SocketAddr;
use std::path::PathBuf;

/// `[access_log]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessLogSettings {
    /// Where lines are written.
    pub target: LogTarget,
    /// How each line is written.
    pub format: LogFormat,
    /// Lines that may wait for the writer thread; beyond it lines are dropped and counted.
    pub buffer: usize,
    /// Frontends whose requests are logged, by name; `None`: every frontend.
    pub frontends: Option<Vec<String>>,
    /// Framing of syslog targets (`udp://`, `unix:`); ignored by the others.
    pub syslog: SyslogSettings,
}

impl AccessLogSettings {
    /// Whether requests of the frontend named `name` are logged.
    pub fn logs_frontend(&self, name: &str) -> bool {
        self.frontends
            .as_ref()
            .is_none_or(|list| list.iter().any(|f| f == name))
    }
}

/// Where access log lines go (`target`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogTarget {
    /// The process's standard output (`"stdout"`).
    Stdout,
    /// The process's standard error (`"stderr"`).
    Stderr,
    /// A file, opened for appending (absolute path).
    File(PathBuf),
    /// A syslog server over UDP (`"udp://host:port"`), one datagram per line.
    Udp(SocketAddr),
    /// A local syslog socket (`"unix:/dev/log"`), one datagram per line.
    Unix(PathBuf),
}

impl LogTarget {
    /// Whether lines are sent as syslog messages.
    pub fn is_syslog(&self) -> bool {
        matches!(self, Self::Udp(_) | Self::Unix(_))
    }
}

/// How a line is written (`format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// HAProxy-like fields separated by spaces (`"text"`).
    Text,
    /// One JSON object per line (`"json"`).
    Json,
}

/// `syslog = { framing, facility, tag }`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyslogSettings {
    pub framing: SyslogFraming,
    /// Facility number (0 to 23; `local0` is 16).
    pub facility: u8,
    /// Application name (RFC 3164 TAG, RFC 5424 APP-NAME).
    pub tag: String,
}

impl Default for SyslogSettings {
    fn default() -> Self {
        Self {
            framing: SyslogFraming::Rfc3164,
            facility: 16,
            tag: "tern".to_owned(),
        }
    }
}

/// The syslog message header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyslogFraming {
    /// BSD syslog: `<PRI>Mmm dd hh:mm:ss TAG[PID]: MSG` (`"rfc3164"`).
    Rfc3164,
    /// `<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID - - MSG` (`"rfc5424"`).
    Rfc5424,
}
