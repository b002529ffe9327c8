//! Active and passive health checks: probes that connect to a server on their own (not on
//! client traffic) and judge whether it can serve, and the scheduler that runs them per server,
//! applies `rise`/`fall`, the passive checks' `on_error` and slow start, and publishes the
//! result to the workers.
//!
//! `probe` performs one check and says what happened, in HAProxy's check status codes;
//! `schedule` owns the per-server state machines (tern-balance's `Health`) on one thread.

pub(crate) mod probe;
mod schedule;

pub(crate) use schedule::spawn;
