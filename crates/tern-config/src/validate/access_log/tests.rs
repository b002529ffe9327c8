//! `[access_log]`: targets, format, buffer, frontends and syslog framing.

#![allow(clippy::unwrap_used)]

use std::net::SocketAddr;
use std::path::PathBuf;

use crate::model::{AccessLogSettings, LogFormat, LogTarget, SyslogFraming, SyslogSettings};
use crate::test_support::{assert_error, parse_ok, MINIMAL};

/// `MINIMAL` with an `[access_log]` table holding `lines`; its first key is on line 11.
fn with_log(lines: &str) -> String {
    format!("{MINIMAL}\n[access_log]\n{lines}\n")
}

fn log(lines: &str) -> AccessLogSettings {
    parse_ok(&with_log(lines))
        .access_log
        .expect("an [access_log] table")
}

#[test]
fn absent_means_no_log() {
    assert_eq!(parse_ok(MINIMAL).access_log, None);
}

#[test]
fn empty_table_logs_text_to_stdout() {
    let settings = log("");
    assert_eq!(
        settings,
        AccessLogSettings {
            target: LogTarget::Stdout,
            format: LogFormat::Text,
            buffer: 1024,
            frontends: None,
            syslog: SyslogSettings::default(),
        }
    );
    assert!(settings.logs_frontend("web"));
}

#[test]
fn targets() {
    assert_eq!(log("target = \"stderr\"").target, LogTarget::Stderr);
    assert_eq!(
        log("target = \"/var/log/tern/access.log\"").target,
        LogTarget::File(PathBuf::from("/var/log/tern/access.log"))
    );
    // Relative to the configuration file's directory (test_support's FILE is in /etc/tern).
    assert_eq!(
        log("target = \"logs/access.log\"").target,
        LogTarget::File(PathBuf::from("/etc/tern/logs/access.log"))
    );
    assert_eq!(
        log("target = \"unix:/dev/log\"").target,
        LogTarget::Unix(PathBuf::from("/dev/log"))
    );
    let udp = |text: &str| match log(&format!("target = \"{text}\"")).target {
        LogTarget::Udp(addr) => addr,
        other => panic!("expected a UDP target, got {other:?}"),
    };
    assert_eq!(
        udp("udp://127.0.0.1:5514"),
        "127.0.0.1:5514".parse::<SocketAddr>().unwrap()
    );
    assert_eq!(udp("udp://127.0.0.1").port(), 514);
    assert_eq!(udp("udp://[::1]:515"), "[::1]:515".parse().unwrap());
    assert_eq!(udp("udp://localhost:516").port(), 516);
}

#[test]
fn bad_targets() {
    assert_error(
        &with_log("target = \"tcp://127.0.0.1:514\""),
        11,
        "access_log.target",
        "unsupported target scheme `tcp://`",
    );
    assert_error(
        &with_log("target = \"\""),
        11,
        "access_log.target",
        "must not be empty",
    );
    assert_error(
        &with_log("target = \"unix:\""),
        11,
        "access_log.target",
        "needs a socket path",
    );
    assert_error(
        &with_log("target = \"udp://127.0.0.1:0\""),
        11,
        "access_log.target",
        "port 0",
    );
    assert_error(
        &with_log("target = \"udp://127.0.0.1:99999\""),
        11,
        "access_log.target",
        "invalid port `99999`",
    );
}

#[test]
fn format_buffer_and_frontends() {
    let settings = log("format = \"json\"\nbuffer = 64\nfrontends = [\"web\"]");
    assert_eq!(settings.format, LogFormat::Json);
    assert_eq!(settings.buffer, 64);
    assert_eq!(settings.frontends, Some(vec!["web".to_owned()]));
    assert!(settings.logs_frontend("web"));
    assert!(!settings.logs_frontend("admin"));
    assert_error(
        &with_log("format = \"clf\""),
        11,
        "access_log.format",
        "unknown format `clf`",
    );
    assert_error(
        &with_log("buffer = 0"),
        11,
        "access_log.buffer",
        "between 1 and 1000000",
    );
    assert_error(
        &with_log("frontends = [\"web\", \"api\"]"),
        11,
        "access_log.frontends[1]",
        "unknown frontend `api`; frontends are: web",
    );
    assert_error(
        &with_log("frontends = []"),
        11,
        "access_log.frontends",
        "lists no frontend",
    );
}

#[test]
fn syslog_framing() {
    let settings = log(
        "target = \"udp://127.0.0.1:514\"\nsyslog = { framing = \"rfc5424\", facility = \"local3\", tag = \"edge-lb\" }",
    );
    assert_eq!(
        settings.syslog,
        SyslogSettings {
            framing: SyslogFraming::Rfc5424,
            facility: 19,
            tag: "edge-lb".to_owned(),
        }
    );
    assert_eq!(
        log("target = \"unix:/dev/log\"\nsyslog = { facility = \"daemon\" }").syslog,
        SyslogSettings {
            facility: 3,
            ..SyslogSettings::default()
        }
    );
}

#[test]
fn bad_syslog() {
    assert_error(
        &with_log("target = \"stdout\"\nsyslog = { facility = \"local0\" }"),
        12,
        "access_log.syslog",
        "applies only to syslog targets",
    );
    let udp = "target = \"udp://127.0.0.1:514\"\n";
    assert_error(
        &with_log(&format!("{udp}syslog = {{ framing = \"rfc3339\" }}")),
        12,
        "access_log.syslog.framing",
        "unknown framing `rfc3339`",
    );
    assert_error(
        &with_log(&format!("{udp}syslog = {{ facility = \"local8\" }}")),
        12,
        "access_log.syslog.facility",
        "unknown facility `local8`",
    );
    assert_error(
        &with_log(&format!("{udp}syslog = {{ tag = \"has space\" }}")),
        12,
        "access_log.syslog.tag",
        "invalid tag",
    );
}

#[test]
fn unknown_key_is_named() {
    assert_error(
        &with_log("targt = \"stdout\""),
        11,
        "access_log.targt",
        "unknown field `targt`",
    );
}
