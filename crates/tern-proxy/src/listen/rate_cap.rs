//! Caps on new connections per second, shared by every worker: `global.max_conn_rate`
//! (HAProxy's `maxconnrate`), `global.max_sess_rate` (`maxsessrate`) and a frontend's
//! `rate_limit_sessions` (`rate-limit sessions`).
//!
//! Each cap is a one-second [`FreqCtr`] behind a mutex, taken once per new connection and
//! only when configured. At the cap the accepting task waits for room (a connection's time
//! slot, `1 s / cap`, at a time) before it accepts more: the kernel's backlog holds the rest,
//! as HAProxy pauses its listeners. The sliding estimate lets through at most the cap in any
//! one-second window once the previous second's count is spread evenly; a burst after an idle
//! second gets the whole cap at once.

use std::sync::Mutex;
use std::time::Duration;

use crate::exchange::servers::now;
use crate::track::freq::FreqCtr;

const SECOND: u64 = 1_000_000_000;

/// One cap.
#[derive(Debug)]
pub(crate) struct RateCap {
    per_sec: u32,
    ctr: Mutex<FreqCtr>,
}

impl RateCap {
    pub(crate) fn new(per_sec: Option<u32>) -> Option<Self> {
        per_sec.map(|per_sec| Self {
            per_sec,
            ctr: Mutex::new(FreqCtr::default()),
        })
    }

    /// Takes a place if the last second has room; false at the cap.
    fn try_take(&self) -> bool {
        let mut ctr = self.ctr.lock().unwrap_or_else(|e| e.into_inner());
        let now = now();
        if ctr.rate(now, SECOND) >= u64::from(self.per_sec) {
            return false;
        }
        ctr.add(now, SECOND, 1);
        true
    }

    /// Waits for a place.
    pub(crate) async fn take(&self) {
        let slot = Duration::from_nanos(SECOND / u64::from(self.per_sec.max(1)));
        while !self.try_take() {
            tokio::time::sleep(slot.max(Duration::from_millis(1))).await;
        }
    }
}

/// Waits for a place under every cap of `caps` that is set.
pub(crate) async fn take_all(caps: [Option<&RateCap>; 2]) {
    for cap in caps.into_iter().flatten() {
        cap.take().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cap_admits_its_rate_then_refuses() {
        let cap = RateCap::new(Some(5)).unwrap_or_else(|| unreachable!());
        let admitted = (0..20).filter(|_| cap.try_take()).count();
        assert_eq!(admitted, 5);
        assert!(RateCap::new(None).is_none());
    }
}
