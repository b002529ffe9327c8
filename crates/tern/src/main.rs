//! `tern`: a TLS-terminating load balancer and reverse proxy.
//!
//! One binary with subcommands, like the tools operators already know: `run` serves a
//! configuration, `check` validates one, `convert` turns a HAProxy configuration into TOML, `demo` shows the main job in one command, `term` is the
//! test backend used by tests, the demo and the benchmarks, `bench` the load generator and
//! its side-by-side suite, `speed` the crypto speed of the TLS provider, `ctl` sends a command to
//! a running tern's control API.

#![forbid(unsafe_code)]

mod bench;
mod check;
mod cli;
mod convert;
mod ctl;
mod demo;
mod fd_limit;
mod generations;
mod logging;
mod notify;
mod priority;
mod run;
mod runtime_servers;
mod signals;
mod term;
mod upgrade;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    logging::init(&cli.log_level);
    let result = match cli.command {
        cli::Command::Run(args) => run::main(&args),
        cli::Command::Check(args) => return check::main(&args),
        cli::Command::Convert(args) => return convert::main(&args),
        cli::Command::Ctl(args) => return ctl::main(&args),
        cli::Command::Demo(args) => demo::main(&args),
        cli::Command::Term(args) => term::main(&args),
        cli::Command::Bench(bench) => bench::main(*bench),
        cli::Command::Speed(args) => tern_speed::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tern: {e:#}");
            ExitCode::from(1)
        }
    }
}
