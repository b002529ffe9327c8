//! stunnel and hitch alone, as TCP relays (`mode = "tcp"` workloads): TLS terminated, each
//! connection relayed straight to the backends, not through HAProxy, so they are compared with
//! tern and HAProxy in `mode tcp` doing the same job (bench/tcp.sh's set-up).
//!
//! stunnel takes the backends in turn (several `connect` lines, `failover = rr`); hitch has one
//! `backend` address, so a scenario with hitch has one backend (scenario validation says so).
//! Their TLS settings are the offloaders' (`offload.rs`): one configuration per program.

use super::offload::{hitch_config, hitch_proc, stunnel_config, stunnel_proc};
use super::{Generated, Layout, Tools};

pub(super) fn stunnel(layout: &Layout<'_>, tools: &Tools) -> Generated {
    let (file, proc) = stunnel_proc(layout, tools);
    Generated {
        files: vec![(file, stunnel_config(layout, layout.backends))],
        procs: vec![proc],
        stats: None,
    }
}

pub(super) fn hitch(layout: &Layout<'_>, tools: &Tools) -> Generated {
    let (file, proc) = hitch_proc(layout, tools);
    // Validation refuses hitch with more than one backend; the first is the only one then.
    let text = layout
        .backends
        .first()
        .map(|b| hitch_config(layout, *b))
        .unwrap_or_default();
    Generated {
        files: vec![(file, text)],
        procs: vec![proc],
        stats: None,
    }
}
