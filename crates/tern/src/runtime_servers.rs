//! `add server` and `del server`: the running configuration with one server more or less,
//! checked as the file's servers are.
//!
//! An added server takes the backend's settings from its first server: its TLS settings and
//! `proxy_protocol`, and with `check`, its health check (aimed at the new server's address). Servers of one backend
//! are nearly always alike; a server that must differ belongs in the file. Its cookie value
//! (with cookie persistence) is its name. Servers added at runtime live until the next reload,
//! which runs the file (as in HAProxy).

use std::net::SocketAddr;

use tern_admin::{AdminState, ControlError, ServerSpec};
use tern_config::{Config, Server};
use tern_proxy::StatsSnapshot;

/// `config` with `spec` added to `backend`.
pub fn with_added(
    config: &Config,
    backend: &str,
    spec: &ServerSpec,
) -> Result<Config, ControlError> {
    let mut config = config.clone();
    let b = config
        .backend_index(backend)
        .ok_or_else(|| ControlError::UnknownBackend(backend.to_owned()))?;
    let be = &mut config.backends[b];
    if be.servers.iter().any(|s| s.name == spec.name) {
        return Err(ControlError::Invalid(format!(
            "backend '{backend}' already has a server named '{}'",
            spec.name
        )));
    }
    if spec.name.is_empty() || spec.name.contains(['/', ' ', '\t']) {
        return Err(ControlError::Invalid(format!(
            "invalid server name '{}': it must be non-empty, without '/' or spaces",
            spec.name
        )));
    }
    let model = be.servers.first();
    let check = match (spec.check, model.and_then(|m| m.check.as_ref())) {
        (false, _) => None,
        (true, Some(c)) => {
            let mut c = c.clone();
            c.address = retarget(c.address, model.map(|m| m.address), spec.address);
            Some(c)
        }
        (true, None) => {
            return Err(ControlError::Invalid(format!(
                "backend '{backend}' has no checked server to take the check settings from; \
                 add the server in the configuration file"
            )))
        }
    };
    be.servers.push(Server {
        name: spec.name.clone(),
        address: spec.address,
        weight: spec.weight.unwrap_or(1),
        backup: false,
        maxconn: spec.maxconn,
        check,
        tls: model.and_then(|m| m.tls.clone()),
        // As in HAProxy, and as the reply says: traffic only after `enable server`.
        disabled: true,
        proxy_protocol: model.and_then(|m| m.proxy_protocol),
        proxy_v2: model.map(|m| m.proxy_v2.clone()).unwrap_or_default(),
        proto: model.map(|m| m.proto).unwrap_or_default(),
        ws: model.map(|m| m.ws).unwrap_or_default(),
        resolve: None,
    });
    if let Some(cookie) = be.cookie.as_mut() {
        if cookie.values.contains(&spec.name) {
            return Err(ControlError::Invalid(format!(
                "cookie value '{}' is already used by another server of '{backend}'",
                spec.name
            )));
        }
        cookie.values.push(spec.name.clone());
    }
    Ok(config)
}

/// The check address for a server moved from `model` to `new`: the same port offset rule as a
/// server's own check (a check on the server's port follows the new port; one on another port
/// keeps that port).
fn retarget(check: SocketAddr, model: Option<SocketAddr>, new: SocketAddr) -> SocketAddr {
    let port = match model {
        Some(m) if m.port() != check.port() => check.port(),
        _ => new.port(),
    };
    SocketAddr::new(new.ip(), port)
}

/// `config` without `server` of `backend`, which must be in maintenance (`disable server`)
/// so that no new request goes to it.
pub fn with_deleted(
    config: &Config,
    stats: &StatsSnapshot,
    backend: &str,
    server: &str,
) -> Result<Config, ControlError> {
    let mut config = config.clone();
    let b = config
        .backend_index(backend)
        .ok_or_else(|| ControlError::UnknownBackend(backend.to_owned()))?;
    let be = &mut config.backends[b];
    let s = be
        .servers
        .iter()
        .position(|x| x.name == server)
        .ok_or_else(|| ControlError::UnknownServer {
            backend: backend.to_owned(),
            server: server.to_owned(),
        })?;
    let admin = stats
        .status
        .get(b)
        .and_then(|v| v.get(s))
        .map(|st| st.admin);
    if admin != Some(AdminState::Maint) {
        return Err(ControlError::Invalid(format!(
            "server {backend}/{server} must be in maintenance first (disable server {backend}/{server})"
        )));
    }
    if be.servers.len() == 1 {
        return Err(ControlError::Invalid(format!(
            "server {backend}/{server} is the last server of its backend"
        )));
    }
    be.servers.remove(s);
    if let Some(cookie) = be.cookie.as_mut() {
        if s < cookie.values.len() {
            cookie.values.remove(s);
        }
    }
    Ok(config)
}
