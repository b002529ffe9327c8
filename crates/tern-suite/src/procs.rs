//! Child processes: start pinned, wait for readiness, read their CPU time, stop them for sure.
//!
//! Every child gets its own process group, so stopping it stops what it forked too (nginx
//! workers, hitch workers) and a Ctrl-C on the terminal reaches only the suite, which then stops
//! the children itself and still writes the partial report. Each started group is recorded in a
//! process-wide list until it is stopped: dropping a [`Child`] kills its group, and the signal
//! handler kills every recorded group when the user insists (second Ctrl-C). A child cannot
//! outlive the suite unless the suite itself is killed with SIGKILL.
//!
//! CPU time is utime + stime from `/proc/PID/stat` summed over the process tree (a process's
//! line already includes all its threads), plus the `cutime`/`cstime` of children it reaped.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read as _, Seek, SeekFrom};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

use crate::targets::{ProcSpec, Ready};

/// How long a process may take to become ready.
pub const READY_LIMIT: Duration = Duration::from_secs(20);
/// How long a stopped process may take to exit before it is killed.
pub const STOP_GRACE: Duration = Duration::from_secs(5);
/// Clock ticks per second in `/proc/PID/stat` (USER_HZ, 100 on every Linux user ABI).
const TICKS_PER_SEC: u64 = 100;

/// Process groups started and not yet stopped.
static LIVE_GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// Why a child could not be started or did not become ready.
#[derive(Debug, thiserror::Error)]
pub enum ProcError {
    #[error("{name}: cannot start {program}: {source}")]
    Spawn {
        name: String,
        program: String,
        source: std::io::Error,
    },
    #[error("{name} exited during start-up ({status}); its stderr ends with:\n{stderr}")]
    Exited {
        name: String,
        status: ExitStatus,
        stderr: String,
    },
    #[error("{name} was not ready after {limit:?} ({what}); its stderr ends with:\n{stderr}")]
    NotReady {
        name: String,
        what: String,
        limit: Duration,
        stderr: String,
    },
}

/// A started process (and, through its group, whatever it forks).
#[derive(Debug)]
pub struct Child {
    /// Label in messages: the target or backend name and the program ("haproxy (stunnel+haproxy)").
    pub name: String,
    child: Option<std::process::Child>,
    lines: Receiver<String>,
    /// Stdout lines read so far.
    pub seen: Vec<String>,
    stderr: PathBuf,
}

impl Child {
    /// Starts `spec` in a new process group, stdout piped, stderr to `log`.
    pub fn spawn(name: String, spec: &ProcSpec, log: &Path) -> Result<Self, ProcError> {
        let spawn_error = |source| ProcError::Spawn {
            name: name.clone(),
            program: spec.program.display().to_string(),
            source,
        };
        let stderr = std::fs::File::create(log).map_err(spawn_error)?;
        let mut command = Command::new(&spec.program);
        if let Some(dir) = &spec.cwd {
            command.current_dir(dir);
        }
        let mut child = command
            .args(&spec.args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .process_group(0)
            .spawn()
            .map_err(spawn_error)?;
        if let Ok(pid) = i32::try_from(child.id()) {
            lock_groups().push(pid);
        }
        let (tx, rx) = mpsc::channel();
        if let Some(stdout) = child.stdout.take() {
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
        }
        Ok(Self {
            name,
            child: Some(child),
            lines: rx,
            seen: Vec::new(),
            stderr: log.to_path_buf(),
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, std::process::Child::id)
    }

    /// Waits until the child is ready (a stdout line, or its port accepts), bounded by `limit`.
    pub fn wait_ready(&mut self, ready: &Ready, limit: Duration) -> Result<(), ProcError> {
        let deadline = Instant::now() + limit;
        loop {
            self.check_alive()?;
            match ready {
                Ready::Line(prefix) => {
                    let wait = deadline
                        .saturating_duration_since(Instant::now())
                        .min(Duration::from_millis(100));
                    if let Ok(line) = self.lines.recv_timeout(wait) {
                        let found = line.starts_with(prefix);
                        self.seen.push(line);
                        if found {
                            return Ok(());
                        }
                    }
                }
                Ready::Port(addr) => {
                    if TcpStream::connect_timeout(addr, Duration::from_millis(200)).is_ok() {
                        return Ok(());
                    }
                    // Polling a port with a bound, not a sleep standing in for readiness.
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
            if Instant::now() >= deadline {
                let what = match ready {
                    Ready::Line(prefix) => format!("no stdout line starting with {prefix:?}"),
                    Ready::Port(addr) => format!("nothing accepts connections on {addr}"),
                };
                return Err(ProcError::NotReady {
                    name: self.name.clone(),
                    what,
                    limit,
                    stderr: self.stderr_tail(2048),
                });
            }
        }
    }

    fn check_alive(&mut self) -> Result<(), ProcError> {
        let Some(child) = self.child.as_mut() else {
            return Ok(());
        };
        match child.try_wait() {
            Ok(Some(status)) => Err(ProcError::Exited {
                name: self.name.clone(),
                status,
                stderr: self.stderr_tail(2048),
            }),
            _ => Ok(()),
        }
    }

    /// Addresses from `listening: NAME SCHEME://ADDR` lines seen so far (tern, tern term).
    pub fn listening(&self) -> Vec<SocketAddr> {
        self.seen
            .iter()
            .filter_map(|l| l.strip_prefix("listening: "))
            .filter_map(|rest| {
                rest.split_whitespace()
                    .nth(1)?
                    .split_once("://")?
                    .1
                    .parse()
                    .ok()
            })
            .collect()
    }

    /// The last `max` bytes of the child's stderr.
    pub fn stderr_tail(&self, max: u64) -> String {
        tail(&self.stderr, max)
    }

    /// SIGTERM to the group, a bounded wait, then SIGKILL; returns the stdout lines seen.
    pub fn stop(mut self) -> Vec<String> {
        self.stop_inner(STOP_GRACE);
        while let Ok(line) = self.lines.recv_timeout(Duration::from_millis(500)) {
            self.seen.push(line);
        }
        std::mem::take(&mut self.seen)
    }

    fn stop_inner(&mut self, grace: Duration) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let pgid = i32::try_from(child.id()).unwrap_or(0);
        if pgid > 0 {
            let _ = killpg(Pid::from_raw(pgid), Signal::SIGTERM);
        }
        let deadline = Instant::now() + grace;
        let exited = loop {
            match child.try_wait() {
                Ok(Some(_)) | Err(_) => break true,
                Ok(None) if Instant::now() >= deadline => break false,
                Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            }
        };
        if pgid > 0 {
            // Forked workers may outlive their parent's exit: the group is killed either way.
            let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
            lock_groups().retain(|&g| g != pgid);
        }
        if !exited {
            let _ = child.kill();
        }
        let _ = child.wait();
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        self.stop_inner(Duration::ZERO);
    }
}

fn lock_groups() -> std::sync::MutexGuard<'static, Vec<i32>> {
    // A poisoned list is still a list of groups to kill.
    LIVE_GROUPS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Kills every process group started and not yet stopped (the second Ctrl-C).
pub fn kill_all_groups() {
    for pgid in lock_groups().drain(..) {
        let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
    }
}

/// The last `max` bytes of a file, lossily decoded.
pub fn tail(path: &Path, max: u64) -> String {
    let Ok(mut file) = std::fs::File::open(path) else {
        return String::new();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = file.seek(SeekFrom::Start(len.saturating_sub(max)));
    let mut bytes = Vec::new();
    let _ = file.read_to_end(&mut bytes);
    String::from_utf8_lossy(&bytes).trim_end().to_owned()
}

/// A loopback port free right now. Another process could take it before the target binds it;
/// the target then fails to start and says so (port in use), which the suite reports.
pub fn free_port() -> std::io::Result<SocketAddr> {
    TcpListener::bind("127.0.0.1:0")?.local_addr()
}

/// One `/proc/PID/stat` line: (pid, ppid, own CPU, reaped children's CPU) in clock ticks.
pub fn parse_stat(stat: &str) -> Option<(u32, u32, u64, u64)> {
    let pid = stat.split_whitespace().next()?.parse().ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after_name.split_ascii_whitespace().collect();
    // After the name: state(0) ppid(1) … utime(11) stime(12) cutime(13) cstime(14).
    let num = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok());
    let ppid = fields.get(1)?.parse().ok()?;
    Some((pid, ppid, num(11)? + num(12)?, num(13)? + num(14)?))
}

/// CPU time of the processes `roots` and all their descendants; `None` if a root is gone.
pub fn tree_cpu(roots: &[u32]) -> Option<Duration> {
    let mut own = HashMap::new();
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue; // exited meanwhile
        };
        if let Some((pid, ppid, cpu, reaped)) = parse_stat(&stat) {
            own.insert(pid, cpu + reaped);
            children.entry(ppid).or_default().push(pid);
        }
    }
    let mut ticks = 0;
    let mut stack: Vec<u32> = roots.to_vec();
    if roots.iter().any(|r| !own.contains_key(r)) {
        return None;
    }
    while let Some(pid) = stack.pop() {
        ticks += own.get(&pid).copied().unwrap_or(0);
        stack.extend(children.get(&pid).into_iter().flatten());
    }
    Some(Duration::from_millis(ticks * (1000 / TICKS_PER_SEC)))
}

#[cfg(test)]
mod tests;
