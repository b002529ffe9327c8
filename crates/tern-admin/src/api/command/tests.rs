//! The command parser: every command, its errors, and properties over arbitrary input.

#![allow(clippy::unwrap_used)]

use proptest::prelude::*;

use super::*;

fn ok(line: &str) -> Command {
    match parse(line) {
        Ok(request) => {
            assert_eq!(request.format, Format::Text, "{line}");
            request.command
        }
        Err(e) => panic!("`{line}` should parse, got: {e}"),
    }
}

#[track_caller]
fn err(line: &str, needle: &str) {
    match parse(line) {
        Ok(request) => panic!("`{line}` should fail, got {request:?}"),
        Err(ParseError(message)) => {
            assert!(
                message.contains(needle),
                "`{line}`: {message:?} lacks {needle:?}"
            )
        }
    }
}

fn server(backend: &str, server: &str) -> ServerRef {
    ServerRef {
        backend: backend.to_owned(),
        server: server.to_owned(),
    }
}

#[test]
fn show_commands() {
    assert_eq!(ok("show info"), Command::ShowInfo);
    assert_eq!(ok("  SHOW   Stat  "), Command::ShowStat);
    assert_eq!(ok("show servers"), Command::ShowServers { backend: None });
    assert_eq!(
        ok("show servers app"),
        Command::ShowServers {
            backend: Some("app".into())
        }
    );
    assert_eq!(ok("show tls"), Command::ShowTls);
    assert_eq!(ok("show profiling"), Command::ShowProfiling);
    assert_eq!(ok("help"), Command::Help);
}

#[test]
fn admin_states() {
    let s1 = server("app", "s1");
    for (line, state) in [
        ("enable server app/s1", AdminState::Ready),
        ("drain server app/s1", AdminState::Drain),
        ("disable server app/s1", AdminState::Maint),
        ("set server app/s1 state maint", AdminState::Maint),
        ("set server app/s1 state READY", AdminState::Ready),
    ] {
        assert_eq!(
            ok(line),
            Command::SetAdmin {
                server: s1.clone(),
                state
            },
            "{line}"
        );
    }
}

#[test]
fn weights() {
    assert_eq!(
        ok("set weight app/s1 0"),
        Command::SetWeight {
            server: server("app", "s1"),
            weight: 0
        }
    );
    assert_eq!(
        ok("set server web.v2/s-1_a weight 256"),
        Command::SetWeight {
            server: server("web.v2", "s-1_a"),
            weight: 256
        }
    );
    err(
        "set weight app/s1 257",
        "weight 257 is out of range: expected 0 to 256",
    );
    err("set weight app/s1 -1", "is not a number");
    err("set weight app/s1 1.5", "is not a number");
    err("set weight app/s1 99999999999999999999", "out of range");
    err("set weight app/s1", "expected BACKEND/SERVER and WEIGHT");
    err("set weight app/s1 5 6", "unexpected argument `6`");
    err("set weight app 5", "`app` is not BACKEND/SERVER");
    err("set weight app/ 5", "missing server name");
    err("set weight /s1 5", "missing backend name");
    err(
        "set weight app/s 1 5",
        "usage: set weight BACKEND/SERVER WEIGHT",
    );
}

#[test]
fn addresses() {
    assert_eq!(
        ok("set server app/s1 addr 10.0.0.5:8080"),
        Command::SetAddr {
            server: server("app", "s1"),
            addr: "10.0.0.5:8080".parse().unwrap()
        }
    );
    assert_eq!(
        ok("set server app/s1 addr [::1]:80"),
        Command::SetAddr {
            server: server("app", "s1"),
            addr: "[::1]:80".parse().unwrap()
        }
    );
    err("set server app/s1 addr localhost:80", "no host names");
    err("set server app/s1 addr 10.0.0.5", "is not an address");
    err("set server app/s1 addr 10.0.0.5:99999", "is not an address");
    err("set server app/s1 port 80", "unknown field `port`");
    err(
        "set server app/s1 state up",
        "expected ready, drain or maint",
    );
    err("set server app/s1 addr", "expected BACKEND/SERVER, a field");
}

#[test]
fn add_and_del() {
    assert_eq!(
        ok("add server app/s9 127.0.0.1:9000"),
        Command::AddServer {
            backend: "app".into(),
            spec: ServerSpec {
                name: "s9".into(),
                address: "127.0.0.1:9000".parse().unwrap(),
                weight: None,
                maxconn: None,
                check: false,
            }
        }
    );
    assert_eq!(
        ok("add server app/s9 127.0.0.1:9000 check maxconn 10 weight 3"),
        Command::AddServer {
            backend: "app".into(),
            spec: ServerSpec {
                name: "s9".into(),
                address: "127.0.0.1:9000".parse().unwrap(),
                weight: Some(3),
                maxconn: Some(10),
                check: true,
            }
        }
    );
    err("add server app/s9", "expected BACKEND/SERVER and IP:PORT");
    err("add server app/s9 1.2.3.4:80 weight", "needs a number");
    err("add server app/s9 1.2.3.4:80 weight 300", "out of range");
    err(
        "add server app/s9 1.2.3.4:80 maxconn 0",
        "maxconn 0 is out of range",
    );
    err("add server app/s9 1.2.3.4:80 check check", "given twice");
    err(
        "add server app/s9 1.2.3.4:80 backup",
        "unknown option `backup`",
    );
    err("add server app/s!9 1.2.3.4:80", "invalid character '!'");
    assert_eq!(
        ok("del server app/s9"),
        Command::DelServer {
            server: server("app", "s9")
        }
    );
    err("del server", "missing BACKEND/SERVER");
}

#[test]
fn process_commands() {
    assert_eq!(ok("reload"), Command::Reload);
    assert_eq!(ok("upgrade"), Command::Upgrade);
    assert_eq!(ok("set profiling on"), Command::SetProfiling { on: true });
    assert_eq!(ok("set profiling OFF"), Command::SetProfiling { on: false });
    err("set profiling maybe", "expected on or off");
    err("reload now", "unexpected argument `now`");
}

#[test]
fn json_prefix() {
    let request = parse("json show stat").unwrap();
    assert_eq!(request.format, Format::Json);
    assert_eq!(request.command, Command::ShowStat);
    assert_eq!(parse("JSON help").unwrap().format, Format::Json);
    err("json", "empty command");
}

#[test]
fn unknown_commands_list_what_exists() {
    err("", "empty command");
    err("   ", "empty command");
    err(
        "frobnicate",
        "unknown command `frobnicate`: expected one of help, show, enable",
    );
    err(
        "show",
        "incomplete command `show`: expected one of:\n  show info\n  show stat",
    );
    err("show sessions", "unknown command `show sessions`");
    err("set", "set weight BACKEND/SERVER WEIGHT");
    // Control characters are escaped in answers.
    err("\u{1b}[2J", "\\u{1b}");
}

#[test]
fn state_changes_are_known() {
    for line in [
        "help",
        "show info",
        "show stat",
        "show servers",
        "show tls",
        "show profiling",
    ] {
        assert!(!ok(line).changes_state(), "{line}");
    }
    for line in [
        "enable server a/b",
        "drain server a/b",
        "disable server a/b",
        "set weight a/b 1",
        "set server a/b addr 1.2.3.4:5",
        "add server a/b 1.2.3.4:5",
        "del server a/b",
        "reload",
        "upgrade",
        "set profiling on",
    ] {
        assert!(ok(line).changes_state(), "{line}");
    }
}

#[test]
fn help_lists_every_command() {
    let help = help_text();
    for syntax in SYNTAX {
        assert!(help.contains(&syntax.usage()), "{}", syntax.usage());
    }
}

fn name() -> impl Strategy<Value = String> {
    "[A-Za-z0-9_.-]{1,12}"
}

fn server_ref() -> impl Strategy<Value = ServerRef> {
    (name(), name()).prop_map(|(backend, server)| ServerRef { backend, server })
}

/// Addresses without IPv6 flow or scope ids, which an `IP:PORT` line does not carry.
fn addr() -> impl Strategy<Value = SocketAddr> {
    (
        prop_oneof![
            any::<std::net::Ipv4Addr>().prop_map(std::net::IpAddr::V4),
            any::<std::net::Ipv6Addr>().prop_map(std::net::IpAddr::V6),
        ],
        any::<u16>(),
    )
        .prop_map(|(ip, port)| SocketAddr::new(ip, port))
}

fn admin() -> impl Strategy<Value = AdminState> {
    prop_oneof![
        Just(AdminState::Ready),
        Just(AdminState::Drain),
        Just(AdminState::Maint)
    ]
}

fn command() -> impl Strategy<Value = Command> {
    prop_oneof![
        Just(Command::Help),
        Just(Command::ShowInfo),
        Just(Command::ShowStat),
        proptest::option::of(name()).prop_map(|backend| Command::ShowServers { backend }),
        Just(Command::ShowTls),
        Just(Command::ShowProfiling),
        (server_ref(), admin()).prop_map(|(server, state)| Command::SetAdmin { server, state }),
        (server_ref(), 0..=MAX_WEIGHT)
            .prop_map(|(server, weight)| Command::SetWeight { server, weight }),
        (server_ref(), addr()).prop_map(|(server, addr)| Command::SetAddr { server, addr }),
        (
            server_ref(),
            addr(),
            proptest::option::of(0..=MAX_WEIGHT),
            proptest::option::of(1..=MAX_MAXCONN),
            any::<bool>()
        )
            .prop_map(|(s, address, weight, maxconn, check)| Command::AddServer {
                backend: s.backend,
                spec: ServerSpec {
                    name: s.server,
                    address,
                    weight,
                    maxconn,
                    check
                },
            }),
        server_ref().prop_map(|server| Command::DelServer { server }),
        any::<bool>().prop_map(|on| Command::SetProfiling { on }),
        Just(Command::Reload),
        Just(Command::Upgrade),
    ]
}

proptest! {
    #[test]
    fn never_panics_on_arbitrary_text(line in "\\PC{0,200}") {
        let _ = parse(&line);
    }

    #[test]
    fn never_panics_on_command_like_text(
        words in proptest::collection::vec(
            prop_oneof![
                Just("show".to_owned()), Just("set".to_owned()), Just("server".to_owned()),
                Just("weight".to_owned()), Just("add".to_owned()), Just("json".to_owned()),
                "[a-z]{1,3}/[a-z0-9]{0,3}", "[0-9:.\\[\\]]{0,12}", "\\PC{0,6}",
            ],
            0..8,
        )
    ) {
        let _ = parse(&words.join(" "));
    }

    #[test]
    fn canonical_lines_parse_back(command in command()) {
        let line = command.to_string();
        let request = parse(&line).map_err(|e| TestCaseError::fail(format!("{line}: {e}")))?;
        prop_assert_eq!(request.command, command);
    }

    #[test]
    fn errors_are_short_and_clean(line in "\\PC{0,300}") {
        if let Err(ParseError(message)) = parse(&line) {
            prop_assert!(!message.is_empty());
            prop_assert!(!message.contains('\x1b'), "escape character in {:?}", message);
            // The echoed input is clipped; the rest is fixed text (the longest: the list of
            // commands sharing `set`).
            prop_assert!(message.len() < 1024, "{}", message.len());
        }
    }
}

#[test]
fn table_commands() {
    let show = parse("show table per_ip key 10.0.0.1").unwrap().command;
    assert_eq!(
        show,
        Command::ShowTable {
            name: Some("per_ip".into()),
            key: Some("10.0.0.1".into())
        }
    );
    assert!(!show.changes_state());
    assert_eq!(show.to_string(), "show table per_ip key 10.0.0.1");
    assert_eq!(
        parse("show table").unwrap().command,
        Command::ShowTable {
            name: None,
            key: None
        }
    );
    let clear = parse("clear table per_ip").unwrap().command;
    assert!(clear.changes_state());
    assert_eq!(parse(&clear.to_string()).unwrap().command, clear);
    err("clear table", "missing TABLE");
    err("show table t color red", "expected `key KEY`");
    err("show table t key", "`key` needs a KEY");
}
