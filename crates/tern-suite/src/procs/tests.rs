#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use super::*;
use crate::targets::{ProcSpec, Ready};

#[test]
fn parses_stat_lines_with_odd_names() {
    let line = "4242 (a (b) c) S 17 4242 4242 0 -1 4194560 100 0 0 0 250 75 3 4 20 0 1 0";
    assert_eq!(parse_stat(line), Some((4242, 17, 325, 7)));
    assert_eq!(parse_stat("1 (x) S 1 2"), None);
}

#[test]
fn tree_cpu_covers_children_and_refuses_dead_roots() {
    let me = std::process::id();
    assert!(tree_cpu(&[me]).is_some());
    assert!(tree_cpu(&[u32::MAX - 1]).is_none());
}

/// Processes of group `pgid` that are not zombies (an orphan killed by the group signal may
/// wait as a zombie for a reaper that is slow in a container).
fn alive_in_group(pgid: i32) -> usize {
    let mut n = 0;
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        // state(0) ppid(1) pgrp(2)
        if f.get(2) == Some(&pgid.to_string().as_str()) && f.first() != Some(&"Z") {
            n += 1;
        }
    }
    n
}

/// Whether group `pgid` empties within 2 s (SIGKILL is delivered at once, but the kernel
/// finishes the process asynchronously).
fn group_gone(pgid: i32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(2);
    while alive_in_group(pgid) > 0 {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}

fn sh(script: &str) -> ProcSpec {
    ProcSpec {
        name: "sh",
        program: PathBuf::from("/bin/sh"),
        args: vec!["-c".into(), script.into()],
        ready: Ready::Line("ready:"),
        cwd: None,
    }
}

fn log(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!("tern-suite-procs-{}-{tag}.log", std::process::id()))
}

#[test]
fn a_child_that_exits_during_start_up_is_an_error_with_its_stderr() {
    let spec = sh("echo 'bind: address in use' >&2; exit 3");
    let mut child = Child::spawn("t".into(), &spec, &log("exit")).unwrap();
    let err = child
        .wait_ready(&spec.ready, Duration::from_secs(10))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("t exited during start-up") && err.contains("address in use"),
        "{err}"
    );
}

#[test]
fn ready_lines_and_addresses_are_read_and_stop_kills_the_whole_group() {
    // The child forks a grandchild that would outlive it; stopping kills the group.
    let spec = sh("sleep 60 & echo 'listening: term http://127.0.0.1:4567'; echo ready:; wait");
    let mut child = Child::spawn("t".into(), &spec, &log("ready")).unwrap();
    child
        .wait_ready(&spec.ready, Duration::from_secs(10))
        .unwrap();
    assert_eq!(child.listening(), vec!["127.0.0.1:4567".parse().unwrap()]);
    let pgid = child.pid() as i32;
    assert!(lock_groups().contains(&pgid));
    child.stop();
    assert!(!lock_groups().contains(&pgid));
    assert!(group_gone(pgid), "a process of the group survived");
}

#[test]
fn a_silent_child_times_out_and_is_killed_on_drop() {
    let spec = sh("sleep 60");
    let mut child = Child::spawn("quiet".into(), &spec, &log("quiet")).unwrap();
    let err = child
        .wait_ready(&spec.ready, Duration::from_millis(300))
        .unwrap_err()
        .to_string();
    assert!(err.contains("quiet was not ready"), "{err}");
    let pgid = child.pid() as i32;
    drop(child);
    assert!(group_gone(pgid), "a process of the group survived");
}

#[test]
fn port_readiness() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let mut spec = sh("sleep 60");
    spec.ready = Ready::Port(addr);
    let mut child = Child::spawn("p".into(), &spec, &log("port")).unwrap();
    child
        .wait_ready(&spec.ready, Duration::from_secs(5))
        .unwrap();
    assert!(free_port().unwrap().port() != 0);
}
