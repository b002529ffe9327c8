//! Active health checks: probes that connect to a server on their own (not on client traffic)
//! and judge whether it can serve.
//!
//! `probe` performs one check and says what happened, in HAProxy's check status codes; the
//! scheduler that runs checks per server and applies `rise`/`fall` lives beside it.

// Until the scheduler calls it, only the probe's tests use it.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) mod probe;
