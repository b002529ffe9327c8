//! The command language of the control API: one line of text → a typed [`Request`].
//!
//! A line is words separated by spaces: keywords (case-insensitive), then arguments. Servers are
//! named `BACKEND/SERVER`; names use tern's name characters (`[A-Za-z0-9_.-]`), so the `/` can
//! never be part of a name. Addresses are `IP:PORT` (`[::1]:8080` for IPv6): the control path
//! never resolves host names.
//!
//! An optional leading `json` word asks for a JSON answer instead of text (`json show stat`);
//! it applies to every command, so scripts need to learn one rule.
//!
//! The grammar is a table ([`SYNTAX`]): `help` prints it, and an unknown or incomplete command
//! is answered with the commands that start like it, so a typo never needs the manual. Parsing
//! is pure and never panics (a property test feeds it arbitrary text); whether a command changes
//! state ([`Command::changes_state`]) is decided here once, for the HTTP listener's token rule.

use std::fmt;
use std::net::SocketAddr;

use crate::control::{AdminState, ServerSpec};

/// Largest weight, as in the configuration (`servers[].weight`).
pub const MAX_WEIGHT: u32 = 256;
/// Largest `maxconn` of an added server, as in the configuration.
pub const MAX_MAXCONN: u32 = 1_000_000;

/// How the answer is written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Format {
    /// For people: tables and `key: value` lines.
    #[default]
    Text,
    /// For scripts (the `json` prefix).
    Json,
}

/// One parsed line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub format: Format,
    pub command: Command,
}

/// A server named on the command line: `BACKEND/SERVER`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerRef {
    pub backend: String,
    pub server: String,
}

impl fmt::Display for ServerRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.backend, self.server)
    }
}

/// A command of the control API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Help,
    ShowInfo,
    ShowStat,
    /// All backends' servers, or one backend's.
    ShowServers {
        backend: Option<String>,
    },
    ShowTls,
    ShowProfiling,
    /// `enable` (ready), `drain` or `disable` (maint) a server.
    SetAdmin {
        server: ServerRef,
        state: AdminState,
    },
    SetWeight {
        server: ServerRef,
        weight: u32,
    },
    SetAddr {
        server: ServerRef,
        addr: SocketAddr,
    },
    AddServer {
        backend: String,
        spec: ServerSpec,
    },
    DelServer {
        server: ServerRef,
    },
    SetProfiling {
        on: bool,
    },
    /// The counter tables, or one table's entries (or one entry).
    ShowTable {
        name: Option<String>,
        key: Option<String>,
    },
    /// The peers stick tables are shared with, and the state of each.
    ShowPeers,
    /// Forget a table's entries, or one.
    ClearTable {
        name: String,
        key: Option<String>,
    },
    Reload,
    Upgrade,
}

impl Command {
    /// Whether running the command changes the proxy's state (refused over HTTP without the
    /// token). `show` and `help` only read.
    pub fn changes_state(&self) -> bool {
        !matches!(
            self,
            Self::Help
                | Self::ShowInfo
                | Self::ShowStat
                | Self::ShowServers { .. }
                | Self::ShowTls
                | Self::ShowProfiling
                | Self::ShowTable { .. }
                | Self::ShowPeers
        )
    }
}

/// The canonical line for a command; parsing it gives the command back.
impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Help => f.write_str("help"),
            Self::ShowInfo => f.write_str("show info"),
            Self::ShowStat => f.write_str("show stat"),
            Self::ShowServers { backend: None } => f.write_str("show servers"),
            Self::ShowServers { backend: Some(b) } => write!(f, "show servers {b}"),
            Self::ShowTls => f.write_str("show tls"),
            Self::ShowProfiling => f.write_str("show profiling"),
            Self::SetAdmin { server, state } => {
                let verb = match state {
                    AdminState::Ready => "enable",
                    AdminState::Drain => "drain",
                    AdminState::Maint => "disable",
                };
                write!(f, "{verb} server {server}")
            }
            Self::SetWeight { server, weight } => write!(f, "set weight {server} {weight}"),
            Self::SetAddr { server, addr } => write!(f, "set server {server} addr {addr}"),
            Self::AddServer { backend, spec } => {
                write!(f, "add server {backend}/{} {}", spec.name, spec.address)?;
                if let Some(weight) = spec.weight {
                    write!(f, " weight {weight}")?;
                }
                if let Some(maxconn) = spec.maxconn {
                    write!(f, " maxconn {maxconn}")?;
                }
                if spec.check {
                    f.write_str(" check")?;
                }
                Ok(())
            }
            Self::DelServer { server } => write!(f, "del server {server}"),
            Self::SetProfiling { on } => {
                write!(f, "set profiling {}", if *on { "on" } else { "off" })
            }
            Self::ShowTable { name, key } => {
                f.write_str("show table")?;
                if let Some(name) = name {
                    write!(f, " {name}")?;
                }
                if let Some(key) = key {
                    write!(f, " key {key}")?;
                }
                Ok(())
            }
            Self::ShowPeers => f.write_str("show peers"),
            Self::ClearTable { name, key } => {
                write!(f, "clear table {name}")?;
                if let Some(key) = key {
                    write!(f, " key {key}")?;
                }
                Ok(())
            }
            Self::Reload => f.write_str("reload"),
            Self::Upgrade => f.write_str("upgrade"),
        }
    }
}

/// Why a line is not a command: a message naming what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ParseError(pub String);

/// One entry of the grammar: keywords, argument synopsis, summary, and the argument parser.
#[derive(Debug)]
pub struct Syntax {
    pub words: &'static [&'static str],
    pub args: &'static str,
    pub summary: &'static str,
    parse: fn(&[&str]) -> Result<Command, String>,
}

impl Syntax {
    /// `set weight BACKEND/SERVER WEIGHT`.
    pub fn usage(&self) -> String {
        let words = self.words.join(" ");
        if self.args.is_empty() {
            words
        } else {
            format!("{words} {}", self.args)
        }
    }
}

/// Every command, in the order `help` lists them.
pub const SYNTAX: &[Syntax] = &[
    Syntax {
        words: &["help"],
        args: "",
        summary: "list the commands",
        parse: |args| no_args(args, Command::Help),
    },
    Syntax {
        words: &["show", "info"],
        args: "",
        summary: "version, uptime, workers, generations, connections",
        parse: |args| no_args(args, Command::ShowInfo),
    },
    Syntax {
        words: &["show", "stat"],
        args: "",
        summary: "counters per frontend, backend and server",
        parse: |args| no_args(args, Command::ShowStat),
    },
    Syntax {
        words: &["show", "servers"],
        args: "[BACKEND]",
        summary: "servers: address, status, admin state, weight, checks",
        parse: parse_show_servers,
    },
    Syntax {
        words: &["show", "tls"],
        args: "",
        summary: "certificates (names, expiry) and ticket keys per TLS bind",
        parse: |args| no_args(args, Command::ShowTls),
    },
    Syntax {
        words: &["show", "profiling"],
        args: "",
        summary: "CPU time and scheduling latency per kind of task",
        parse: |args| no_args(args, Command::ShowProfiling),
    },
    Syntax {
        words: &["show", "table"],
        args: "[TABLE [key KEY]]",
        summary: "counter tables, or one table's entries (rate limits)",
        parse: |args| {
            let (name, key) = table_args(args, false)?;
            Ok(Command::ShowTable { name, key })
        },
    },
    Syntax {
        words: &["show", "peers"],
        args: "",
        summary: "peers sections: each remote peer's session, heartbeat, updates and errors",
        parse: |args| no_args(args, Command::ShowPeers),
    },
    Syntax {
        words: &["enable", "server"],
        args: "BACKEND/SERVER",
        summary: "put a server back in service (ready)",
        parse: |args| parse_admin(args, AdminState::Ready),
    },
    Syntax {
        words: &["drain", "server"],
        args: "BACKEND/SERVER",
        summary: "send a server no new traffic; requests in flight finish",
        parse: |args| parse_admin(args, AdminState::Drain),
    },
    Syntax {
        words: &["disable", "server"],
        args: "BACKEND/SERVER",
        summary: "put a server in maintenance (no traffic, no checks)",
        parse: |args| parse_admin(args, AdminState::Maint),
    },
    Syntax {
        words: &["set", "weight"],
        args: "BACKEND/SERVER WEIGHT",
        summary: "change a server's weight (0 to 256; 0 drains it)",
        parse: parse_set_weight,
    },
    Syntax {
        words: &["set", "server"],
        args: "BACKEND/SERVER addr IP:PORT | weight N | state ready|drain|maint",
        summary: "change a server's address, weight or admin state",
        parse: parse_set_server,
    },
    Syntax {
        words: &["add", "server"],
        args: "BACKEND/SERVER IP:PORT [weight N] [maxconn N] [check]",
        summary: "add a server (it starts in maintenance: `enable` it)",
        parse: parse_add_server,
    },
    Syntax {
        words: &["del", "server"],
        args: "BACKEND/SERVER",
        summary: "remove a server in maintenance with no request in flight",
        parse: |args| one_server(args).map(|server| Command::DelServer { server }),
    },
    Syntax {
        words: &["reload"],
        args: "",
        summary: "re-read the configuration file (a bad one changes nothing)",
        parse: |args| no_args(args, Command::Reload),
    },
    Syntax {
        words: &["upgrade"],
        args: "",
        summary: "start the tern binary again and hand it the listening sockets",
        parse: |args| no_args(args, Command::Upgrade),
    },
    Syntax {
        words: &["set", "profiling"],
        args: "on|off",
        summary: "switch task profiling on or off",
        parse: parse_set_profiling,
    },
    Syntax {
        words: &["clear", "table"],
        args: "TABLE [key KEY]",
        summary: "forget a counter table's entries, or one entry",
        parse: |args| match table_args(args, true)? {
            (Some(name), key) => Ok(Command::ClearTable { name, key }),
            (None, _) => Err("missing TABLE".to_owned()),
        },
    },
];

/// Parses one line (without its line ending).
pub fn parse(line: &str) -> Result<Request, ParseError> {
    let mut words: Vec<&str> = line.split_ascii_whitespace().collect();
    let mut format = Format::Text;
    if words
        .first()
        .is_some_and(|w| w.eq_ignore_ascii_case("json"))
    {
        format = Format::Json;
        words.remove(0);
    }
    if words.is_empty() {
        return Err(ParseError(
            "empty command: type `help` for the list of commands".to_owned(),
        ));
    }
    let syntax = find(&words).ok_or_else(|| unknown(&words))?;
    let args = &words[syntax.words.len()..];
    let command = (syntax.parse)(args)
        .map_err(|message| ParseError(format!("{message}\nusage: {}", syntax.usage())))?;
    Ok(Request { format, command })
}

/// The text `help` prints: one command a line with its summary (on the next line, indented,
/// for the few long ones).
pub fn help_text() -> String {
    const WIDTH: usize = 34;
    let mut text = String::new();
    for syntax in SYNTAX {
        let usage = syntax.usage();
        if usage.len() > WIDTH {
            text.push_str(&format!("{usage}\n{:WIDTH$}  {}\n", "", syntax.summary));
        } else {
            text.push_str(&format!("{usage:WIDTH$}  {}\n", syntax.summary));
        }
    }
    text.push_str("Prefix any command with `json` for a JSON answer.");
    text
}

fn find(words: &[&str]) -> Option<&'static Syntax> {
    SYNTAX.iter().find(|syntax| {
        syntax.words.len() <= words.len()
            && syntax
                .words
                .iter()
                .zip(words)
                .all(|(keyword, word)| keyword.eq_ignore_ascii_case(word))
    })
}

/// The error for a line no syntax matches: the commands sharing its first word, else all.
fn unknown(words: &[&str]) -> ParseError {
    let first = words[0];
    let shown = clip(&words.iter().take(2).copied().collect::<Vec<_>>().join(" "));
    let related: Vec<String> = SYNTAX
        .iter()
        .filter(|s| s.words[0].eq_ignore_ascii_case(first))
        .map(Syntax::usage)
        .collect();
    if related.is_empty() {
        let all: Vec<&str> = dedup_first_words();
        ParseError(format!(
            "unknown command `{shown}`: expected one of {}; type `help` for details",
            all.join(", ")
        ))
    } else {
        let what = if words.len() == 1 {
            "incomplete"
        } else {
            "unknown"
        };
        ParseError(format!(
            "{what} command `{shown}`: expected one of:\n  {}",
            related.join("\n  ")
        ))
    }
}

/// The commands by their keywords (`show info`, `set weight`...), each once.
fn dedup_first_words() -> Vec<&'static str> {
    let mut seen: Vec<&'static str> = Vec::new();
    for syntax in SYNTAX {
        let name = syntax.words[0];
        if !seen.contains(&name) {
            seen.push(name);
        }
    }
    seen
}

fn no_args(args: &[&str], command: Command) -> Result<Command, String> {
    match args {
        [] => Ok(command),
        [extra, ..] => Err(format!("unexpected argument `{}`", clip(extra))),
    }
}

/// `[TABLE [key KEY]]`; `TABLE` required when `named`.
fn table_args(args: &[&str], named: bool) -> Result<(Option<String>, Option<String>), String> {
    match args {
        [] if named => Err("missing TABLE".to_owned()),
        [] => Ok((None, None)),
        [table] => Ok((Some(name(table, "table")?), None)),
        [table, word, key] if word.eq_ignore_ascii_case("key") => {
            Ok((Some(name(table, "table")?), Some((*key).to_owned())))
        }
        [_, word, ..] if !word.eq_ignore_ascii_case("key") => Err(format!(
            "unexpected argument `{}`: expected `key KEY`",
            clip(word)
        )),
        [_, _] => Err("`key` needs a KEY".to_owned()),
        [_, _, _, extra, ..] => Err(format!("unexpected argument `{}`", clip(extra))),
        _ => Err("expected TABLE [key KEY]".to_owned()),
    }
}

fn parse_show_servers(args: &[&str]) -> Result<Command, String> {
    match args {
        [] => Ok(Command::ShowServers { backend: None }),
        [backend] => Ok(Command::ShowServers {
            backend: Some(name(backend, "backend")?),
        }),
        [_, extra, ..] => Err(format!("unexpected argument `{}`", clip(extra))),
    }
}

fn parse_admin(args: &[&str], state: AdminState) -> Result<Command, String> {
    one_server(args).map(|server| Command::SetAdmin { server, state })
}

fn one_server(args: &[&str]) -> Result<ServerRef, String> {
    match args {
        [target] => server_ref(target),
        [] => Err("missing BACKEND/SERVER".to_owned()),
        [_, extra, ..] => Err(format!("unexpected argument `{}`", clip(extra))),
    }
}

fn parse_set_weight(args: &[&str]) -> Result<Command, String> {
    match args {
        [target, weight] => Ok(Command::SetWeight {
            server: server_ref(target)?,
            weight: parse_weight(weight)?,
        }),
        [] | [_] => Err("expected BACKEND/SERVER and WEIGHT".to_owned()),
        [_, _, extra, ..] => Err(format!("unexpected argument `{}`", clip(extra))),
    }
}

/// `set server B/S addr A`, and HAProxy's `set server B/S weight N|state S` forms.
fn parse_set_server(args: &[&str]) -> Result<Command, String> {
    let [target, field, value] = args else {
        return Err(match args.len() {
            0..=2 => "expected BACKEND/SERVER, a field (addr, weight, state) and its value",
            _ => "too many arguments",
        }
        .to_owned());
    };
    let server = server_ref(target)?;
    match field.to_ascii_lowercase().as_str() {
        "addr" => Ok(Command::SetAddr {
            server,
            addr: address(value)?,
        }),
        "weight" => Ok(Command::SetWeight {
            server,
            weight: parse_weight(value)?,
        }),
        "state" => {
            let state = match value.to_ascii_lowercase().as_str() {
                "ready" => AdminState::Ready,
                "drain" => AdminState::Drain,
                "maint" => AdminState::Maint,
                _ => {
                    return Err(format!(
                        "unknown state `{}`: expected ready, drain or maint",
                        clip(value)
                    ))
                }
            };
            Ok(Command::SetAdmin { server, state })
        }
        _ => Err(format!(
            "unknown field `{}`: expected addr, weight or state",
            clip(field)
        )),
    }
}

fn parse_add_server(args: &[&str]) -> Result<Command, String> {
    let [target, addr, options @ ..] = args else {
        return Err("expected BACKEND/SERVER and IP:PORT".to_owned());
    };
    let server = server_ref(target)?;
    let mut spec = ServerSpec {
        name: server.server,
        address: address(addr)?,
        weight: None,
        maxconn: None,
        check: false,
    };
    let mut rest = options.iter();
    let mut seen: Vec<String> = Vec::new();
    while let Some(option) = rest.next() {
        let key = option.to_ascii_lowercase();
        if seen.contains(&key) {
            return Err(format!("option `{key}` given twice"));
        }
        match key.as_str() {
            "weight" => spec.weight = Some(parse_weight(value_of(rest.next(), "weight")?)?),
            "maxconn" => spec.maxconn = Some(parse_maxconn(value_of(rest.next(), "maxconn")?)?),
            "check" => spec.check = true,
            _ => {
                return Err(format!(
                    "unknown option `{}`: expected weight N, maxconn N or check",
                    clip(option)
                ))
            }
        }
        seen.push(key);
    }
    Ok(Command::AddServer {
        backend: server.backend,
        spec,
    })
}

fn parse_set_profiling(args: &[&str]) -> Result<Command, String> {
    match args {
        [value] => match value.to_ascii_lowercase().as_str() {
            "on" => Ok(Command::SetProfiling { on: true }),
            "off" => Ok(Command::SetProfiling { on: false }),
            _ => Err(format!("expected on or off, not `{}`", clip(value))),
        },
        [] => Err("expected on or off".to_owned()),
        [_, extra, ..] => Err(format!("unexpected argument `{}`", clip(extra))),
    }
}

fn value_of<'a>(value: Option<&&'a str>, option: &str) -> Result<&'a str, String> {
    value
        .copied()
        .ok_or_else(|| format!("option `{option}` needs a number after it"))
}

/// `BACKEND/SERVER`.
fn server_ref(text: &str) -> Result<ServerRef, String> {
    let Some((backend, server)) = text.split_once('/') else {
        return Err(format!(
            "`{}` is not BACKEND/SERVER (e.g. app/s1)",
            clip(text)
        ));
    };
    Ok(ServerRef {
        backend: name(backend, "backend")?,
        server: name(server, "server")?,
    })
}

/// A backend or server name: `[A-Za-z0-9_.-]+`, as in the configuration.
fn name(text: &str, what: &str) -> Result<String, String> {
    if text.is_empty() {
        return Err(format!("missing {what} name"));
    }
    if let Some(bad) = text
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
    {
        return Err(format!(
            "invalid character {bad:?} in {what} name `{}`: names use letters, digits, `_`, `.` and `-`",
            clip(text)
        ));
    }
    Ok(text.to_owned())
}

fn parse_weight(text: &str) -> Result<u32, String> {
    number(text, "weight", 0, MAX_WEIGHT)
}

fn parse_maxconn(text: &str) -> Result<u32, String> {
    number(text, "maxconn", 1, MAX_MAXCONN)
}

fn number(text: &str, what: &str, low: u32, high: u32) -> Result<u32, String> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "{what} `{}` is not a number: expected an integer from {low} to {high}",
            clip(text)
        ));
    }
    match text.parse::<u32>() {
        Ok(n) if (low..=high).contains(&n) => Ok(n),
        _ => Err(format!(
            "{what} {} is out of range: expected {low} to {high}",
            clip(text)
        )),
    }
}

/// `IP:PORT`; host names are refused (the control path never waits for DNS).
fn address(text: &str) -> Result<SocketAddr, String> {
    text.parse().map_err(|_| {
        format!(
            "`{}` is not an address: expected IP:PORT such as 10.0.0.5:8080 or [::1]:8080 \
             (no host names)",
            clip(text)
        )
    })
}

/// User input quoted in a message: at most 64 characters, so that an error stays one screen
/// line, and control characters escaped, so that an answer cannot drive the reader's terminal.
fn clip(text: &str) -> String {
    let mut chars = text.chars();
    let mut clipped = String::new();
    for c in chars.by_ref().take(64) {
        if c.is_control() {
            clipped.extend(c.escape_default());
        } else {
            clipped.push(c);
        }
    }
    if chars.next().is_some() {
        clipped.push_str("...");
    }
    clipped
}

#[cfg(test)]
mod tests;
