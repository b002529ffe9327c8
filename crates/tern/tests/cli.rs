//! The command line of the real `tern` binary: `--help` and `--version` of the program and the
//! `--help` of every subcommand exit 0 and say what each is for; an unknown subcommand or a
//! missing `-c FILE` exits non-zero with a usage message and starts nothing.

// Only the process helpers are used here.
#[allow(unused_imports)]
mod support;
use support::*;

use std::time::Duration;

/// `--help` and usage errors never start anything, so they return at once.
const LIMIT: Duration = Duration::from_secs(10);

#[test]
fn help_lists_every_subcommand_with_its_purpose() {
    let out = tern_finish(&["--help"], LIMIT);
    assert_eq!(out.code, Some(0), "{out:?}");
    let text = &out.stdout;
    assert!(text.contains("Usage: tern"), "{text}");
    assert!(text.contains("load balancer"), "{text}");
    for (command, purpose) in [
        ("run", "Run the load balancer"),
        ("check", "Validate a configuration file"),
        ("demo", "TLS frontend"),
        ("term", "test backend"),
    ] {
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{command} ")))
            .unwrap_or_else(|| panic!("no `{command}` line in --help:\n{text}"));
        assert!(
            line.contains(purpose),
            "`{command}` line lacks {purpose:?}: {line}"
        );
    }
    assert!(text.contains("--log-level"), "{text}");
    assert!(text.contains("--version"), "{text}");
}

#[test]
fn short_help_works_too() {
    let out = tern_finish(&["-h"], LIMIT);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(out.stdout.contains("Usage: tern"), "{out:?}");
}

#[test]
fn version_prints_the_package_version() {
    for flag in ["--version", "-V"] {
        let out = tern_finish(&[flag], LIMIT);
        assert_eq!(out.code, Some(0), "{flag}: {out:?}");
        assert_eq!(
            out.stdout.trim(),
            format!("tern {}", env!("CARGO_PKG_VERSION")),
            "{flag}"
        );
    }
}

#[test]
fn each_subcommand_help_says_what_it_does() {
    let cases: [(&str, &[&str]); 4] = [
        ("run", &["Run the load balancer", "--config <FILE>", "-c"]),
        (
            "check",
            &["Validate a configuration file", "--config <FILE>", "-c"],
        ),
        (
            "demo",
            &["three test backends", "TLS frontend", "--listen <ADDR>"],
        ),
        (
            "term",
            &["test backend", "--listen <ADDR>", "--tls-cert", "--threads"],
        ),
    ];
    for (command, wanted) in cases {
        let out = tern_finish(&[command, "--help"], LIMIT);
        assert_eq!(out.code, Some(0), "tern {command} --help: {out:?}");
        assert!(
            out.stdout.contains(&format!("Usage: tern {command}")),
            "tern {command} --help:\n{}",
            out.stdout
        );
        for w in wanted {
            assert!(
                out.stdout.contains(w),
                "tern {command} --help lacks {w:?}:\n{}",
                out.stdout
            );
        }
    }
}

#[test]
fn help_subcommand_is_the_same_as_the_flag() {
    let flag = tern_finish(&["check", "--help"], LIMIT);
    let sub = tern_finish(&["help", "check"], LIMIT);
    assert_eq!(sub.code, Some(0), "{sub:?}");
    assert_eq!(sub.stdout, flag.stdout);
}

#[test]
fn unknown_subcommand_is_a_usage_error() {
    let out = tern_finish(&["frobnicate"], LIMIT);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains("unrecognized subcommand 'frobnicate'"),
        "{out:?}"
    );
    assert!(out.stderr.contains("Usage: tern"), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
}

#[test]
fn no_subcommand_prints_usage_and_fails() {
    let out = tern_finish(&[], LIMIT);
    assert_ne!(out.code, Some(0), "{out:?}");
    assert!(out.stderr.contains("Usage: tern"), "{out:?}");
}

#[test]
fn run_and_check_without_config_are_usage_errors() {
    for command in ["run", "check"] {
        let out = tern_finish(&[command], LIMIT);
        assert_eq!(out.code, Some(2), "tern {command}: {out:?}");
        assert!(
            out.stderr.contains("--config <FILE>"),
            "tern {command}: {out:?}"
        );
        assert!(
            out.stderr.contains(&format!("Usage: tern {command}")),
            "tern {command}: {out:?}"
        );
        assert!(!out.stdout.contains("ready:"), "tern {command}: {out:?}");
    }
}

#[test]
fn config_flag_without_a_value_is_a_usage_error() {
    let out = tern_finish(&["run", "-c"], LIMIT);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(out.stderr.contains("a value is required"), "{out:?}");
}

#[test]
fn unknown_option_is_a_usage_error() {
    let out = tern_finish(&["check", "-c", "x.toml", "--colour"], LIMIT);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains("unexpected argument '--colour'"),
        "{out:?}"
    );
}

#[test]
fn term_requires_a_listen_address() {
    let out = tern_finish(&["term"], LIMIT);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(out.stderr.contains("--listen <ADDR>"), "{out:?}");
}

#[test]
fn demo_rejects_a_listen_value_that_is_not_an_address() {
    let out = tern_finish(&["demo", "--listen", "localhost"], LIMIT);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(out.stderr.contains("invalid value 'localhost'"), "{out:?}");
    assert!(!out.stdout.contains("ready:"), "{out:?}");
}

#[test]
fn missing_config_file_is_reported_by_name() {
    let dir = temp_dir("cli-missing");
    let path = dir.join("absent.toml");
    let path = path.to_str().expect("utf-8 temp path");
    for command in ["run", "check"] {
        let out = tern_finish(&[command, "-c", path], LIMIT);
        assert_ne!(out.code, Some(0), "tern {command}: {out:?}");
        assert!(out.stderr.contains(path), "tern {command}: {out:?}");
        assert!(
            out.stderr.contains("cannot read the configuration file"),
            "tern {command}: {out:?}"
        );
        assert!(!out.stdout.contains("ready:"), "tern {command}: {out:?}");
    }
}
