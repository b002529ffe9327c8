//! `tern speed`: how fast tern's TLS provider is, algorithm by algorithm, like `openssl speed`.
//!
//! A proxy's handshake rate and throughput are bounded by its crypto. This command measures
//! that bound on the machine at hand, with the library tern actually uses (aws-lc-rs, through
//! rustls), and puts `openssl speed` beside it in the same run, so "how far is tern from the
//! crypto ceiling" and "how does its crypto compare with what HAProxy links" are answered by
//! measurement, not by assumption:
//!
//! - signatures (`sig`): RSA-2048/3072/4096, ECDSA P-256/P-384, Ed25519, sign/s and verify/s,
//!   and RSA signatures made eight at a time on AVX-512 IFMA (`batched`, tern-mb);
//! - key agreement (`kx`): X25519, P-256, ML-KEM-768 and the X25519MLKEM768 hybrid, both as
//!   primitives and as a TLS handshake runs them, with the client's and server's shares, and
//!   X25519 eight at a time on AVX-512 IFMA (`batched`, tern-mb);
//! - record ciphers (`aead`): AES-128-GCM, AES-256-GCM, ChaCha20-Poly1305, bytes/s at
//!   16 … 16384 bytes;
//! - full handshakes in memory (`handshake`): client and server in one thread, no sockets,
//!   tern's real server policy, per certificate type and TLS version, with the server's share;
//! - seed 002's table (`aes-128-cbc-hmac-sha1`, `cbc`): AES-128-CBC with HMAC-SHA1 on OpenSSL
//!   (its stitched cipher where it has one) next to AES-128-GCM on OpenSSL and on aws-lc-rs as
//!   rustls seals records, for the OpenSSL engine's CBC suites (feature `openssl-engine`).
//!
//! Every measurement runs for `--seconds` on `--multi` threads ([`measure`]); rates are per
//! CPU-second of the measuring thread, as openssl's are, unless `--elapsed`; with `--multi N`
//! they are per wall-clock second, summed over the threads, as `openssl speed -multi` does.

#![forbid(unsafe_code)]

mod aead;
mod batched;
mod catalog;
mod cbc;
mod error;
mod handshake;
mod kx;
mod measure;
mod openssl;
mod report;
mod sig;
mod table;

#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::time::Duration;

pub use catalog::{known_names, select, Algo, Section};
pub use error::SpeedError;
pub use measure::{measure, parse_cpu_list, Basis, Measured, Op, Settings, Split};
pub use openssl::{parse as parse_openssl, Figures as OpensslFigures};
pub use report::{HandshakeDetail, Report, Row, SplitDetail};

/// Options of `tern speed`.
#[derive(Debug, Clone, clap::Args)]
pub struct SpeedArgs {
    /// Algorithms to measure (default: all): rsa2048 rsa3072 rsa4096 ecdsap256 ecdsap384
    /// ed25519 x25519 p256 mlkem768 x25519mlkem768 aes-128-gcm aes-256-gcm chacha20-poly1305
    /// handshake-rsa2048 handshake-ecdsap256 handshake-ed25519 aes-128-cbc-hmac-sha1 (seed 002's
    /// CBC vs GCM table), or the groups rsa, ecdsa, signatures, kx, ciphers, handshake, cbc.
    #[arg(value_name = "ALGORITHM")]
    pub algorithms: Vec<String>,
    /// Seconds per measurement (fractions allowed).
    #[arg(long, default_value_t = 1.0)]
    pub seconds: f64,
    /// Threads measuring in parallel, each running the same measurement; their rates, per
    /// wall-clock second (as openssl speed -multi), are summed.
    #[arg(long, default_value_t = 1)]
    pub multi: u32,
    /// Pin measuring thread i to the i-th CPU of this list (cycling), e.g. 0,1 or 2-3;
    /// openssl runs on the same CPUs.
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Divide by wall-clock time instead of the threads' CPU time (openssl's -elapsed).
    #[arg(long)]
    pub elapsed: bool,
    /// Write every figure as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Do not run `openssl speed` for comparison.
    #[arg(long)]
    pub no_openssl: bool,
    /// List the algorithm names and exit.
    #[arg(long)]
    pub list: bool,
}

/// A validated run: what to measure and how.
#[derive(Debug, Clone)]
pub struct Plan {
    pub algos: Vec<Algo>,
    pub settings: Settings,
    pub json: Option<PathBuf>,
    pub openssl: bool,
}

impl Plan {
    /// Checks the options: known algorithm names, a positive duration, at least one thread.
    pub fn from_args(args: &SpeedArgs) -> Result<Self, SpeedError> {
        if !(args.seconds.is_finite() && args.seconds > 0.0 && args.seconds <= 3600.0) {
            return Err(SpeedError::BadSeconds(args.seconds));
        }
        if !(1..=1024).contains(&args.multi) {
            return Err(SpeedError::BadMulti(args.multi));
        }
        let cpus = match &args.cpus {
            Some(list) => parse_cpu_list(list)?,
            None => Vec::new(),
        };
        Ok(Self {
            algos: select(&args.algorithms)?,
            settings: Settings {
                duration: Duration::from_secs_f64(args.seconds),
                threads: args.multi as usize,
                cpus,
                // With several threads the question is how much N cores do together, which
                // is a wall-clock rate; `openssl speed -multi` divides by wall-clock time too.
                basis: if args.elapsed || args.multi > 1 {
                    Basis::Wall
                } else {
                    Basis::Cpu
                },
            },
            json: args.json.clone(),
            openssl: !args.no_openssl,
        })
    }
}

/// Runs `tern speed`.
pub fn run(args: SpeedArgs) -> anyhow::Result<()> {
    if args.list {
        println!("{}", known_names().replace(", ", "\n"));
        return Ok(());
    }
    let plan = Plan::from_args(&args)?;
    if !plan.settings.cpus.is_empty() {
        // Inherited by the measuring threads (which then pin one CPU each) and by openssl.
        measure::pin_current_thread(&plan.settings.cpus)?;
    }
    let report = execute(&plan)?;
    for note in &report.notes {
        println!("note: {note}");
    }
    if let Some(path) = &plan.json {
        report.write_json(path)?;
        println!("json: {}", path.display());
    }
    Ok(())
}

/// The tables, in the order they are measured and printed.
const SECTIONS: [Section; 5] = [
    Section::Signature,
    Section::KeyAgreement,
    Section::Cipher,
    Section::Handshake,
    Section::CbcVsGcm,
];

const HANDSHAKE_NOTE: &str = "handshakes: client and server in one thread through rustls, no \
    sockets; server% is the server's share of the CPU time, server-only/s the rate one core \
    could serve. Ed25519 certificates load and serve in tern but are not generated by \
    tern demo (browsers do not accept them).";

/// tern's rows of one section.
fn measure_section(
    section: Section,
    algos: &[Algo],
    settings: &Settings,
) -> Result<Vec<Row>, SpeedError> {
    match section {
        Section::Signature => sig::run(algos, settings),
        Section::KeyAgreement => kx::run(algos, settings),
        Section::Cipher => aead::run(algos, settings),
        Section::Handshake => handshake::run(algos, settings),
        Section::CbcVsGcm => cbc::run(algos, settings),
    }
}

/// Measures every selected section, compares with openssl, prints each table as it is done.
fn execute(plan: &Plan) -> Result<Report, SpeedError> {
    let settings = &plan.settings;
    let mut report = Report {
        tern_version: env!("CARGO_PKG_VERSION").to_owned(),
        provider: "aws-lc-rs (rustls 0.23 aws_lc_rs provider)".to_owned(),
        seconds: settings.duration.as_secs_f64(),
        multi: settings.threads,
        cpus: settings.cpus.clone(),
        rate_basis: settings.basis,
        openssl: None,
        load_before: Report::load_average(),
        load_after: None,
        rows: Vec::new(),
        notes: Vec::new(),
    };
    let openssl = if plan.openssl {
        openssl::Openssl::detect()
            .map_err(|note| report.notes.push(note))
            .ok()
    } else {
        None
    };
    report.openssl = openssl.as_ref().map(|o| o.version.clone());
    print_header(&report);

    for section in SECTIONS {
        let algos: Vec<Algo> = plan
            .algos
            .iter()
            .copied()
            .filter(|algo| algo.section() == section)
            .collect();
        if algos.is_empty() {
            continue;
        }
        let mut rows = measure_section(section, &algos, settings)?;
        if let Some(openssl) = &openssl {
            let notes = openssl.compare(section, &algos, settings, &mut rows);
            report.notes.extend(notes);
        }
        println!("\n{}", table::render(section, &rows));
        report.rows.extend(rows);
    }
    report.load_after = Report::load_average();
    if let (Some(before), Some(after)) = (&report.load_before, &report.load_after) {
        println!("load average: {before} before, {after} after");
    }
    if plan.algos.iter().any(|a| {
        matches!(
            a,
            Algo::Rsa2048 | Algo::Rsa3072 | Algo::Rsa4096 | Algo::X25519
        )
    }) {
        report.notes.push(batched::note());
    }
    if plan.algos.iter().any(|a| a.section() == Section::Handshake) {
        report.notes.push(HANDSHAKE_NOTE.to_owned());
    }
    if plan.algos.iter().any(|a| a.section() == Section::CbcVsGcm) {
        report.notes.push(cbc::note(&report.rows));
    }
    Ok(report)
}

fn print_header(report: &Report) {
    let basis = match report.rate_basis {
        Basis::Cpu => "per CPU-second of each measuring thread (like openssl speed)",
        Basis::Wall if report.multi > 1 => {
            "per wall-clock second, summed over the threads (like openssl speed -multi)"
        }
        Basis::Wall => "per wall-clock second (--elapsed)",
    };
    println!("tern speed {}: {}", report.tern_version, report.provider);
    println!(
        "{}s per measurement, {} thread(s){}, rates {basis}",
        report.seconds,
        report.multi,
        if report.cpus.is_empty() {
            String::new()
        } else {
            format!(" on CPUs {:?}", report.cpus)
        }
    );
    match &report.openssl {
        Some(version) => println!("compared with: {version}"),
        None => println!("compared with: nothing (no openssl)"),
    }
}
