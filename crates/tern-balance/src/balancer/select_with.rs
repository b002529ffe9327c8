//! Picks that skip the servers the caller cannot use: [`Balancer::select_with`].
//!
//! The caller's `take` sees each candidate and may refuse it (at its global `maxconn`, or the
//! server a retry must avoid). A refused server is excluded through the algorithm's own cheap
//! exclusion (see the `exclude` module) and the pick repeated, at most once per server of the
//! tier; every exclusion is undone before returning. Health and weights are never touched, and
//! the algorithm's position ends as a plain `select` of the accepted server would leave it,
//! except for `static-rr`, which uses up the table entries it skipped (as HAProxy does).

use super::{Balancer, Engine, NoServer, Tier};
use crate::exclude::Exclude;
use crate::{Algorithm, PickContext, ServerId};

impl Balancer {
    /// Picks as [`Balancer::select`] does, offering each candidate to `take`: the first one it
    /// accepts is returned, a refused one is left out of the rest of this call. When every
    /// usable server of the tier is refused the answer is [`NoServer::Full`] (queue or answer
    /// 503), not a spill to the backups; the backups are used only when no active server is
    /// usable at all, as with `select`. `take` is called at most once per server. Like
    /// `select`, this does not count the stream: call [`Algorithm::on_start`].
    pub fn select_with(
        &mut self,
        ctx: &PickContext<'_>,
        mut take: impl FnMut(ServerId) -> bool,
    ) -> Result<ServerId, NoServer> {
        for tier in &mut self.tiers {
            if tier.live == 0 {
                continue;
            }
            return tier.select_with(ctx, &mut take);
        }
        Err(NoServer::Down)
    }
}

impl Tier {
    fn select_with(
        &mut self,
        ctx: &PickContext<'_>,
        take: &mut impl FnMut(ServerId) -> bool,
    ) -> Result<ServerId, NoServer> {
        let mut result = Err(NoServer::Full);
        let mut excluded = false;
        // Each refusal excludes one server, so the tier runs out after as many picks.
        for _ in 0..self.ids.len() {
            let Some(local) = dispatch!(&mut self.engine, a => a.pick(ctx)) else {
                break;
            };
            let Some(&id) = self.ids.get(local) else {
                break;
            };
            if take(id) {
                result = Ok(id);
                break;
            }
            dispatch!(&mut self.engine, a => a.exclude(local));
            excluded = true;
        }
        if excluded {
            dispatch!(&mut self.engine, a => a.restore());
        }
        result
    }
}

#[cfg(test)]
mod tests;
