//! The `tern term` backends every target balances over, started once per suite run.
//!
//! Each backend binds port 0 and prints the address it got (`listening: term http://ADDR`)
//! and then `ready:`, which is what the suite waits for; it is pinned to the backend CPUs with
//! `--cpus` and `taskset`, and named `term-N` so its pages tell the servers apart.

use std::net::SocketAddr;
use std::path::Path;

use anyhow::Context as _;

use crate::procs::{Child, READY_LIMIT};
use crate::scenario::Scenario;
use crate::targets::{cpu_list, pinned, Ready, Tools};

/// Starts the scenario's backends; returns them with their addresses.
pub fn start(
    scenario: &Scenario,
    tools: &Tools,
    logs: &Path,
) -> anyhow::Result<(Vec<Child>, Vec<SocketAddr>)> {
    std::fs::create_dir_all(logs).with_context(|| format!("cannot create {}", logs.display()))?;
    let mut children = Vec::new();
    let mut addrs = Vec::new();
    for i in 1..=scenario.backends {
        let name = format!("term-{i}");
        let args = vec![
            "term".to_owned(),
            "--listen".to_owned(),
            "127.0.0.1:0".to_owned(),
            "--threads".to_owned(),
            scenario.backend_threads.to_string(),
            "--cpus".to_owned(),
            cpu_list(&scenario.cpus.backends),
            "--name".to_owned(),
            name.clone(),
        ];
        let spec = pinned(
            "term",
            &tools.tern,
            args,
            &scenario.cpus.backends,
            tools,
            Ready::Line("ready:"),
        );
        let mut child = Child::spawn(
            format!("backend {name}"),
            &spec,
            &logs.join(format!("backend-{name}.log")),
        )?;
        child.wait_ready(&spec.ready, READY_LIMIT)?;
        let addr = child
            .listening()
            .first()
            .copied()
            .with_context(|| format!("backend {name} printed no `listening:` line"))?;
        addrs.push(addr);
        children.push(child);
    }
    Ok((children, addrs))
}
