//! The generator's own CPU time, read from `/proc/self/stat`.
//!
//! Why: a closed-loop client that saturates its CPUs measures itself, not the server. Reporting
//! the client's CPU time per request, and warning above 90% use, makes a client-bound run
//! visible. `/proc` needs no `unsafe` (getrusage would); its resolution is one clock tick
//! (10 ms), small against a run of seconds.

use std::time::Duration;

/// Clock ticks per second of the `utime`/`stime` fields. The kernel exports times in USER_HZ,
/// which is 100 on every Linux architecture's user ABI.
const TICKS_PER_SEC: u64 = 100;

/// Process CPU time split into user and kernel parts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTime {
    /// Time in user mode.
    pub user: Duration,
    /// Time in the kernel on the process's behalf.
    pub system: Duration,
}

impl CpuTime {
    /// The calling process's CPU time so far, or `None` where `/proc` is unavailable.
    pub fn now() -> Option<Self> {
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        Self::parse_stat(&stat)
    }

    /// Reads utime and stime (fields 14 and 15) from a `/proc/PID/stat` line. The command name
    /// (field 2) may contain spaces and parentheses, so fields are counted after the last `)`.
    pub fn parse_stat(stat: &str) -> Option<Self> {
        let after_name = &stat[stat.rfind(')')? + 1..];
        let mut fields = after_name.split_ascii_whitespace().skip(11);
        let user: u64 = fields.next()?.parse().ok()?;
        let system: u64 = fields.next()?.parse().ok()?;
        Some(Self {
            user: ticks(user),
            system: ticks(system),
        })
    }

    /// User plus system time.
    pub fn total(&self) -> Duration {
        self.user + self.system
    }

    /// The time spent between `earlier` and `self`.
    pub fn since(&self, earlier: &Self) -> Self {
        Self {
            user: self.user.saturating_sub(earlier.user),
            system: self.system.saturating_sub(earlier.system),
        }
    }
}

fn ticks(n: u64) -> Duration {
    Duration::from_millis(n.saturating_mul(1000 / TICKS_PER_SEC))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn parses_stat_lines() {
        let line = "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 1 0";
        let cpu = CpuTime::parse_stat(line).unwrap();
        assert_eq!(cpu.user, Duration::from_millis(2500));
        assert_eq!(cpu.system, Duration::from_millis(750));
        assert_eq!(cpu.total(), Duration::from_millis(3250));
        assert!(CpuTime::parse_stat("1 (x) S 1 2").is_none());
        assert!(CpuTime::now().is_some());
    }
}
