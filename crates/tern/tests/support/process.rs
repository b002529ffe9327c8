//! Spawning `tern run`, `tern term` and `tern demo`, waiting for readiness, stopping them.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

/// How long a process may take to print its ready line.
const READY_TIMEOUT: Duration = Duration::from_secs(20);

pub fn tern_bin() -> &'static str {
    env!("CARGO_BIN_EXE_tern")
}

/// A fresh directory under the system temp dir, unique per call.
pub fn temp_dir(tag: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("tern-it-{}-{tag}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A running child process with its stdout lines arriving on a channel.
pub struct Proc {
    child: Option<Child>,
    lines: Receiver<String>,
    /// Lines seen so far.
    pub seen: Vec<String>,
    stderr: PathBuf,
}

impl Proc {
    /// Spawns `tern ARGS...` with stderr captured to a file in `dir`.
    pub fn spawn(args: &[&str], dir: &Path) -> Proc {
        Proc::spawn_env(args, dir, &[])
    }

    /// [`Proc::spawn`] with these environment variables set.
    pub fn spawn_env(args: &[&str], dir: &Path, env: &[(&str, &str)]) -> Proc {
        let mut cmd = Command::new(tern_bin());
        cmd.args(args).envs(env.iter().copied());
        Proc::spawn_command(cmd, args, dir)
    }

    /// [`Proc::spawn`] with at most `nofile` file descriptors (`ulimit -n` in a shell that then
    /// becomes tern, so the process is tern's own).
    pub fn spawn_nofile(args: &[&str], dir: &Path, nofile: u64) -> Proc {
        let mut cmd = Command::new("sh");
        let script = format!("ulimit -n {nofile} && exec \"$0\" \"$@\"");
        cmd.args(["-c", &script, tern_bin()]).args(args);
        Proc::spawn_command(cmd, args, dir)
    }

    /// Spawns `cmd` (whose arguments for tern are `args`, naming the stderr file).
    pub fn spawn_command(mut cmd: Command, args: &[&str], dir: &Path) -> Proc {
        let stderr = dir.join(format!(
            "stderr-{}.log",
            args.first().copied().unwrap_or("x")
        ));
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .expect("spawn tern");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Proc {
            child: Some(child),
            lines: rx,
            seen: Vec::new(),
            stderr,
        }
    }

    /// Waits for a stdout line starting with `prefix`; panics with stderr on timeout or exit.
    pub fn wait_line(&mut self, prefix: &str) -> String {
        let deadline = std::time::Instant::now() + READY_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if line.starts_with(prefix) {
                        return line;
                    }
                }
                Err(_) => panic!(
                    "no line starting with {prefix:?}; stdout so far: {:?}; stderr: {}",
                    self.seen,
                    self.stderr_text()
                ),
            }
        }
    }

    /// Addresses from the `listening:` lines seen so far, in order, with their scheme.
    pub fn listening(&self) -> Vec<(String, SocketAddr)> {
        listening_in(&self.seen)
    }

    /// How many threads of the process have a name starting with `prefix`.
    pub fn threads_named(&self, prefix: &str) -> usize {
        std::fs::read_dir(format!("/proc/{}/task", self.pid()))
            .unwrap()
            .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
            .filter(|comm| comm.starts_with(prefix))
            .count()
    }

    pub fn stderr_text(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().map(|c| c.id()).unwrap_or(0)
    }

    /// Sends a signal by name (TERM, INT, HUP).
    pub fn signal(&self, sig: &str) {
        use nix::sys::signal::{kill, Signal};
        let signal: Signal = format!("SIG{sig}").parse().expect("signal name");
        let pid = nix::unistd::Pid::from_raw(i32::try_from(self.pid()).expect("pid"));
        kill(pid, signal).expect("kill");
    }

    /// Sends SIGTERM, waits for exit (bounded), and returns the exit status and every stdout line.
    pub fn stop(mut self) -> (ExitStatus, Vec<String>) {
        self.signal("TERM");
        let status = self.wait_exit(Duration::from_secs(15));
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(2)) {
            self.seen.push(line);
        }
        (status, std::mem::take(&mut self.seen))
    }

    /// Waits for the process to exit by itself (bounded); panics on timeout.
    pub fn wait_exit(&mut self, limit: Duration) -> ExitStatus {
        let child = self.child.as_mut().unwrap();
        let deadline = std::time::Instant::now() + limit;
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                return status;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "process did not exit: {}",
                self.stderr_text()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Addresses from the `listening:` lines among `lines`, in order, with their scheme.
fn listening_in(lines: &[String]) -> Vec<(String, SocketAddr)> {
    lines
        .iter()
        .filter_map(|l| l.strip_prefix("listening: "))
        .filter_map(|rest| {
            let url = rest.split_whitespace().nth(1)?;
            let (scheme, addr) = url.split_once("://")?;
            Some((scheme.to_owned(), addr.parse().ok()?))
        })
        .collect()
}

/// A `tern term` backend.
pub struct Term {
    pub proc: Proc,
    pub addr: SocketAddr,
    pub name: String,
}

impl Term {
    pub fn start(name: &str) -> Term {
        Term::start_with(name, &[])
    }

    pub fn start_with(name: &str, extra: &[&str]) -> Term {
        let dir = temp_dir(&format!("term-{name}"));
        let mut args = vec!["term", "--listen", "127.0.0.1:0", "--name", name];
        args.extend_from_slice(extra);
        let mut proc = Proc::spawn(&args, &dir);
        proc.wait_line("ready:");
        let addr = proc.listening()[0].1;
        Term {
            proc,
            addr,
            name: name.to_owned(),
        }
    }
}

/// A `tern run` process.
pub struct Tern {
    pub proc: Proc,
    pub dir: PathBuf,
    /// (scheme, address) of every bind, in configuration order.
    pub binds: Vec<(String, SocketAddr)>,
}

impl Tern {
    /// Writes `toml` to a config file in a fresh directory (where `certs` also go) and runs it.
    pub fn run(toml: &str) -> Tern {
        Tern::run_in(temp_dir("run"), toml)
    }

    pub fn run_in(dir: PathBuf, toml: &str) -> Tern {
        Tern::run_with(dir, toml, &[])
    }

    /// As `run_in`, with `extra` arguments for `tern run` (`--log-level debug`).
    pub fn run_with(dir: PathBuf, toml: &str, extra: &[&str]) -> Tern {
        let path = dir.join("tern.toml");
        std::fs::write(&path, toml).unwrap();
        let mut args = vec!["run", "-c", path.to_str().unwrap()];
        args.extend_from_slice(extra);
        let mut proc = Proc::spawn(&args, &dir);
        proc.wait_line("ready:");
        let binds = proc.listening();
        Tern { proc, dir, binds }
    }

    /// Runs tern on `text` written to `dir/name`: the file's extension picks the syntax
    /// (`.cfg` is HAProxy's, anything else TOML).
    pub fn run_file(dir: &Path, name: &str, text: &str) -> Tern {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let mut proc = Proc::spawn(&["run", "-c", path.to_str().unwrap()], dir);
        proc.wait_line("ready:");
        let binds = proc.listening();
        Tern {
            proc,
            dir: dir.to_owned(),
            binds,
        }
    }

    /// [`Tern::run_in`] with these environment variables set.
    pub fn run_env(dir: PathBuf, toml: &str, env: &[(&str, &str)]) -> Tern {
        let path = dir.join("tern.toml");
        std::fs::write(&path, toml).unwrap();
        let mut proc = Proc::spawn_env(&["run", "-c", path.to_str().unwrap()], &dir, env);
        proc.wait_line("ready:");
        let binds = proc.listening();
        Tern { proc, dir, binds }
    }

    /// Writes `toml` as the configuration file and sends SIGHUP; waits for the `reloaded:` line
    /// and returns the addresses the new generation listens on.
    pub fn reload(&mut self, toml: &str) -> Vec<(String, SocketAddr)> {
        std::fs::write(self.dir.join("tern.toml"), toml).unwrap();
        let before = self.proc.seen.len();
        self.proc.signal("HUP");
        self.proc.wait_line("reloaded:");
        listening_in(&self.proc.seen[before..])
    }

    /// The address of the first bind of frontend `name` (its `listening:` line).
    pub fn bind_of(&self, name: &str) -> SocketAddr {
        let prefix = format!("listening: {name} ");
        let line = self.proc.seen.iter().find(|l| l.starts_with(&prefix));
        let line = line.unwrap_or_else(|| panic!("no bind of {name}: {:?}", self.proc.seen));
        listening_in(std::slice::from_ref(line))[0].1
    }

    /// [`Tern::run_in`] with at most `nofile` file descriptors.
    pub fn run_nofile(dir: PathBuf, toml: &str, nofile: u64) -> Tern {
        let path = dir.join("tern.toml");
        std::fs::write(&path, toml).unwrap();
        let mut proc = Proc::spawn_nofile(&["run", "-c", path.to_str().unwrap()], &dir, nofile);
        proc.wait_line("ready:");
        let binds = proc.listening();
        Tern { proc, dir, binds }
    }

    /// How many file descriptors tern has open.
    pub fn open_fds(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.proc.pid()))
            .map(|d| d.count())
            .unwrap_or(0)
    }

    /// The first bind's address.
    pub fn addr(&self) -> SocketAddr {
        self.binds[0].1
    }

    /// Whether bind `i` is TLS.
    pub fn is_tls(&self, i: usize) -> bool {
        self.binds[i].0 == "https"
    }

    /// Stops tern gracefully and returns its exit counters.
    pub fn stop(self) -> Counters {
        let (status, lines) = self.proc.stop();
        assert!(status.success(), "tern exited with {status}");
        Counters::parse(&lines)
    }
}

/// The `stats:` lines tern prints at exit: `counters["frontend web"]["requests"]`.
#[derive(Debug, Default)]
pub struct Counters(pub HashMap<String, HashMap<String, u64>>);

impl Counters {
    pub fn parse(lines: &[String]) -> Counters {
        let mut map = HashMap::new();
        for line in lines {
            let Some(rest) = line.strip_prefix("stats: ") else {
                continue;
            };
            let mut words = rest.split_whitespace();
            let (Some(kind), Some(name)) = (words.next(), words.next()) else {
                continue;
            };
            let fields = words
                .filter_map(|w| w.split_once('='))
                .filter_map(|(k, v)| Some((k.to_owned(), v.parse().ok()?)))
                .collect();
            map.insert(format!("{kind} {name}"), fields);
        }
        Counters(map)
    }

    /// `get("frontend web", "requests")`; panics with the whole map if absent.
    pub fn get(&self, section: &str, key: &str) -> u64 {
        self.0
            .get(section)
            .and_then(|s| s.get(key))
            .copied()
            .unwrap_or_else(|| panic!("no counter {section}/{key} in {:?}", self.0))
    }
}

/// Runs `tern ARGS` to completion (bounded) and returns (exit code, stdout, stderr).
pub fn tern_output(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(tern_bin())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

// ---- Helpers for the proxying, balancing, timeouts, bad_input and limits tests ----

impl Term {
    /// Stops the term and returns the counters of its `stats: term ...` exit line
    /// (`connections`, `requests`, `bytes_sent`).
    pub fn stop_counters(self) -> HashMap<String, u64> {
        let (_, lines) = self.proc.stop();
        let line = lines
            .iter()
            .find_map(|l| l.strip_prefix("stats: term "))
            .unwrap_or_else(|| panic!("no `stats: term` line in {lines:?}"))
            .to_owned();
        line.split_whitespace()
            .filter_map(|w| w.split_once('='))
            .filter_map(|(k, v)| Some((k.to_owned(), v.parse().ok()?)))
            .collect()
    }
}

impl Tern {
    /// Like [`Tern::stop`], and also asserts that tern's stderr shows no panic.
    pub fn stop_clean(self) -> Counters {
        let stderr = self.proc.stderr.clone();
        let counters = self.stop();
        let text = std::fs::read_to_string(&stderr).unwrap_or_default();
        assert!(!text.contains("panicked"), "tern panicked; stderr:\n{text}");
        counters
    }

    /// A `/proc/PID/status` field in kB, e.g. `VmRSS` (current) or `VmHWM` (peak resident set).
    pub fn proc_status_kb(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.proc.pid())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or_else(|| panic!("no {field} in /proc status"))
    }
}

// ---- Helpers for the cli, tls, config_check, startup and demo tests ----

/// What a finished `tern` invocation produced.
#[derive(Debug)]
pub struct Finished {
    /// Exit code; `None` when killed by a signal.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `tern ARGS` and waits for it to exit by itself within `limit`; a process still running
/// then is killed and the test fails with its output (so a tern that starts when it should have
/// refused cannot hang the test).
pub fn tern_finish(args: &[&str], limit: Duration) -> Finished {
    let dir = temp_dir("finish");
    let (out_path, err_path) = (dir.join("stdout"), dir.join("stderr"));
    let mut child = Command::new(tern_bin())
        .args(args)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .expect("spawn tern");
    let deadline = std::time::Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if std::time::Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let finished = Finished {
        code: status.and_then(|s| s.code()),
        stdout: std::fs::read_to_string(&out_path).unwrap_or_default(),
        stderr: std::fs::read_to_string(&err_path).unwrap_or_default(),
    };
    assert!(
        status.is_some(),
        "tern {args:?} still running after {limit:?}; output: {finished:?}"
    );
    finished
}

/// A `tern bench` run in the background: open loop at `rate` requests/s over 8 keep-alive
/// connections to `url` for `secs` seconds; [`SteadyLoad::report`] waits for it and returns its
/// JSON report (the run must have exited 0).
pub struct SteadyLoad {
    thread: std::thread::JoinHandle<Finished>,
    json: PathBuf,
}

impl SteadyLoad {
    pub fn start(dir: &Path, url: &str, rate: u32, secs: u32) -> SteadyLoad {
        let json = dir.join("bench.json");
        let args: Vec<String> = [
            "bench",
            url,
            "-c",
            "8",
            "--rate",
            &rate.to_string(),
            "-d",
            &secs.to_string(),
            "--warmup",
            "0",
            "-q",
            "--json",
            json.to_str().unwrap(),
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        let limit = Duration::from_secs(u64::from(secs) + 30);
        let thread = std::thread::spawn(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            tern_finish(&args, limit)
        });
        SteadyLoad { thread, json }
    }

    pub fn report(self) -> serde_json::Value {
        let done = self.thread.join().unwrap();
        assert_eq!(done.code, Some(0), "{}\n{}", done.stdout, done.stderr);
        serde_json::from_str(&std::fs::read_to_string(&self.json).unwrap()).unwrap()
    }
}
