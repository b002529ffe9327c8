//! A deterministic simulation of one backend driven by the balancing core: virtual time, a
//! seeded generator, and the core's state machines used the way the data path uses them.
//!
//! - `config`: the backend drawn from the seed (servers, timelines, settings, load);
//! - `world`: the event loop (arrivals, completions, health checks, slow-start steps, aborts,
//!   queue deadlines) and the invariants checked after every event;
//! - `model`: the independent reference models the invariants compare against.

pub mod config;
mod model;
pub mod rng;
mod world;

pub use world::Stats;

/// Fails the current check with a message when `cond` is false.
macro_rules! ensure {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(format!($($msg)+));
        }
    };
}
pub(crate) use ensure;

/// Runs the simulation fixed by `seed`: its statistics, or the first invariant it broke.
pub fn run(seed: u64) -> Result<Stats, String> {
    let mut rng = rng::Rng::new(seed);
    let config = config::Config::draw(&mut rng);
    let summary = format!(
        "{} servers, {:?}, slow start {:?}, queue max {:?}",
        config.servers.len(),
        config.method,
        config.slow_start,
        config.queue_max
    );
    world::World::new(config, rng)
        .and_then(world::World::run)
        .map_err(|e| format!("{e}\n  backend: {summary}"))
}
