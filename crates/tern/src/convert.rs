//! `tern convert FILE.cfg`: print a HAProxy configuration as the equivalent tern TOML.
//!
//! The TOML goes to stdout (comments say what was approximated or left out), the warnings to
//! stderr as one message. The result is checked like `tern check` does, minus loading the
//! certificates, and errors are reported against the `.cfg`: exit 0 with TOML, or 2 with the
//! errors and no TOML.

use std::process::ExitCode;

use crate::cli::ConvertArgs;

pub fn main(args: &ConvertArgs) -> ExitCode {
    let text = match tern_config::files::read_to_string(&args.file) {
        Ok(text) => text,
        Err(e) => {
            eprintln!(
                "{}: cannot read the configuration file: {e}",
                args.file.display()
            );
            return ExitCode::from(2);
        }
    };
    let converted = tern_config::haproxy::convert(&text, &args.file)
        .and_then(|c| c.validate(&args.file).map(|_| c));
    match converted {
        Ok(converted) => {
            print!("{}", converted.toml);
            if !converted.warnings.is_empty() {
                eprintln!("{}", tern_config::format_warnings(&converted.warnings));
            }
            ExitCode::SUCCESS
        }
        Err(errors) => {
            eprintln!("{errors}");
            ExitCode::from(2)
        }
    }
}
