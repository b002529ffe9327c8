//! `tern check -c FILE`: validate a configuration and load its certificates, like `haproxy -c`.
//! Exit status 0 with a one-line summary, or 2 with every error found.

use std::process::ExitCode;

use crate::cli::CheckArgs;
use crate::run::build_snapshot;

pub fn main(args: &CheckArgs) -> ExitCode {
    let config = match tern_config::load(&args.config) {
        Ok(c) => c,
        Err(errors) => {
            eprintln!("{errors}");
            return ExitCode::from(2);
        }
    };
    let summary = config.summary();
    match build_snapshot(config) {
        Ok(_) => {
            println!("{}: {summary}", args.config.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{}: {e:#}", args.config.display());
            ExitCode::from(2)
        }
    }
}
