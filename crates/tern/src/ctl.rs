//! `tern ctl`: one command to a running tern's control API, its answer on stdout.
//!
//! The exit status tells scripts what happened without parsing the answer: 0 the command was
//! carried out, 1 it was refused (unknown command, bad argument, no such server, not allowed;
//! the reason is on stderr), 2 the control API could not be reached or did not answer (the
//! message names the socket path or address).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use tern_admin::api::command::Format;
use tern_admin::ctl::{self, CtlError};

use crate::cli::CtlArgs;

/// The socket used when neither `-s` nor `TERN_SOCKET` says otherwise.
const DEFAULT_SOCKET: &str = "/run/tern/tern.sock";

pub fn main(args: &CtlArgs) -> ExitCode {
    match run(args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("tern ctl: {e}");
            ExitCode::from(2)
        }
    }
}

/// Sends the command and prints the answer; `Ok(false)` when it was refused.
fn run(args: &CtlArgs) -> Result<bool, CtlError> {
    let (format, line) = ctl::command_line(&args.command, args.json)?;
    let timeout = Duration::from_secs(args.timeout.max(1));
    let answer = match &args.http {
        Some(url) => {
            let token = args
                .token
                .clone()
                .or_else(|| std::env::var("TERN_TOKEN").ok());
            ctl::send_http(url, token.as_deref(), format, &line, timeout)?
        }
        None => ctl::send_unix(&socket_path(args), format, &line, timeout)?,
    };
    // A JSON answer goes to stdout either way, for the script reading it.
    if answer.ok || format == Format::Json {
        println!("{}", answer.body);
    } else {
        eprintln!("{}", answer.body);
    }
    Ok(answer.ok)
}

fn socket_path(args: &CtlArgs) -> PathBuf {
    args.socket
        .clone()
        .or_else(|| std::env::var_os("TERN_SOCKET").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from(DEFAULT_SOCKET))
}
