//! What will run, decided before anything starts: which targets (after `--only` and the
//! optional ones not installed), which notes the report must carry, and the dry-run listing of
//! every generated configuration and generator command.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::measure::{self, Capabilities, LoadSpec};
use crate::scenario::{Load, Mode, Scenario, TargetKind, Workload};
use crate::targets::{self, Layout, Tools};

/// The targets to run and the notes for the report.
#[derive(Debug, Clone)]
pub struct Plan {
    pub targets: Vec<TargetKind>,
    /// Targets named by the scenario but not run, with the reason.
    pub skipped: Vec<(TargetKind, String)>,
    pub notes: Vec<String>,
}

/// Decides the plan; `only` (comma-separated) keeps some targets of the scenario.
pub fn make(
    scenario: &Scenario,
    tools: &Tools,
    only: Option<&str>,
    caps: Capabilities,
) -> anyhow::Result<Plan> {
    let only = only.map(|list| selected(scenario, list)).transpose()?;
    let mut plan = Plan {
        targets: Vec::new(),
        skipped: Vec::new(),
        notes: Vec::new(),
    };
    for spec in &scenario.targets {
        if only.as_ref().is_some_and(|k| !k.contains(&spec.kind)) {
            plan.skipped
                .push((spec.kind, "not selected (--only)".into()));
        } else if let Some(why) = tools.missing(spec.kind) {
            // Validation already refused a required target that is missing.
            plan.notes.push(format!(
                "{} skipped: {why} (optional in this scenario)",
                spec.kind
            ));
            plan.skipped.push((spec.kind, why));
        } else {
            plan.targets.push(spec.kind);
        }
    }
    if tools.taskset.is_none() {
        plan.notes
            .push("taskset not installed: processes are pinned only by their own settings".into());
    }
    plan.notes.extend(notes(scenario, caps));
    Ok(plan)
}

/// The targets named by `--only a,b`, each of which must be in the scenario.
fn selected(scenario: &Scenario, list: &str) -> anyhow::Result<Vec<TargetKind>> {
    let names: Vec<&str> = scenario.targets.iter().map(|t| t.kind.name()).collect();
    list.split(',')
        .map(|name| match TargetKind::from_name(name) {
            Some(kind) if scenario.targets.iter().any(|t| t.kind == kind) => Ok(kind),
            _ => Err(anyhow::anyhow!(
                "--only {name}: not a target of {} (its targets: {})",
                scenario.file.display(),
                names.join(", ")
            )),
        })
        .collect()
}

/// What the report must say about missing generator features and shared CPUs.
fn notes(scenario: &Scenario, caps: Capabilities) -> Vec<String> {
    let mut notes = Vec::new();
    let uses = |f: fn(&Workload) -> bool| scenario.workloads.iter().any(f);
    if uses(|w| !w.ramp.is_zero()) && !caps.ramp {
        notes.push("this tern bench has no --ramp: ramps became part of the warm-up".into());
    }
    if uses(|w| w.reference.is_some()) && !caps.reference {
        notes.push(
            "this tern bench has no reference probe (--ref-url): reference latencies are pending"
                .into(),
        );
    }
    if uses(|w| w.find_max.is_some()) && !caps.find_max {
        notes.push("this tern bench has no SLO search: find-max is pending, closed-loop rates are reported".into());
    }
    for w in &scenario.workloads {
        if w.target_cpus
            .iter()
            .any(|c| scenario.cpus.client.contains(c))
        {
            notes.push(format!(
                "{}: target CPUs {:?} overlap the client CPUs {:?}: the client competes with the target",
                w.name, w.target_cpus, scenario.cpus.client
            ));
        }
    }
    notes
}

fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s:.1} s")
    }
}

/// One line naming everything that defines a workload.
pub fn settings(w: &Workload, monitor_uri: &str, client_cpus: &[usize]) -> String {
    let proto = w
        .tls
        .map_or_else(|| "plain HTTP".to_owned(), |t| t.describe());
    let conn = match w.requests_per_conn {
        0 => "keep-alive".to_owned(),
        1 => "1 request per connection".to_owned(),
        n => format!("{n} requests per connection"),
    };
    let conn = match w.h2_streams {
        Some(m) => format!("HTTP/2, {m} streams per connection, {conn}"),
        None => conn,
    };
    let load = match w.load {
        Load::Closed { connections } => format!("{connections} connections (closed loop)"),
        Load::Open { rate, connections } => {
            format!("{rate}/s arrivals over at most {connections} connections")
        }
    };
    let proto = match w.mode {
        Mode::Tcp => format!("TCP relay, {proto}"),
        Mode::Http => proto,
    };
    let path = if w.is_monitor(monitor_uri) {
        format!("GET {} (monitor URI, no backend)", w.path)
    } else {
        format!("GET {}", w.path)
    };
    let mut s = format!(
        "{proto}; {path}; {conn}; {load}; {} measured after {} warm-up",
        secs(w.duration),
        secs(w.warmup)
    );
    if !w.ramp.is_zero() {
        s.push_str(&format!(" and {} ramp", secs(w.ramp)));
    }
    s.push_str(&format!(
        "; timeout {}; target CPUs {:?}, client CPUs {:?} ({} thread{}); {} run{}",
        secs(w.timeout),
        w.target_cpus,
        client_cpus,
        w.client_threads,
        if w.client_threads == 1 { "" } else { "s" },
        w.runs,
        if w.runs == 1 { "" } else { "s" }
    ));
    if let Some(f) = &w.find_max {
        s.push_str(&format!(
            "; find-max: no error and no request over {}, {} trials from {}/s to {} resolution, \
             search within {}",
            secs(f.slo_max),
            secs(f.trial),
            f.start_rate,
            f.resolution,
            secs(f.time)
        ));
    }
    if let Some(rate) = w.reference {
        s.push_str(&format!("; reference probe {rate}/s"));
    }
    s
}

/// Prints the plan, each target's configuration for each workload and the generator command,
/// without starting anything. Addresses are placeholders.
pub fn print_dry_run(
    scenario: &Scenario,
    plan: &Plan,
    tools: &Tools,
    caps: Capabilities,
    out: &Path,
) {
    println!(
        "scenario {} ({}): {}",
        scenario.name,
        scenario.file.display(),
        scenario.title
    );
    println!("output folder: {}", out.display());
    println!(
        "targets: {}",
        plan.targets
            .iter()
            .map(|k| k.name())
            .collect::<Vec<_>>()
            .join(", ")
    );
    for (kind, why) in &plan.skipped {
        println!("skipped: {kind}: {why}");
    }
    println!(
        "backends: {} × tern term ({} thread(s), CPUs {:?})",
        scenario.backends, scenario.backend_threads, scenario.cpus.backends
    );
    for note in &plan.notes {
        println!("note: {note}");
    }
    let backends: Vec<SocketAddr> = (0..scenario.backends)
        .map(|i| SocketAddr::from(([127, 0, 0, 1], 9001 + i as u16)))
        .collect();
    for w in &scenario.workloads {
        println!(
            "\n== workload {}: {}",
            w.name,
            settings(w, &scenario.monitor_uri, &scenario.cpus.client)
        );
        for &kind in &plan.targets {
            print_target(scenario, w, kind, tools, &backends, out);
        }
        print_client(scenario, w, caps, &backends);
    }
}

/// One target's generated files and start commands for workload `w`, or why it cannot run it.
fn print_target(
    scenario: &Scenario,
    w: &Workload,
    kind: TargetKind,
    tools: &Tools,
    backends: &[SocketAddr],
    out: &Path,
) {
    if let Some(reason) = targets::client_unsupported(w).or_else(|| targets::unsupported(kind, w)) {
        println!("-- {kind}: n/a: {reason}");
        return;
    }
    let layout = Layout {
        workload: w,
        monitor_uri: &scenario.monitor_uri,
        cpus: &w.target_cpus,
        cert: w
            .tls
            .map(|t| PathBuf::from(format!("../../certs/{}.pem", t.cert.file_stem()))),
        front: SocketAddr::from(([127, 0, 0, 1], 8443)),
        inner: SocketAddr::from(([127, 0, 0, 1], 8444)),
        stats: SocketAddr::from(([127, 0, 0, 1], 8445)),
        backends,
        dir: out
            .join("configs")
            .join(format!("{}-{}-1", w.name, kind.name().replace('+', "-"))),
    };
    let generated = targets::generate(kind, &layout, tools);
    for (name, text) in &generated.files {
        println!("-- {kind}: {name}\n{}", text.trim_end());
    }
    for p in &generated.procs {
        println!(
            "-- {kind}: start: {} {}",
            p.program.display(),
            p.args.join(" ")
        );
    }
}

/// The generator options the measured run (and the SLO search) would get.
fn print_client(scenario: &Scenario, w: &Workload, caps: Capabilities, backends: &[SocketAddr]) {
    let scheme = if w.tls.is_some() { "https" } else { "http" };
    let spec = LoadSpec {
        url: format!("{scheme}://127.0.0.1:8443{}", w.path),
        workload: w,
        client_cpus: &scenario.cpus.client,
        warmup: Duration::ZERO,
        duration: w.duration,
        reference_url: backends.first().map(|b| format!("http://{b}{}", w.path)),
    };
    let (args, pending) = measure::bench_args(&spec, caps);
    println!("-- client (in-process): tern bench {}", args.join(" "));
    if let Err(e) = measure::check_args(&args) {
        println!("-- client options rejected: {e}");
    }
    if let Some(args) = measure::find_max_args(&spec, caps) {
        println!("-- SLO search (in-process): tern bench {}", args.join(" "));
    }
    for p in pending {
        println!("-- pending: {p}");
    }
}
