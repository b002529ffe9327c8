//! `tern check -c FILE`: validate a configuration and load its certificates, like `haproxy -c`.
//! Exit status 0 with a one-line summary, 1 with the summary when a HAProxy file has keywords
//! with no effect in tern or mapped approximately (listed on stderr as one warning), or 2 with
//! every error found. Users with plain-text passwords, binds on the OpenSSL engine and binds
//! accepting TLS below 1.2 are listed as notes and warnings without changing the exit status.

use std::process::ExitCode;

use crate::cli::CheckArgs;
use crate::run::build_snapshot;

pub fn main(args: &CheckArgs) -> ExitCode {
    let (config, warnings) = match tern_config::load_with_warnings(&args.config) {
        Ok(loaded) => loaded,
        Err(errors) => {
            eprintln!("{errors}");
            return ExitCode::from(2);
        }
    };
    if !warnings.is_empty() {
        eprintln!("{}", tern_config::format_warnings(&warnings));
    }
    // Valid, so the exit status stays as it is; but a password in the file is worth a word.
    for (list, user) in config.insecure_passwords() {
        eprintln!(
            "warning: {}: userlist '{list}': user '{user}' has a plain-text password \
             (insecure_password / insecure-password); use a crypt(3) hash such as \
             `openssl passwd -6`",
            args.config.display()
        );
    }
    // Binds on the OpenSSL engine, and those accepting TLS below 1.2: said, not an error.
    for note in config.openssl_notes() {
        eprintln!("{}: {note}", args.config.display());
    }
    let summary = config.summary();
    match build_snapshot(config) {
        Ok(_) => {
            println!("{}: {summary}", args.config.display());
            if warnings.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(e) => {
            eprintln!("{}: {e:#}", args.config.display());
            ExitCode::from(2)
        }
    }
}
