//! The one-line summary `tern check` prints for a valid configuration.
//!
//! It repeats back the counts an operator can verify at a glance (did my new bind and server get
//! picked up?) without dumping the whole model.

use crate::model::Config;

impl Config {
    /// E.g. `ok: 1 frontend (2 binds, 1 with TLS), 1 backend, 3 servers, workers=auto,
    /// maxconn=10000`.
    pub fn summary(&self) -> String {
        let binds = self.frontends.iter().flat_map(|f| &f.binds);
        let bind_count = binds.clone().count();
        let tls_count = binds.clone().filter(|b| b.tls.is_some()).count();
        // Said only when some bind has it: a bind that expects a PROXY header refuses direct
        // clients, worth seeing at a glance.
        let proxy = match binds.filter(|b| b.accept_proxy).count() {
            0 => String::new(),
            n => format!(", {n} with accept_proxy"),
        };
        let servers: usize = self.backends.iter().map(|b| b.servers.len()).sum();
        let workers = self
            .global
            .workers
            .map_or_else(|| "auto".to_owned(), |w| w.to_string());
        format!(
            "ok: {} ({}, {tls_count} with TLS{proxy}), {}, {}, workers={workers}, maxconn={}",
            plural(self.frontends.len(), "frontend"),
            plural(bind_count, "bind"),
            plural(self.backends.len(), "backend"),
            plural(servers, "server"),
            self.global.maxconn,
        )
    }
}

fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}
