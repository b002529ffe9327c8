//! One simulated backend, drawn from the seed: servers with random weights, `maxconn`, health
//! thresholds and an up/down timeline with flapping; an algorithm; slow start, queue and
//! stickiness settings; and a load around the backend's capacity.

use std::time::Duration;

use tern_balance::{BalanceMethod, HashKey, HashType, HealthSettings, Nanos, OnError};

use super::rng::Rng;

pub const MS: Nanos = 1_000_000;
pub const SEC: Nanos = 1_000 * MS;

#[derive(Debug, Clone)]
pub struct Server {
    pub weight: u32,
    pub backup: bool,
    pub maxconn: u32,
    pub health: HealthSettings,
    /// Times at which the real server changes state, starting up at 0.
    pub flips: Vec<Nanos>,
}

impl Server {
    /// Whether the real server answers at `t`.
    pub fn alive(&self, t: Nanos) -> bool {
        self.flips.partition_point(|&f| f <= t) % 2 == 0
    }
}

#[derive(Debug, Clone)]
pub struct Config {
    pub servers: Vec<Server>,
    pub method: BalanceMethod,
    pub duration: Nanos,
    /// Chance, per mille, that a check result is the opposite of the server's state.
    pub noise: u64,
    /// Consecutive request errors that trigger the passive action.
    pub error_limit: u32,
    pub on_error: OnError,
    pub slow_start: Duration,
    pub queue_max: Option<usize>,
    pub queue_timeout: Nanos,
    pub arrival_gap: Nanos,
    pub service: Nanos,
    /// Chance, per mille, that a request carries a stickiness key.
    pub sticky: u64,
    pub stick_size: usize,
    pub stick_expire: Duration,
}

impl Config {
    pub fn draw(rng: &mut Rng) -> Self {
        let n = rng.range(2, 7) as usize;
        let duration = 4 * SEC;
        let servers: Vec<Server> = (0..n).map(|i| server(rng, i, duration)).collect();
        let slots: u64 = servers
            .iter()
            .filter(|s| !s.backup)
            .map(|s| u64::from(s.maxconn))
            .sum();
        // About 100 arrivals a second, at 50% to 150% of the active servers' capacity.
        let rate = rng.range(50, 150);
        let load_percent = rng.range(50, 150);
        let service = (slots * SEC * load_percent / 100 / rate).max(MS);
        let method = rng.pick(&[
            BalanceMethod::RoundRobin,
            BalanceMethod::StaticRoundRobin,
            BalanceMethod::LeastConn,
            BalanceMethod::First,
            BalanceMethod::random(),
            BalanceMethod::ewma(),
            BalanceMethod::Hash {
                key: HashKey::Source,
                hash_type: HashType::Consistent { balance_factor: 0 },
            },
            BalanceMethod::Hash {
                key: HashKey::Source,
                hash_type: HashType::MapBased,
            },
        ]);
        Self {
            servers,
            method,
            duration,
            noise: rng.pick(&[0, 0, 10, 50]),
            error_limit: rng.range(1, 4) as u32,
            on_error: rng.pick(&[OnError::FastInterval, OnError::FailCheck]),
            slow_start: match rng.below(3) {
                0 => Duration::ZERO,
                _ => Duration::from_millis(rng.range(200, 2000)),
            },
            queue_max: match rng.below(10) {
                0 => Some(0),
                1..=3 => None,
                _ => Some(rng.range(1, 20) as usize),
            },
            queue_timeout: rng.range(service / 2, 5 * service).max(MS),
            arrival_gap: SEC / rate,
            service,
            sticky: rng.pick(&[0, 300, 700]),
            stick_size: rng.range(1, 24) as usize,
            stick_expire: Duration::from_millis(rng.range(100, 2000)),
        }
    }
}

fn server(rng: &mut Rng, index: usize, duration: Nanos) -> Server {
    let interval = rng.range(50, 400) * MS;
    let health = HealthSettings {
        rise: rng.range(1, 3) as u32,
        fall: rng.range(1, 3) as u32,
        interval: Duration::from_nanos(interval),
        fast_interval: Duration::from_nanos(interval / rng.range(1, 4)),
        down_interval: Duration::from_nanos(interval * rng.range(1, 3)),
    };
    // Up and down spells; some shorter than a check interval (flapping).
    let mut flips = Vec::new();
    let mut t = 0;
    let mut up = true;
    while t < duration {
        t += if up {
            rng.range(100 * MS, 2500 * MS)
        } else {
            rng.range(50 * MS, 1500 * MS)
        };
        flips.push(t);
        up = !up;
    }
    Server {
        weight: rng.range(1, 8) as u32,
        // Server 0 is always active, so the backend has an active tier.
        backup: index > 0 && rng.chance(200),
        maxconn: rng.range(1, 4) as u32,
        health,
        flips,
    }
}
