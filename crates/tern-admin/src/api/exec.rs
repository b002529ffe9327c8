//! Running a parsed command against the proxy ([`Control`]) and shaping its answer.
//!
//! Both front doors (the Unix socket and the HTTP listener) come through [`answer`], so a
//! command behaves the same whichever way it arrives, and every state change is logged once,
//! here, with where it came from: the log is the audit trail of who changed what at runtime.

use std::time::Duration;

use serde_json::{json, Value};

use super::command::{self, Command, Format, ParseError, Request, SYNTAX};
use super::rates::Rates;
use super::text;
use crate::control::{Control, ControlError};
use crate::render;

/// What a command produced.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    Text(String),
    Json(Value),
}

impl Output {
    /// The output as a JSON value (text becomes a JSON string).
    pub fn into_json(self) -> Value {
        match self {
            Self::Text(text) => Value::String(text),
            Self::Json(value) => value,
        }
    }
}

/// Why a command did nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    /// The line is not a command (unknown, wrong arguments, bad value).
    #[error("{0}")]
    Parse(#[from] ParseError),
    /// The proxy refused it (unknown backend or server, invalid in the current state, failed).
    #[error("{0}")]
    Control(#[from] ControlError),
    /// The caller may not change state (HTTP without the token).
    #[error("{0}")]
    Forbidden(String),
}

/// What the front doors share: the proxy, and the rates sampled from it.
#[derive(Clone)]
pub struct Context {
    pub control: std::sync::Arc<dyn Control>,
    pub rates: Rates,
    /// Per-frontend, backend and server rates for `show stat`.
    pub object_rates: super::object_rates::ObjectRates,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context").finish_non_exhaustive()
    }
}

/// Parses and runs one line from `origin` (for the log: `unix socket`, `http 127.0.0.1:5312`),
/// with the caller's `permission`; returns the answer's format with the result.
pub fn answer_line(
    ctx: &Context,
    line: &str,
    origin: &str,
    permission: Permission<'_>,
) -> (Format, Result<Output, Failure>) {
    let request = match command::parse(line) {
        Ok(request) => request,
        Err(e) => {
            tracing::debug!(origin, "control: refused line: {e}");
            // A refused line still answers in the format it asked for.
            let json = line
                .split_ascii_whitespace()
                .next()
                .is_some_and(|w| w.eq_ignore_ascii_case("json"));
            let format = if json { Format::Json } else { Format::Text };
            return (format, Err(e.into()));
        }
    };
    (request.format, answer(ctx, &request, origin, permission))
}

/// Whether the caller may run state-changing commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission<'a> {
    All,
    /// Read-only, with the message explaining why.
    ReadOnly(&'a str),
}

/// Runs a parsed request, logging state changes.
pub fn answer(
    ctx: &Context,
    request: &Request,
    origin: &str,
    permission: Permission<'_>,
) -> Result<Output, Failure> {
    let command = &request.command;
    if !command.changes_state() {
        return Ok(execute(ctx, command, request.format)?);
    }
    if let Permission::ReadOnly(why) = permission {
        tracing::warn!(origin, "control: refused `{command}`: {why}");
        return Err(Failure::Forbidden(why.to_owned()));
    }
    let result = execute(ctx, command, request.format);
    match &result {
        Ok(_) => tracing::info!(origin, "control: `{command}` done"),
        Err(e) => tracing::warn!(origin, "control: `{command}` refused: {e}"),
    }
    Ok(result?)
}

/// Runs `command` against the proxy.
pub fn execute(ctx: &Context, command: &Command, format: Format) -> Result<Output, ControlError> {
    let control = ctx.control.as_ref();
    let json = format == Format::Json;
    let done = |message: String| {
        Ok(if json {
            Output::Json(json!({ "message": message }))
        } else {
            Output::Text(message)
        })
    };
    match command {
        Command::Help => Ok(if json {
            Output::Json(help_json())
        } else {
            Output::Text(command::help_text())
        }),
        Command::ShowInfo => {
            let info = control.info();
            let rates = ctx.rates.current();
            Ok(if json {
                let mut value = render::json::info(&info);
                if let Value::Object(map) = &mut value {
                    map.insert("rates".into(), rates.to_json());
                }
                Output::Json(value)
            } else {
                Output::Text(text::info(&info, &rates))
            })
        }
        Command::ShowStat => {
            let view = control.view();
            let rates = ctx.object_rates.current();
            Ok(if json {
                let mut value = render::json::stat(&view);
                if let Value::Object(map) = &mut value {
                    map.insert("rates".into(), rates.to_json());
                }
                Output::Json(value)
            } else {
                Output::Text(text::stat(&view, &rates))
            })
        }
        Command::ShowServers { backend } => show_servers(control, backend.as_deref(), json),
        Command::ShowTls => {
            let tls = control.tls();
            Ok(if json {
                Output::Json(tls)
            } else {
                Output::Text(serde_json::to_string_pretty(&tls).unwrap_or_default())
            })
        }
        Command::ShowProfiling => {
            let table = control.profiling();
            Ok(if json {
                let on = control.info().profiling;
                Output::Json(json!({ "enabled": on, "table": table }))
            } else {
                Output::Text(table)
            })
        }
        Command::SetAdmin { server, state } => {
            control.set_admin(&server.backend, &server.server, *state)?;
            done(format!("server {server} is now {}", state.as_str()))
        }
        Command::SetWeight { server, weight } => {
            control.set_weight(&server.backend, &server.server, *weight)?;
            done(format!("server {server} weight set to {weight}"))
        }
        Command::SetAddr { server, addr } => {
            control.set_addr(&server.backend, &server.server, *addr)?;
            done(format!("server {server} address set to {addr}"))
        }
        Command::AddServer { backend, spec } => {
            control.add_server(backend, spec.clone())?;
            done(format!(
                "server {backend}/{} added at {} (in maintenance: `enable server {backend}/{}` \
                 to send it traffic)",
                spec.name, spec.address, spec.name
            ))
        }
        Command::DelServer { server } => {
            control.del_server(&server.backend, &server.server)?;
            done(format!("server {server} deleted"))
        }
        Command::SetProfiling { on } => {
            control.set_profiling(*on);
            done(format!("profiling {}", if *on { "on" } else { "off" }))
        }
        Command::ShowTable { name, key } => {
            let text = control.show_table(name.as_deref(), key.as_deref())?;
            Ok(if json {
                Output::Json(json!({ "table": text }))
            } else {
                Output::Text(text)
            })
        }
        Command::ShowPeers => {
            let text = control.show_peers();
            Ok(if json {
                Output::Json(json!({ "peers": text }))
            } else {
                Output::Text(text)
            })
        }
        Command::ClearTable { name, key } => done(control.clear_table(name, key.as_deref())?),
        Command::Reload => done(control.reload()?),
        Command::Upgrade => done(control.upgrade()?),
    }
}

fn show_servers(
    control: &dyn Control,
    backend: Option<&str>,
    json: bool,
) -> Result<Output, ControlError> {
    let view = control.view();
    if let Some(name) = backend {
        if view.config.backend_index(name).is_none() {
            return Err(ControlError::UnknownBackend(name.to_owned()));
        }
    }
    if !json {
        return Ok(Output::Text(text::servers(&view, backend)));
    }
    let mut list = render::json::servers(&view);
    if let (Some(name), Value::Array(items)) = (backend, &mut list) {
        items.retain(|item| item.get("backend").and_then(Value::as_str) == Some(name));
    }
    Ok(Output::Json(list))
}

fn help_json() -> Value {
    Value::Array(
        SYNTAX
            .iter()
            .map(|s| json!({ "usage": s.usage(), "summary": s.summary }))
            .collect(),
    )
}

/// Seconds, for text (`1h 2m 3s`).
pub(super) fn format_uptime(uptime: Duration) -> String {
    humantime::format_duration(Duration::from_secs(uptime.as_secs())).to_string()
}
