//! The suite run: check everything, start the backends, then for each workload, each run and
//! each target (interleaved, so slow drifts of a shared machine hit every target alike) measure
//! a fresh target; finally write the reports — also after Ctrl-C or an error, marked partial.

mod backends;
mod env;
mod one;
pub mod plan;
mod target;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::Context as _;

use crate::measure::{self, Capabilities};
use crate::results::{
    CpuInfo, Outcome, RunRecord, ScenarioInfo, SuiteReport, TargetInfo, WorkloadResult,
};
use crate::scenario::{self, Host, Scenario, TargetKind, Workload};
use crate::targets::Tools;
use crate::{report, speed};

/// What `tern bench suite` was asked.
#[derive(Debug, Clone)]
pub struct Options {
    pub scenario: PathBuf,
    pub out: Option<PathBuf>,
    pub only: Option<String>,
    /// Only these workloads (comma-separated names).
    pub workloads: Option<String>,
    /// Runs per workload, instead of the scenario's.
    pub runs: Option<u32>,
    pub dry_run: bool,
    pub quick: f64,
    /// The tern binary to start (`tern run`, `tern term`); default: this executable.
    pub tern: PathBuf,
}

/// Runs a scenario end to end.
pub fn run(opts: &Options) -> anyhow::Result<()> {
    let tools = Tools::discover(opts.tern.clone());
    let caps = measure::capabilities();
    let host = Host {
        cpus: env::allowed_cpus(),
        missing: TargetKind::ALL
            .into_iter()
            .filter_map(|k| tools.missing(k).map(|why| (k, why)))
            .collect(),
        open_loop: caps.rate,
    };
    let mut scenario = scenario::load(&opts.scenario, &host).map_err(|e| anyhow::anyhow!("{e}"))?;
    if let Some(names) = &opts.workloads {
        scenario
            .select_workloads(names)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    if let Some(runs) = opts.runs {
        scenario.set_runs(runs);
    }
    scenario.shorten(opts.quick);
    let plan = plan::make(&scenario, &tools, opts.only.as_deref(), caps)?;
    let out = opts
        .out
        .clone()
        .unwrap_or_else(|| env::default_out(&scenario.name));
    // Absolute, because generated configurations name certificates and pid files by path, and
    // tern resolves relative paths against its configuration file's folder.
    let out = std::env::current_dir()
        .context("cannot read the current folder")?
        .join(out);
    if opts.dry_run {
        plan::print_dry_run(&scenario, &plan, &tools, caps, &out);
        return Ok(());
    }
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let stop = crate::signals::install()?;
    let mut report = new_report(&scenario, &plan, &tools, opts.quick);
    let result = execute(&scenario, &plan, &tools, caps, &out, &stop, &mut report);
    finish(report, result, stop.load(Ordering::SeqCst), &out)
}

/// Writes the reports (partial ones too) and turns failed measurements into an error.
fn finish(
    mut report: SuiteReport,
    result: anyhow::Result<()>,
    interrupted: bool,
    out: &Path,
) -> anyhow::Result<()> {
    report.scenario.finished = env::now_rfc3339();
    report.machine.load_average_end = env::load_average();
    report.scenario.partial = interrupted || result.is_err();
    if interrupted {
        report
            .notes
            .push("interrupted (Ctrl-C): the report holds the measurements made until then".into());
    }
    if let Err(e) = &result {
        report.notes.push(format!("stopped by an error: {e:#}"));
    }
    report::write_all(&report, out)?;
    for name in ["report.md", "report.html", "report.json"] {
        println!("report: {}", out.join(name).display());
    }
    result?;
    if interrupted {
        anyhow::bail!("interrupted: the report in {} is partial", out.display());
    }
    let failed: Vec<String> = report
        .workloads
        .iter()
        .flat_map(|w| w.runs.iter().map(move |r| (w, r)))
        .filter_map(|(w, r)| match &r.outcome {
            Outcome::Failed { error } => {
                Some(format!("{} / {} run {}: {error}", w.name, r.target, r.run))
            }
            _ => None,
        })
        .collect();
    if !failed.is_empty() {
        anyhow::bail!(
            "{} measurement(s) failed:\n{}",
            failed.len(),
            failed.join("\n")
        );
    }
    Ok(())
}

fn new_report(scenario: &Scenario, plan: &plan::Plan, tools: &Tools, quick: f64) -> SuiteReport {
    let kinds: Vec<TargetKind> = scenario.targets.iter().map(|t| t.kind).collect();
    let mut targets: Vec<TargetInfo> = plan
        .targets
        .iter()
        .map(|k| TargetInfo {
            name: k.name().to_owned(),
            skipped: None,
        })
        .collect();
    targets.extend(plan.skipped.iter().map(|(k, why)| TargetInfo {
        name: k.name().to_owned(),
        skipped: Some(why.clone()),
    }));
    SuiteReport {
        scenario: ScenarioInfo {
            name: scenario.name.clone(),
            title: scenario.title.clone(),
            about: scenario.about.clone(),
            file: scenario.file.display().to_string(),
            quick: if quick > 1.0 { quick } else { 1.0 },
            started: env::now_rfc3339(),
            finished: String::new(),
            partial: false,
            cpus: CpuInfo {
                target: scenario.cpus.target.clone(),
                client: scenario.cpus.client.clone(),
                backends: scenario.cpus.backends.clone(),
            },
            backends: scenario.backends,
            monitor_uri: scenario.monitor_uri.clone(),
        },
        machine: env::machine(),
        versions: env::versions(tools, &kinds),
        targets,
        workloads: Vec::new(),
        speed: None,
        notes: plan.notes.clone(),
    }
}

/// Every run of `w`, targets interleaved within each run and their order reversed every
/// other run; a target that cannot do the workload is recorded once. Stops early (keeping
/// what was measured) on Ctrl-C.
fn measure_workload(
    cx: &one::Context<'_>,
    w: &Workload,
    targets: &[TargetKind],
    result: &mut WorkloadResult,
) {
    for run in 1..=w.runs {
        for kind in run_order(targets, run) {
            if cx.stop.load(Ordering::SeqCst) {
                return;
            }
            let na = |r: &RunRecord| {
                r.target == kind.name() && matches!(r.outcome, Outcome::NotApplicable { .. })
            };
            if result.runs.iter().any(na) {
                continue;
            }
            let mut outcome = one::measure(cx, w, kind, run);
            if cx.stop.load(Ordering::SeqCst) {
                outcome = Outcome::Failed {
                    error: "interrupted (Ctrl-C) during this measurement: discarded".into(),
                };
            }
            let line = report::summary_line(&outcome, w.per_connection());
            println!("  run {run}/{} {kind}: {line}", w.runs);
            result.runs.push(RunRecord {
                target: kind.name().to_owned(),
                run,
                outcome,
            });
        }
    }
}

/// The order of the targets in run `run` (from 1): as listed in odd runs, reversed in even
/// ones (ABBA over two runs), so that neither being measured first after a workload's start
/// nor right after another target's load favours one target in every run.
fn run_order(targets: &[TargetKind], run: u32) -> Vec<TargetKind> {
    let mut order = targets.to_vec();
    if run % 2 == 0 {
        order.reverse();
    }
    order
}

fn execute(
    scenario: &Scenario,
    plan: &plan::Plan,
    tools: &Tools,
    caps: Capabilities,
    out: &Path,
    stop: &Arc<AtomicBool>,
    report: &mut SuiteReport,
) -> anyhow::Result<()> {
    let certs = env::write_certs(scenario, &out.join("certs"))?;
    std::fs::write(out.join(".gitignore"), "certs/\nlogs/\n").context("cannot write .gitignore")?;
    let logs = out.join("logs");
    let (backend_children, backends) = backends::start(scenario, tools, &logs)?;
    let cx = one::Context {
        scenario,
        tools,
        caps,
        certs: &certs,
        backends: &backends,
        out,
        stop,
    };
    for (i, w) in scenario.workloads.iter().enumerate() {
        let settings = plan::settings(w, &scenario.monitor_uri, &scenario.cpus.client);
        println!(
            "workload {}/{} {}: {settings}",
            i + 1,
            scenario.workloads.len(),
            w.name
        );
        let unit = if w.per_connection() {
            "conn/s"
        } else {
            "req/s"
        };
        let mut result = WorkloadResult {
            name: w.name.clone(),
            about: w.about.clone(),
            settings,
            unit: unit.into(),
            response_bytes: w.response_bytes,
            runs: Vec::new(),
        };
        measure_workload(&cx, w, &plan.targets, &mut result);
        report.workloads.push(result);
        if stop.load(Ordering::SeqCst) {
            break;
        }
    }
    for child in backend_children {
        child.stop();
    }
    if let (Some(args), false) = (&scenario.speed, stop.load(Ordering::SeqCst)) {
        println!("tern speed {}", args.join(" "));
        report.speed = Some(speed::run(&tools.tern, args, &scenario.cpus.target, out));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
