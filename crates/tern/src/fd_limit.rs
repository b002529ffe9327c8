//! The file descriptor limit, fitted to `maxconn` at start-up and on reload.
//!
//! Each client connection takes a descriptor, and one more while a request is on a server
//! connection (or that connection sits in the pool). A process started with a soft limit of
//! 1024 (the usual default outside systemd) would run out long before the default `maxconn`
//! (10000): accepts fail, and connections wait in the kernel's backlog while the operator
//! wonders why. As HAProxy does, tern raises its soft limit towards what `maxconn` needs, up to
//! the hard limit, which only the service manager can raise (`LimitNOFILE=`); when even that
//! cannot hold `maxconn` client connections, it says so once, at start-up, with the numbers.

use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
use tracing::{info, warn};

/// Descriptors beyond the connections: listening sockets (one per bind per worker), event
/// loops, the control API, health checks, log files.
const RESERVE: u64 = 256;

/// What to do with the limit.
#[derive(Debug, PartialEq, Eq)]
struct Plan {
    /// A new soft limit, when the current one is lower than wanted and the hard one allows more.
    raise_to: Option<u64>,
    /// The soft limit once raised, when it cannot hold `maxconn` client connections.
    short: Option<u64>,
}

/// The plan for `maxconn` under the soft limit `current` and hard limit `maximum` (`None`:
/// unlimited).
fn plan(maxconn: u64, current: Option<u64>, maximum: Option<u64>) -> Plan {
    let want = maxconn.saturating_mul(2).saturating_add(RESERVE);
    let Some(soft) = current else {
        return Plan {
            raise_to: None,
            short: None,
        };
    };
    let target = maximum.map_or(want, |hard| want.min(hard));
    let after = soft.max(target);
    Plan {
        raise_to: (target > soft).then_some(target),
        short: (after < maxconn.saturating_add(RESERVE)).then_some(after),
    }
}

/// Raises the soft limit for `maxconn` where allowed; warns when it stays too low.
pub fn fit(maxconn: usize) {
    let maxconn = maxconn as u64;
    let limit = getrlimit(Resource::Nofile);
    let p = plan(maxconn, limit.current, limit.maximum);
    if let Some(to) = p.raise_to {
        let raised = Rlimit {
            current: Some(to),
            maximum: limit.maximum,
        };
        match setrlimit(Resource::Nofile, raised) {
            Ok(()) => {
                info!(from = ?limit.current, to, "raised the file descriptor limit for maxconn")
            }
            Err(e) => warn!(error = %e, "could not raise the file descriptor limit"),
        }
    }
    if let Some(fds) = p.short {
        warn!(
            limit = fds,
            maxconn,
            "the file descriptor limit ({fds}) cannot hold maxconn ({maxconn}) connections: \
             once descriptors run out, accepts fail and clients wait in the listen backlog; \
             raise LimitNOFILE (ulimit -n) to at least {} or lower maxconn",
            maxconn.saturating_mul(2).saturating_add(RESERVE)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_low_soft_limit_is_raised_to_what_maxconn_needs() {
        let p = plan(10_000, Some(1024), Some(524_288));
        assert_eq!(p.raise_to, Some(20_256));
        assert_eq!(p.short, None);
    }

    #[test]
    fn the_hard_limit_caps_the_raise_and_a_shortfall_is_reported() {
        let p = plan(10_000, Some(1024), Some(4096));
        assert_eq!(p.raise_to, Some(4096));
        assert_eq!(p.short, Some(4096));
    }

    #[test]
    fn a_limit_for_the_clients_but_not_every_server_connection_is_not_short() {
        let p = plan(10_000, Some(15_000), Some(15_000));
        assert_eq!(p.raise_to, None);
        assert_eq!(p.short, None);
    }

    #[test]
    fn a_high_or_unlimited_limit_is_left_alone() {
        assert_eq!(plan(100, Some(100_000), None).raise_to, None);
        assert_eq!(plan(100, None, None).raise_to, None);
        assert_eq!(plan(100, None, None).short, None);
    }
}
