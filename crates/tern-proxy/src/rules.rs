//! Per-request rules: the backend choice (`use_backend`) and the `http_request` /
//! `http_response` rules (answers: `deny`, `return`, `redirect`; edits of fields, request line
//! and status; variables and the log level), evaluated on the facts of
//! [`crate::rules::facts`].
//!
//! The order is HAProxy's: the frontend's `http_request` rules, then the backend choice, then
//! the chosen backend's `http_request` rules; on the way back the backend's `http_response`
//! rules, then the frontend's. Edits only fill a [`HeaderEdits`], applied when the head is
//! rewritten, so a condition sees the message as it arrived (HAProxy's conditions see the
//! edits of earlier rules; configurations that test a header an earlier rule set differ).
//!
//! Backend names are resolved to indexes once, at start ([`Routing::build`]). A frontend
//! without rules costs nothing per request: no condition is evaluated and no fact is read.

// Basic authentication: credentials checked before the rules that read them.
pub(crate) mod auth;
// What rules read of a request, a response and their connection.
pub(crate) mod facts;
// The answer of a redirect rule.
mod redirect;
// The actions that change the message (headers, request line, status).
mod rewrite;
// The request id, and what the access log takes from a request while it is routed.
pub(crate) mod request_id;
// Variables (`set-var`, `var()`).
pub(crate) mod vars;

use tern_config::{Config, Fetch, Frontend, HttpAction, HttpRule, Piece, Route};
use tern_h1::HeaderEdits;

use crate::rules::facts::Samples;
use crate::StartError;

/// A frontend's backend choice, with names resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Routing {
    /// The backend of each `use_backend` rule, in order.
    routes: Vec<usize>,
    /// `default_backend`.
    default: Option<usize>,
    /// The userlists requests are checked against before the rules run (`http_auth`).
    auth_lists: Vec<usize>,
}

impl Routing {
    /// The routing of every frontend of `cfg`.
    pub(crate) fn build(cfg: &Config) -> Result<Vec<Routing>, StartError> {
        let index = |fe: &Frontend, name: &str| {
            cfg.backend_index(name)
                .ok_or_else(|| StartError::UnknownBackend(fe.name.clone()))
        };
        cfg.frontends
            .iter()
            .map(|fe| {
                let routes: Vec<usize> = fe
                    .use_backend
                    .iter()
                    .map(|r| index(fe, &r.backend))
                    .collect::<Result<_, _>>()?;
                let default = fe
                    .default_backend
                    .as_deref()
                    .map(|name| index(fe, name))
                    .transpose()?;
                let targets: Vec<usize> = routes.iter().copied().chain(default).collect();
                Ok(Routing {
                    auth_lists: auth::lists_of(cfg, fe, &targets),
                    routes,
                    default,
                })
            })
            .collect()
    }

    /// The userlists a request's credentials are checked against before its rules run.
    pub(crate) fn auth_lists(&self) -> &[usize] {
        &self.auth_lists
    }

    /// Whether the backend is the same for every request (no `use_backend` rule).
    pub(crate) fn fixed(&self) -> Option<Option<usize>> {
        self.routes.is_empty().then_some(self.default)
    }

    /// The backend of every request when nothing is evaluated per request: the frontend `fe`
    /// (which this routing is of) has no `http_request` rules and no `use_backend`, and its
    /// `default_backend` has no `http_request` rules either. `None` when rules must run.
    pub(crate) fn without_rules(&self, cfg: &Config, fe: &Frontend) -> Option<usize> {
        if !fe.http_request.is_empty() {
            return None;
        }
        let backend = self.fixed()??;
        cfg.backends[backend]
            .http_request
            .is_empty()
            .then_some(backend)
    }

    /// The backend `use_backend` gives a request: that of the first rule of `rules` (the
    /// frontend's `use_backend`, in the order [`Routing::build`] saw them) whose condition
    /// holds, else the default; `None` when neither.
    pub(crate) fn use_backend(
        &self,
        rules: &[Route],
        facts: &dyn tern_config::Facts,
    ) -> Option<usize> {
        rules
            .iter()
            .zip(&self.routes)
            .find(|(rule, _)| rule.condition.matches(facts))
            .map(|(_, &backend)| backend)
            .or(self.default)
    }
}

/// What the request rules decided.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Verdict<'r> {
    /// Go on (header edits, if any, are in the edits).
    Pass,
    /// Answer with tern's page of this status (`deny`).
    Deny(u16),
    /// Answer with this `return` action.
    Return(&'r HttpAction),
    /// Answer with a redirect of this code; the edits hold its field lines.
    Redirect(u16),
    /// Answer 401 with a challenge for this realm (`auth`).
    Auth(&'r str),
    /// Hold the request for the frontend's `timeouts.tarpit`, then answer this status
    /// (`tarpit`).
    Tarpit(u16),
    /// Close without an answer (`reject`).
    Reject,
    /// Close with a reset, without an answer (`silent-drop`).
    SilentDrop,
}

/// Routes a request in HAProxy's order: the frontend's `http_request` rules, then (if they let
/// it pass) the backend choice of `routing` (`use_backend`, else `default_backend`), then that
/// backend's `http_request` rules. Header rules fill `edits`. The verdict, and the backend if
/// one was chosen. Nothing here depends on the protocol the request came in.
pub(crate) fn route_request<'r, F: Samples>(
    cfg: &'r Config,
    fe: &'r Frontend,
    routing: &Routing,
    facts: &F,
    edits: &mut HeaderEdits,
) -> (Verdict<'r>, Option<usize>) {
    let mut verdict = on_request(&fe.http_request, facts, edits);
    let mut backend = None;
    if verdict == Verdict::Pass {
        backend = routing.use_backend(&fe.use_backend, facts);
        if let Some(b) = backend {
            verdict = on_request(&cfg.backends[b].http_request, facts, edits);
        }
    }
    (verdict, backend)
}

/// Runs `rules` on a request: header edits go to `edits`, a `deny` or `return` ends the run.
pub(crate) fn on_request<'r, F: Samples>(
    rules: &'r [HttpRule],
    facts: &F,
    edits: &mut HeaderEdits,
) -> Verdict<'r> {
    for rule in rules {
        if !rule.condition.matches(facts) {
            continue;
        }
        match &rule.action {
            HttpAction::Deny { status } => return Verdict::Deny(*status),
            action @ HttpAction::Return { .. } => return Verdict::Return(action),
            HttpAction::Auth { realm } => return Verdict::Auth(realm),
            HttpAction::Redirect(r) => {
                redirect::answer(r, facts, edits);
                return Verdict::Redirect(r.code);
            }
            HttpAction::Track(track) => facts.track(track),
            HttpAction::Tarpit { status } => return Verdict::Tarpit(*status),
            HttpAction::Reject => return Verdict::Reject,
            HttpAction::SilentDrop => return Verdict::SilentDrop,
            action => {
                if rewrite::apply(action, facts, edits).is_err() {
                    tracing::debug!("a request rewrite gave an invalid request line: 500");
                    return Verdict::Deny(500);
                }
            }
        }
    }
    Verdict::Pass
}

/// Why response rules refused the server's response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// A `deny` of this status.
    Deny(u16),
    /// The `return` rule at this index of the list.
    Return(usize),
}

/// Runs `rules` on a response: edits go to `edits`; a `deny` or `return` ends the run
/// (validation admits only edits and those there).
pub(crate) fn on_response<F: Samples>(
    rules: &[HttpRule],
    facts: &F,
    edits: &mut HeaderEdits,
) -> Result<(), Refusal> {
    for (i, rule) in rules.iter().enumerate() {
        if rule.condition.matches(facts) {
            match rule.action {
                HttpAction::Deny { status } => return Err(Refusal::Deny(status)),
                HttpAction::Return { .. } => return Err(Refusal::Return(i)),
                _ => {}
            }
            // Response edits cannot fail: they change fields and the status only.
            let _ = rewrite::apply(&rule.action, facts, edits);
        }
    }
    Ok(())
}

/// Whether any rule of `cfg` reads `dst_port` (connections then look their local port up).
pub(crate) fn reads_dst_port(cfg: &Config) -> bool {
    let in_rule = |rule: &HttpRule| {
        let in_value = rule.action.values().any(|value| {
            value
                .pieces
                .iter()
                .any(|p| matches!(p, Piece::Fetch(Fetch::DstPort)))
        });
        in_value || rule.condition.fetches().any(|f| *f == Fetch::DstPort)
    };
    let frontends = cfg.frontends.iter().any(|fe| {
        fe.use_backend
            .iter()
            .any(|r| r.condition.fetches().any(|f| *f == Fetch::DstPort))
            || fe.http_request.iter().chain(&fe.http_response).any(in_rule)
    });
    frontends
        || cfg
            .backends
            .iter()
            .any(|be| be.http_request.iter().chain(&be.http_response).any(in_rule))
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_auth;
#[cfg(test)]
mod tests_rewrite;
