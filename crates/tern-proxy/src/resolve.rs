//! Service discovery over DNS (`[[resolvers]]`, servers with `resolvers`, templates): one
//! thread with its own event loop asks the nameservers and publishes what it learns into the
//! servers' shared state, which the workers already read.
//!
//! Off the data path by design: a request never waits on DNS. A server's address changes
//! through `BackendState::set_resolved`, the same path as `set server addr` (new connections
//! go to the new address, idle pooled ones to the old address are not reused, a health check
//! aimed at the server follows), and a server DNS has no address for leaves balancing (checks
//! paused) without the operator's state being touched. One task per server or template
//! (`task.rs`): the slots of a template share its answers (`slots.rs` decides which server
//! holds which record);
//! questions and replies are hickory's messages over tern's own UDP sockets (`query.rs`), and
//! a reply is believed only when it answers the question (`answer.rs`). Counters per resolvers
//! section (`counters.rs`) go to the stats with the rest.
//!
//! Its own thread, not the health checker's: a backend may be resolved without being checked,
//! and a slow nameserver then delays no check.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::thread::JoinHandle;

use tern_config::{Config, Family};
use tokio::sync::watch;

mod answer;
pub(crate) mod counters;
mod query;
mod slots;
mod task;

use counters::ResolverCounters;
pub use counters::ResolverSnapshot;
use task::{Member, Run, Target};

use crate::exchange::servers::BackendState;

/// One counter block per `[[resolvers]]`, in configuration order.
pub(crate) fn counters(config: &Config) -> Vec<Arc<ResolverCounters>> {
    config
        .resolvers
        .iter()
        .map(|r| Arc::new(ResolverCounters::new(&r.name)))
        .collect()
}

/// Starts the resolver thread if any server is found by DNS; it runs until `stop` turns true.
pub(crate) fn spawn(
    config: &Config,
    states: &Arc<Vec<BackendState>>,
    counters: &[Arc<ResolverCounters>],
    stop: watch::Receiver<bool>,
) -> std::io::Result<Option<JoinHandle<()>>> {
    let runs = runs(config, states, counters);
    if runs.is_empty() {
        return Ok(None);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let thread = std::thread::Builder::new()
        .name("tern-dns".to_owned())
        .spawn(move || {
            runtime.block_on(async move {
                let mut tasks = tokio::task::JoinSet::new();
                for run in runs {
                    tasks.spawn(task::run(run, stop.clone()));
                }
                while tasks.join_next().await.is_some() {}
            });
        })?;
    Ok(Some(thread))
}

/// What the servers of one run share: section, name, SRV or not, family, port, backend, and
/// the template (its prefix) or the plain server (`#index`). Slots of one template share the
/// records out between them; every other server gets its own run, so two servers of the same
/// name (in two backends, say) each take the same address rather than competing for records.
type Key = (usize, String, bool, bool, u16, usize, String);

/// One run per name, with the servers it feeds in configuration order.
fn runs(
    config: &Config,
    states: &Arc<Vec<BackendState>>,
    counters: &[Arc<ResolverCounters>],
) -> Vec<Run> {
    let mut groups: BTreeMap<Key, (Target, Vec<std::net::SocketAddr>)> = BTreeMap::new();
    for (b, backend) in config.backends.iter().enumerate() {
        for (s, server) in backend.servers.iter().enumerate() {
            let Some(r) = &server.resolve else {
                continue;
            };
            let group = match r.slot {
                Some(n) => server
                    .name
                    .strip_suffix(&n.to_string())
                    .unwrap_or(&server.name)
                    .to_owned(),
                None => format!("#{s}"),
            };
            let v4 = r.prefer == Family::Ipv4;
            let key = (r.resolvers, r.name.clone(), r.srv, v4, r.port, b, group);
            let (target, configured) = groups.entry(key).or_insert_with(|| {
                let target = Target {
                    name: r.name.clone(),
                    srv: r.srv,
                    prefer: r.prefer,
                    port: r.port,
                    members: Vec::new(),
                };
                (target, Vec::new())
            });
            target.members.push(Member {
                backend: b,
                server: s,
                backend_name: backend.name.clone(),
                server_name: server.name.clone(),
            });
            configured.push(server.address);
        }
    }
    groups
        .into_iter()
        .filter_map(|((section, ..), (target, configured))| {
            Some(Run {
                section: Arc::new(config.resolvers.get(section)?.clone()),
                counters: Arc::clone(counters.get(section)?),
                states: Arc::clone(states),
                target,
                configured,
            })
        })
        .collect()
}
