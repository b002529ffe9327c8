//! `tern speed` tables in a report (seed 002 compares `openssl speed` figures with the system
//! test): the suite runs `tern speed --json FILE ARGS…` as a child process, pinned to the
//! first target CPU, and keeps both its printed table and its JSON. When the subcommand is
//! missing or fails, the report says so instead of failing the whole suite.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::procs;
use crate::results::SpeedResult;

/// The longest `tern speed` may run.
const LIMIT: Duration = Duration::from_secs(900);

/// Runs `tern speed` and collects its output.
pub fn run(tern: &Path, args: &[String], cpus: &[usize], out: &Path) -> SpeedResult {
    let json_path = out.join("speed.json");
    let text_path = out.join("speed.txt");
    let err_path = out.join("logs").join("speed.stderr.log");
    let failed = |error: String| SpeedResult {
        text: String::new(),
        json: None,
        error: Some(error),
    };
    let (Ok(stdout), Ok(stderr)) = (
        std::fs::File::create(&text_path),
        std::fs::File::create(&err_path),
    ) else {
        return failed(format!(
            "cannot create {} or {}",
            text_path.display(),
            err_path.display()
        ));
    };
    let mut cmd = match (crate::targets::which("taskset"), cpus.first()) {
        (Some(taskset), Some(cpu)) => {
            let mut c = Command::new(taskset);
            c.arg("-c").arg(cpu.to_string()).arg(tern);
            c
        }
        _ => Command::new(tern),
    };
    cmd.arg("speed").arg("--json").arg(&json_path).args(args);
    let spawned = cmd
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .spawn();
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => return failed(format!("cannot start tern speed: {e}")),
    };
    let status = wait_bounded(&mut child, LIMIT);
    let text = std::fs::read_to_string(&text_path).unwrap_or_default();
    match status {
        Some(s) if s.success() => SpeedResult {
            text,
            json: std::fs::read_to_string(&json_path)
                .ok()
                .and_then(|j| serde_json::from_str(&j).ok()),
            error: None,
        },
        Some(s) => failed(format!(
            "tern speed is not available in this build or failed ({s}): {}",
            procs::tail(&err_path, 600)
        )),
        None => failed(format!("tern speed did not finish within {LIMIT:?}")),
    }
}

/// Waits for `child` to exit, at most `limit`; kills it past that (`None`).
fn wait_bounded(
    child: &mut std::process::Child,
    limit: Duration,
) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(100)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}
