//! Servers: active checks on each server's schedule, passive error actions, UP/DOWN
//! transitions pushed into the balancer, and slow-start ramps.

use std::time::Duration;

use tern_balance::{slow_start_step, slow_start_weight, Algorithm, ServerId, Transition};

use super::super::ensure;
use super::{as_nanos, Event, World};

impl World {
    /// One active check of `s`.
    pub(super) fn check(&mut self, s: ServerId) -> Result<(), String> {
        let alive = self.cfg.servers[s].alive(self.now);
        let passed = alive != self.rng.chance(self.cfg.noise);
        let t = self.health[s].on_check(passed);
        let changed = self.streak[s].result(passed);
        self.compare(s, t, changed, passed)?;
        if let Some(t) = t {
            let st = &self.streak[s];
            let needed = if t.up { st.rise } else { st.fall };
            ensure!(
                t.streak == needed,
                "server {s} went {} after {} results, not {needed}",
                updown(t.up),
                t.streak
            );
        }
        let settings = self.cfg.servers[s].health;
        let expected = match (self.streak[s].stable(), self.streak[s].up) {
            (false, _) => settings.fast_interval,
            (true, true) => settings.interval,
            (true, false) => settings.down_interval,
        };
        let delay = self.health[s].next_delay();
        ensure!(
            delay == expected,
            "server {s}: next check in {delay:?}, expected {expected:?}"
        );
        self.schedule_check(s, delay);
        match t {
            Some(t) => self.transition(s, t.up),
            None => Ok(()),
        }
    }

    /// Requests to `s` failed `error_limit` times in a row.
    pub(super) fn passive(&mut self, s: ServerId) -> Result<(), String> {
        let action = self.cfg.on_error;
        let t = self.health[s].on_passive(action);
        let changed = self.streak[s].passive(action);
        self.compare(s, t, changed, false)?;
        let delay = self.health[s].next_delay();
        let fast = self.cfg.servers[s].health.fast_interval;
        ensure!(
            delay == fast,
            "server {s}: {delay:?} to the next check after a passive error"
        );
        self.schedule_check(s, delay);
        match t {
            Some(t) => self.transition(s, t.up),
            None => Ok(()),
        }
    }

    /// Health and the consecutive-results model agree.
    fn compare(
        &self,
        s: ServerId,
        t: Option<Transition>,
        changed: bool,
        passed: bool,
    ) -> Result<(), String> {
        let model = &self.streak[s];
        ensure!(
            t.is_some() == changed && self.health[s].is_up() == model.up,
            "server {s}: result {passed} gave {t:?} ({}), the model changed={changed} ({model:?})",
            self.health[s]
        );
        Ok(())
    }

    /// Replaces the pending check of `s` by one `delay` from now.
    fn schedule_check(&mut self, s: ServerId, delay: Duration) {
        self.check_generation[s] += 1;
        let generation = self.check_generation[s];
        self.at(
            self.now + as_nanos(delay),
            Event::Check {
                server: s,
                generation,
            },
        );
    }

    fn transition(&mut self, s: ServerId, up: bool) -> Result<(), String> {
        self.stats.transitions += 1;
        self.up[s] = up;
        let ramp = &mut self.ramp[s];
        ramp.generation += 1;
        if !up {
            self.balancer.set_usable(s, false);
            if !self.up.contains(&true) {
                return self.drain();
            }
            // The backups may have become the serving tier.
            return self.fill_all();
        }
        let weight = self.cfg.servers[s].weight;
        let window = self.cfg.slow_start;
        let w = slow_start_weight(weight, Duration::ZERO, window);
        ensure!(
            w >= 1 && w <= weight,
            "server {s} starts its ramp at {w} of {weight}"
        );
        *ramp = super::Ramp {
            generation: ramp.generation,
            since: self.now,
            last: w,
            done: w == weight,
        };
        let generation = ramp.generation;
        if w != weight {
            let step = as_nanos(slow_start_step(window)).min(as_nanos(window));
            self.at(
                self.now + step,
                Event::Ramp {
                    server: s,
                    generation,
                },
            );
        }
        // Weight first: the server must not take a full share for a moment.
        self.balancer.set_weight(s, w);
        self.balancer.set_usable(s, true);
        self.fill_all()
    }

    pub(super) fn ramp_step(&mut self, s: ServerId, generation: u64) -> Result<(), String> {
        if generation != self.ramp[s].generation {
            return Ok(());
        }
        let weight = self.cfg.servers[s].weight;
        let window = self.cfg.slow_start;
        let ramp = self.ramp[s];
        let elapsed = self.now - ramp.since;
        let w = slow_start_weight(weight, Duration::from_nanos(elapsed), window);
        ensure!(
            w >= ramp.last,
            "server {s}: ramp went down from {} to {w}",
            ramp.last
        );
        ensure!(
            w <= weight,
            "server {s}: ramp at {w}, above its weight {weight}"
        );
        self.balancer.set_weight(s, w);
        self.ramp[s].last = w;
        let end = ramp.since + as_nanos(window);
        if self.now >= end {
            ensure!(w == weight, "server {s}: ramp ended at {w}, not {weight}");
            self.ramp[s].done = true;
            self.stats.ramps_done += 1;
        } else {
            let next = (self.now + as_nanos(slow_start_step(window))).min(end);
            self.at(
                next,
                Event::Ramp {
                    server: s,
                    generation,
                },
            );
        }
        Ok(())
    }
}

fn updown(up: bool) -> &'static str {
    if up {
        "UP"
    } else {
        "DOWN"
    }
}
