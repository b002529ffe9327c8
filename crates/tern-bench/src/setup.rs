//! Turns the options into the plans the threads run, and the threads' results into a
//! [`Report`] with its settings and verdict.

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::Instant;

use crate::args::{value_name, BenchArgs, Target, TlsEngine, TlsVersion};
use crate::engine::{Collected, Setup};
use crate::http2::H2Plan;
use crate::plan::{Control, Load, Plan, Timeline};
use crate::report::{cpu_capacity, Report, Settings};
use crate::system::System;
use crate::tls::ClientTls;
use crate::worker::Share;
use crate::{http1, validity, BenchError};

/// Connections the reference probe may open (it keeps them alive; more only if one is slow).
const PROBE_CONNECTIONS: u32 = 4;

/// A run ready to start.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub setup: Setup,
    pub capacity: f64,
}

/// Resolves the targets, builds the TLS configurations and the plans; the timeline starts now.
pub(crate) fn prepare(args: &BenchArgs) -> Result<Prepared, BenchError> {
    let target = &args.url;
    if args.resume.is_some() && !target.tls {
        return Err(BenchError::Options(
            "--resume needs an https:// URL".to_owned(),
        ));
    }
    check_h2(args)?;
    let sni = args.sni.as_deref().unwrap_or(&target.host);
    let main = endpoint(args, target, sni, true)?;
    let probe = match &args.ref_url {
        Some(r) => Some(endpoint(args, r, &r.host, false)?),
        None => None,
    };
    let start = Start {
        timeline: Timeline::new(Instant::now(), args.ramp, args.warmup, args.duration),
        control: Arc::new(Control::new()),
    };
    let load = match args.rate {
        Some(rate) => Load::Open { rate },
        None => Load::Closed,
    };
    let mut main = start.plan(args, main, load, args.requests_per_conn);
    if args.h2 {
        let h2 = H2Plan::new(target, args.streams)
            .ok_or_else(|| BenchError::Options(format!("--h2: {target} is not a valid URI")))?;
        main.h2 = Some(Arc::new(h2));
    }
    let threads = args.threads.min(args.connections);
    let cpus = args.cpus.as_ref().map(|c| c.0.clone()).unwrap_or_default();
    let shares = shares(args.connections, threads, &cpus);
    let probe = probe.map(|endpoint| {
        let load = Load::Open {
            rate: args.ref_rate,
        };
        let share = Share {
            index: 0,
            of: 1,
            connections: PROBE_CONNECTIONS,
            cpu: args.ref_cpu,
        };
        (Arc::new(start.plan(args, endpoint, load, 0)), share)
    });
    let capacity = cpu_capacity(threads, &cpus, crate::system::available_cpus());
    Ok(Prepared {
        setup: Setup {
            main: (Arc::new(main), shares),
            probe,
            capacity,
        },
        capacity,
    })
}

/// `--h2` drives a closed loop and needs h2 among the ALPN protocols offered.
fn check_h2(args: &BenchArgs) -> Result<(), BenchError> {
    if !args.h2 {
        return Ok(());
    }
    let refuse = |why: &str| Err(BenchError::Options(format!("--h2 {why}")));
    if args.rate.is_some() || args.slo.find_max {
        return refuse("has no open loop yet: use -c and -m, not --rate or --find-max");
    }
    if args.url.tls && !args.offered_alpn().iter().any(|p| p == "h2") {
        return refuse("needs h2 among the --alpn protocols");
    }
    Ok(())
}

/// Where one stream of load goes.
struct Endpoint<'a> {
    target: &'a Target,
    addr: SocketAddr,
    tls: Option<ClientTls>,
    /// Whether `--resume` applies (not to the reference probe).
    resumption: bool,
}

fn endpoint<'a>(
    args: &BenchArgs,
    target: &'a Target,
    sni: &str,
    main: bool,
) -> Result<Endpoint<'a>, BenchError> {
    let tls = match target.tls {
        true => Some(ClientTls::new(args, sni, main)?),
        false => None,
    };
    Ok(Endpoint {
        target,
        addr: resolve(&target.host, target.port)?,
        tls,
        resumption: main && args.resume.is_some(),
    })
}

/// What every plan of a run shares.
struct Start {
    timeline: Timeline,
    control: Arc<Control>,
}

impl Start {
    fn plan(&self, args: &BenchArgs, to: Endpoint<'_>, load: Load, per_conn: u64) -> Plan {
        Plan {
            addr: to.addr,
            tls: to.tls,
            keep_alive_request: http1::request(to.target, false),
            close_request: http1::request(to.target, true),
            requests_per_conn: per_conn,
            timeout: args.timeout,
            load,
            timeline: self.timeline,
            control: self.control.clone(),
            resumption: to.resumption,
            h2: None,
        }
    }
}

/// Thread `i` of `threads` gets an even share of `connections` and CPU `cpus[i mod n]`.
fn shares(connections: u32, threads: u32, cpus: &[usize]) -> Vec<Share> {
    (0..threads)
        .map(|i| Share {
            index: i,
            of: threads,
            connections: connections / threads + u32::from(i < connections % threads),
            cpu: (!cpus.is_empty()).then(|| cpus[i as usize % cpus.len()]),
        })
        .collect()
}

fn resolve(host: &str, port: u16) -> Result<SocketAddr, BenchError> {
    let failed = |reason: String| BenchError::Resolve {
        host: format!("{host}:{port}"),
        reason,
    };
    (host, port)
        .to_socket_addrs()
        .map_err(|e| failed(e.to_string()))?
        .next()
        .ok_or_else(|| failed("no addresses".to_owned()))
}

/// The report of a finished (or stopped) run.
pub(crate) fn report(args: &BenchArgs, capacity: f64, collected: Collected) -> Report {
    let mut report = Report {
        settings: settings(args),
        stats: collected.stats,
        cpu: collected.cpu,
        reference: collected.reference,
        cpu_per_second: collected.cpu_per_second,
        cpu_capacity: capacity,
        measured: collected.measured,
        partial: collected.stopped_early,
        system: System::current(),
        validity: validity::Validity::default(),
    };
    report.validity = validity::check(&report);
    report
}

fn settings(args: &BenchArgs) -> Settings {
    let target = &args.url;
    let verify = match (target.tls, &args.cacert, args.no_signature_check) {
        (false, _, _) => "none",
        (true, Some(_), _) => "verified against --cacert",
        (true, None, false) => "not verified (handshake signatures checked)",
        (true, None, true) => "not verified (handshake signatures not checked either)",
    };
    let tls_version = args.tls_version.map_or("1.3,1.2", TlsVersion::name);
    Settings {
        target: target.to_string(),
        connections: args.connections,
        streams: args.h2.then_some(args.streams),
        requests_per_conn: args.requests_per_conn,
        threads: args.threads.min(args.connections),
        cpus: args.cpus.as_ref().map(|c| c.0.clone()).unwrap_or_default(),
        duration: args.duration,
        warmup: args.warmup,
        timeout: args.timeout,
        verify,
        rate: args.rate,
        ramp: args.ramp,
        engine: args.tls_engine.name(),
        tls_version: tls_version.to_owned(),
        groups: args.groups.iter().map(value_name).collect(),
        // OpenSSL makes a fresh key pair per handshake.
        key_share_reuse: match args.tls_engine {
            TlsEngine::Rustls => args.key_share_reuse,
            TlsEngine::Openssl => 1,
        },
        ciphers: args.ciphers.clone(),
        sigalgs: args.sigalgs.iter().map(value_name).collect(),
        alpn: args.offered_alpn(),
        sni: target
            .tls
            .then(|| args.sni.clone().unwrap_or_else(|| target.host.clone())),
        resume: args.resume.map(|m| m.name()),
        resume_ratio: args.resume_share(),
        reference: args
            .ref_url
            .as_ref()
            .map(|r| (r.to_string(), args.ref_rate)),
    }
}
