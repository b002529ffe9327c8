//! Binary upgrades through the real binary (SIGUSR2): a new process takes the listening
//! sockets over a Unix socket, the old one drains and exits, and a client at a steady rate sees
//! no refused connection and no failed request. A new process that cannot start (a broken
//! configuration) leaves the old one serving.

#![allow(clippy::unwrap_used)]

mod support;
use support::*;

use std::time::{Duration, Instant};

/// Whether process `pid` has exited (gone, or a zombie waiting for its parent).
fn exited(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // The state follows the command name in parentheses.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

fn wait_exited(pid: u32, limit: Duration) {
    let deadline = Instant::now() + limit;
    while !exited(pid) {
        assert!(Instant::now() < deadline, "process {pid} did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn send_signal(pid: u32, sig: nix::sys::signal::Signal) {
    let pid = nix::unistd::Pid::from_raw(i32::try_from(pid).unwrap());
    nix::sys::signal::kill(pid, sig).unwrap();
}

/// Sends SIGUSR2 to `pid` and returns the pid of the process that took over.
fn upgrade(tern: &mut Tern, pid: u32) -> u32 {
    send_signal(pid, nix::sys::signal::Signal::SIGUSR2);
    let line = tern.proc.wait_line("upgraded:");
    // "upgraded: pid NEW took over from pid OLD"
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(words.get(7).copied(), Some(&*pid.to_string()), "{line}");
    words[2].parse().unwrap()
}

/// Stops the process `pid` (not the test's own child) and waits for its exit.
fn stop(pid: u32) {
    send_signal(pid, nix::sys::signal::Signal::SIGTERM);
    wait_exited(pid, Duration::from_secs(15));
}

#[test]
fn three_upgrades_under_load_refuse_nothing() {
    let (a, b) = (Term::start("a"), Term::start("b"));
    let dir = temp_dir("upgrade-load");
    let config = Config::new()
        .global("hard_stop_after = \"2s\"")
        .terms(&[&a, &b]);
    let mut tern = Tern::run_in(dir.clone(), &config.toml());
    let url = format!("http://{}/", tern.addr());
    let load = SteadyLoad::start(&dir, &url, 300, 8);
    std::thread::sleep(Duration::from_millis(500));
    let mut pid = tern.proc.pid();
    for _ in 0..3 {
        let old = pid;
        pid = upgrade(&mut tern, old);
        assert_ne!(pid, old);
        // The old process drains (keep-alive clients get `Connection: close`) and exits.
        wait_exited(old, Duration::from_secs(10));
    }
    let report = load.report();
    assert_eq!(report["errors_total"], 0, "{}", report["errors"]);
    assert!(report["requests"].as_u64().unwrap() > 1500, "{report}");
    stop(pid);
    let log = tern.proc.stderr_text();
    assert!(!log.contains("panicked"), "{log}");
}

#[test]
fn a_new_process_that_cannot_start_leaves_the_old_one_serving() {
    let a = Term::start("a");
    let config = Config::new().terms(&[&a]);
    let mut tern = Tern::run(&config.toml());
    let addr = tern.addr();
    let pid = tern.proc.pid();
    let path = tern.dir.join("tern.toml");
    let good = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("{good}\nunknown_key = 1\n")).unwrap();
    send_signal(pid, nix::sys::signal::Signal::SIGUSR2);
    let deadline = Instant::now() + Duration::from_secs(20);
    while !tern.proc.stderr_text().contains("upgrade refused") {
        assert!(Instant::now() < deadline, "{}", tern.proc.stderr_text());
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!exited(pid));
    assert_eq!(block_on(get(addr, false, "/")).status, 200);

    // Fixed: the next upgrade goes through.
    std::fs::write(&path, good).unwrap();
    let new = upgrade(&mut tern, pid);
    wait_exited(pid, Duration::from_secs(15));
    assert_eq!(block_on(get(addr, false, "/")).status, 200);
    stop(new);
}
