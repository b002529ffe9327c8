//! `openssl speed` side by side: run it as a subprocess with the same duration and thread
//! count, read its summary, and put its figure and the ratio tern ÷ openssl on each row.
//!
//! This is a comparison with the crypto library most servers link (HAProxy, nginx), on the
//! same machine in the same run, which is the only kind of comparison the benchmarking rules
//! accept. Nothing here can fail the run: a missing `openssl`, a failed or timed-out run, or a
//! figure the parser cannot find becomes a note, and the row keeps tern's figure alone.
//!
//! Matching what openssl measures: signatures and `derive` rows compare with openssl's
//! sign/verify and ECDH "op" figures; ciphers are run with `-aead` (a TLS-like record: new IV,
//! additional data, tag) and `-bytes` for each of tern's sizes. `-seconds` takes whole
//! seconds, so a fractional `--seconds` is rounded up for openssl; rates are per second either
//! way. `openssl speed -multi` divides by wall-clock time whatever the options (its children
//! run as with `-elapsed`), which is why tern's `--multi` does too. With `--cpus` the openssl
//! process inherits tern's CPU mask. OpenSSL 3.0 has no ML-KEM
//! and no in-memory handshake, so those rows have no counterpart.

mod parse;

#[cfg(test)]
mod tests;

use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

pub use parse::{parse, parse_with_sizes, Figures};

use crate::aead::SIZES;
use crate::catalog::{Algo, Section};
use crate::measure::{Basis, Settings};
use crate::report::Row;

/// An `openssl` binary found on PATH.
#[derive(Debug, Clone)]
pub struct Openssl {
    /// `openssl version`'s output, e.g. `OpenSSL 3.0.19 27 Jan 2026 (...)`.
    pub version: String,
}

impl Openssl {
    /// Looks for `openssl` on PATH; the error is a note for the report.
    pub fn detect() -> Result<Self, String> {
        let output = Command::new("openssl")
            .arg("version")
            .stdin(Stdio::null())
            .output()
            .map_err(|err| format!("openssl not run ({err}); no comparison"))?;
        if !output.status.success() {
            return Err(format!(
                "`openssl version` failed ({}); no comparison",
                output.status
            ));
        }
        let version = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        Ok(Self { version })
    }

    /// Runs the openssl counterpart of `rows` (one section's) and fills in its figures;
    /// returns notes about what could not be compared.
    pub fn compare(
        &self,
        section: Section,
        algos: &[Algo],
        settings: &Settings,
        rows: &mut [Row],
    ) -> Vec<String> {
        let mut notes = Vec::new();
        let names: Vec<&str> = algos
            .iter()
            .filter(|algo| algo.section() == section)
            .filter_map(|algo| algo.openssl_name())
            .collect();
        let mut figures = Figures::default();
        match section {
            Section::Signature | Section::KeyAgreement if !names.is_empty() => {
                let tests = names.len() * if section == Section::Signature { 2 } else { 1 };
                let args: Vec<String> = names.iter().map(|name| (*name).to_owned()).collect();
                match run_speed(settings, &args, tests) {
                    Ok(text) => figures = parse(&text),
                    Err(err) => notes.push(err),
                }
            }
            Section::Cipher => {
                for name in &names {
                    for size in SIZES {
                        let args =
                            ["-aead", "-bytes", &size.to_string(), "-evp", name].map(str::to_owned);
                        match run_speed(settings, &args, 1) {
                            Ok(text) => merge(&mut figures, parse_with_sizes(&text, &[size])),
                            Err(err) => notes.push(err),
                        }
                    }
                }
            }
            Section::Signature | Section::KeyAgreement => {}
            Section::Handshake => notes.push(
                "openssl speed has no in-memory handshake: handshake rows are tern's alone"
                    .to_owned(),
            ),
            // Its OpenSSL rows are measured in process, through the same EVP calls.
            Section::CbcVsGcm => {}
        }
        if algos
            .iter()
            .any(|algo| matches!(algo, Algo::MlKem768 | Algo::X25519MlKem768))
        {
            notes.push("openssl speed 3.0 has no ML-KEM: no comparison for it".to_owned());
        }
        for row in rows.iter_mut() {
            match lookup(&figures, row) {
                Some(theirs) => row.set_openssl(theirs),
                None if has_counterpart(row) => notes.push(format!(
                    "openssl: no figure found for {} {}{}",
                    row.algorithm,
                    row.operation,
                    row.bytes.map(|b| format!(" {b} bytes")).unwrap_or_default()
                )),
                None => {}
            }
        }
        notes
    }
}

/// Whether openssl 3.0 has a row to compare with `row`.
fn has_counterpart(row: &Row) -> bool {
    match row.section {
        // Batched rows are tern-mb's alone: openssl speed has nothing to compare them with.
        Section::Signature => row.operation != crate::batched::OPERATION,
        Section::Cipher => true,
        Section::KeyAgreement => row.operation == "derive",
        Section::Handshake | Section::CbcVsGcm => false,
    }
}

/// openssl's figure for a row, in the row's headline unit.
fn lookup(figures: &Figures, row: &Row) -> Option<f64> {
    let algo = Algo::ALL
        .into_iter()
        .find(|algo| algo.name() == row.algorithm && algo.section() == row.section)?;
    let name = algo.openssl_name()?;
    match (row.section, row.operation.as_str()) {
        (Section::Signature, "sign") => figures.sign_verify.get(name).map(|pair| pair.0),
        (Section::Signature, "verify") => figures.sign_verify.get(name).map(|pair| pair.1),
        (Section::KeyAgreement, "derive") => figures.ops.get(name).copied(),
        (Section::Cipher, _) => figures.bytes.get(&(name.to_owned(), row.bytes?)).copied(),
        _ => None,
    }
}

fn merge(into: &mut Figures, from: Figures) {
    into.sign_verify.extend(from.sign_verify);
    into.ops.extend(from.ops);
    into.bytes.extend(from.bytes);
}

/// The arguments common to every run: duration, threads, time basis.
fn common_args(settings: &Settings) -> Vec<String> {
    let seconds = settings.duration.as_secs_f64().ceil().max(1.0) as u64;
    let mut args = vec![
        "speed".to_owned(),
        "-seconds".to_owned(),
        seconds.to_string(),
    ];
    if settings.threads > 1 {
        args.extend(["-multi".to_owned(), settings.threads.to_string()]);
    }
    if settings.basis == Basis::Wall {
        args.push("-elapsed".to_owned());
    }
    args
}

/// Runs `openssl speed` with `args` (`tests` measurements of `-seconds` each, which bounds
/// how long it may take) and returns its stdout.
fn run_speed(settings: &Settings, args: &[String], tests: usize) -> Result<String, String> {
    let mut all = common_args(settings);
    all.extend(args.iter().cloned());
    let shown = format!("openssl {}", all.join(" "));
    eprintln!("running {shown}");
    let seconds = settings.duration.as_secs_f64().ceil().max(1.0);
    let limit = Duration::from_secs_f64(seconds * tests as f64 * 3.0 + 30.0);
    let output = run_bounded(Command::new("openssl").args(&all), limit)
        .map_err(|err| format!("{shown}: {err}"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let last = stderr.lines().rev().find(|line| !line.trim().is_empty());
        return Err(format!(
            "{shown}: {} ({})",
            output.status,
            last.unwrap_or("no message")
        ));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Runs a command to completion, killing it after `limit`.
fn run_bounded(command: &mut Command, limit: Duration) -> Result<Output, String> {
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|err| err.to_string())?;
    let pid = child.id();
    let (done, wait) = mpsc::channel();
    std::thread::spawn(move || {
        // The receiver is gone only if the run already timed out; nothing to report then.
        let _ = done.send(child.wait_with_output());
    });
    match wait.recv_timeout(limit) {
        Ok(result) => result.map_err(|err| err.to_string()),
        Err(_) => {
            if let Ok(raw) = i32::try_from(pid) {
                let pid = nix::unistd::Pid::from_raw(raw);
                // It may have exited in the meantime; then there is nothing to kill.
                let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
            }
            Err(format!(
                "no result within {:.0}s, killed",
                limit.as_secs_f64()
            ))
        }
    }
}
