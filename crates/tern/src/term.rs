//! `tern term`: the test backend, run until a stop signal.

use std::io::Write;

use anyhow::Context;
use tern_config::{CertSource, TlsSettings};
use tern_term::TermOptions;

use crate::cli::TermArgs;
use crate::signals::StopSignals;

pub fn main(args: &TermArgs) -> anyhow::Result<()> {
    let tls = match &args.tls_cert {
        Some(path) => {
            let settings = TlsSettings::new(vec![CertSource::Combined(path.clone())]);
            Some(tern_tls::server_config(&settings).context("--tls-cert")?)
        }
        None => None,
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
    let signals = StopSignals::install()?;
    let handle = tern_term::start(TermOptions {
        listen: args.listen.clone(),
        tls,
        threads: usize::from(args.threads),
        name: args.name.clone(),
        cpus: args.cpus.clone(),
        accept_proxy: args.accept_proxy,
    })
    .context("start-up refused")?;
    {
        let mut out = std::io::stdout().lock();
        for addr in handle.local_addrs() {
            writeln!(out, "listening: term {scheme}://{addr}")?;
        }
        writeln!(out, "ready: {} threads", args.threads)?;
        out.flush()?;
    }
    signals.wait();
    let stats = handle.stats();
    handle.shutdown();
    println!(
        "stats: term connections={} requests={} bytes_sent={} tls_full={} tls_resumed={} \
         tls_failures={} http2={}",
        stats.connections,
        stats.requests,
        stats.bytes_sent,
        stats.tls_full,
        stats.tls_resumed,
        stats.tls_failures,
        stats.http2
    );
    Ok(())
}
