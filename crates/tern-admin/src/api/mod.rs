//! The control API: a Unix socket (`control.socket`) and an optional HTTP listener
//! (`control.http`), both off the data path.
//!
//! [`spawn`] binds what `[control]` asks for in the caller's thread, so a bad path or a busy
//! port is reported at start-up, then serves both from one thread of its own with a
//! current-thread tokio runtime: the workers never run control code, and a burst of scrapes or
//! a slow command cannot take CPU time from a worker's event loop beyond that one thread.
//! Commands run on that runtime's blocking pool.
//!
//! - `command.rs`: the command language; `exec.rs`: running a command against [`Control`];
//!   `text.rs`: text answers; `rates.rs`: the per-second rates of `show info`.
//! - `unix.rs` + `socket_file.rs` + `wire.rs`: the socket, its file, and its framing.
//! - `http.rs`: the HTTP routes and the token rule.

pub mod command;
pub mod exec;
pub mod http;
mod http_auth;
pub mod object_rates;
pub mod rates;
pub mod socket_file;
mod text;
pub mod unix;
pub mod wire;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use tern_config::ControlSettings;
use tokio::sync::watch;

use crate::control::Control;
use exec::Context;
use rates::Rates;
use socket_file::{Existing, OwnedPath};

/// Why the control API could not start.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("control socket `{path}`: {message}")]
    Socket { path: PathBuf, message: String },
    #[error("control HTTP listener {addr}: {source}")]
    Http {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("cannot start the control API: {0}")]
    Start(std::io::Error),
}

/// How to start when a previous tern is still around.
#[derive(Debug, Default)]
pub struct Options {
    /// Take over the socket path even if a live process answers there (a binary upgrade: the
    /// old process keeps its open connections, new ones reach the new process).
    pub replace_live_socket: bool,
    /// A listening socket to serve HTTP on instead of binding `control.http` (inherited from
    /// the old process in a binary upgrade, see [`ApiHandle::http_listener`]).
    pub http_listener: Option<std::net::TcpListener>,
}

/// The running control API; dropping it (or [`ApiHandle::stop`]) stops it and removes the
/// socket file if the path still holds our socket.
#[derive(Debug)]
pub struct ApiHandle {
    stop: watch::Sender<bool>,
    thread: Option<JoinHandle<()>>,
    socket: Option<OwnedPath>,
    http: Option<std::net::TcpListener>,
}

impl ApiHandle {
    /// The socket path, when there is a socket.
    pub fn socket_path(&self) -> Option<&Path> {
        self.socket.as_ref().map(|s| s.path.as_path())
    }

    /// The HTTP listener's address (with the real port when `control.http` asked for port 0).
    pub fn http_addr(&self) -> Option<SocketAddr> {
        self.http.as_ref().and_then(|l| l.local_addr().ok())
    }

    /// The HTTP listening socket, to hand to a new process in a binary upgrade.
    pub fn http_listener(&self) -> Option<&std::net::TcpListener> {
        self.http.as_ref()
    }

    /// Stops serving and waits for the API thread (at most about a second more if a command
    /// is running: it finishes on its own).
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        let _ = self.stop.send(true);
        if let Some(thread) = self.thread.take() {
            if thread.join().is_err() {
                tracing::error!("control: the API thread panicked");
            }
        }
        if let Some(socket) = self.socket.take() {
            socket.remove();
        }
    }
}

impl Drop for ApiHandle {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Starts the control API that `settings` describes (nothing when it names neither a socket
/// nor an HTTP address). Refuses to replace a socket another process answers on.
pub fn spawn(control: Arc<dyn Control>, settings: &ControlSettings) -> Result<ApiHandle, ApiError> {
    spawn_with(control, settings, Options::default())
}

/// [`spawn`], with [`Options`] for a binary upgrade.
pub fn spawn_with(
    control: Arc<dyn Control>,
    settings: &ControlSettings,
    options: Options,
) -> Result<ApiHandle, ApiError> {
    let (stop, stop_rx) = watch::channel(false);
    let mut handle = ApiHandle {
        stop,
        thread: None,
        socket: None,
        http: None,
    };
    let existing = if options.replace_live_socket {
        Existing::Replace
    } else {
        Existing::Refuse
    };
    let socket = match &settings.socket {
        Some(path) => {
            let file =
                socket_file::bind(path, settings.socket_mode, existing).map_err(|message| {
                    ApiError::Socket {
                        path: path.clone(),
                        message,
                    }
                })?;
            handle.socket = Some(file.owned);
            Some(file.listener)
        }
        None => None,
    };
    let http = match (options.http_listener, settings.http) {
        (Some(listener), _) => Some(listener),
        (None, Some(addr)) => Some(
            std::net::TcpListener::bind(addr).map_err(|source| ApiError::Http { addr, source })?,
        ),
        (None, None) => None,
    };
    if socket.is_none() && http.is_none() {
        return Ok(handle);
    }
    let http_std = match &http {
        Some(listener) => Some(listener.try_clone().map_err(ApiError::Start)?),
        None => None,
    };
    handle.http = http;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .thread_name("tern-control")
        .build()
        .map_err(ApiError::Start)?;
    let ctx = Context {
        control,
        rates: Rates::default(),
        object_rates: object_rates::ObjectRates::default(),
    };
    let http_settings = http::HttpSettings {
        token: settings.token.clone(),
        stats_refresh: settings.stats_refresh,
        auth: settings.auth.clone(),
    };
    let thread = std::thread::Builder::new()
        .name("tern-control".into())
        .spawn(move || run(runtime, ctx, socket, http_std, http_settings, stop_rx))
        .map_err(ApiError::Start)?;
    handle.thread = Some(thread);
    Ok(handle)
}

/// The API thread: serves until stopped.
fn run(
    runtime: tokio::runtime::Runtime,
    ctx: Context,
    socket: Option<std::os::unix::net::UnixListener>,
    http: Option<std::net::TcpListener>,
    http_settings: http::HttpSettings,
    stop: watch::Receiver<bool>,
) {
    runtime.block_on(async move {
        let mut tasks = tokio::task::JoinSet::new();
        if let Some(listener) = socket {
            match listener
                .set_nonblocking(true)
                .and_then(|()| tokio::net::UnixListener::from_std(listener))
            {
                Ok(l) => {
                    tasks.spawn(unix::serve(l, ctx.clone(), stop.clone()));
                }
                Err(e) => tracing::error!("control: cannot serve the Unix socket: {e}"),
            }
        }
        if let Some(listener) = http {
            match listener
                .set_nonblocking(true)
                .and_then(|()| tokio::net::TcpListener::from_std(listener))
            {
                Ok(l) => {
                    tasks.spawn(http::serve(l, ctx.clone(), http_settings, stop.clone()));
                }
                Err(e) => tracing::error!("control: cannot serve HTTP: {e}"),
            }
        }
        tasks.spawn(sample_rates(ctx, stop));
        // Every task returns once stopped.
        while tasks.join_next().await.is_some() {}
    });
    // A command still running on the blocking pool finishes on its own.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
}

/// Resolves once the API is told to stop (also if that happened before the call).
pub(crate) async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|stopped| *stopped).await;
}

/// Samples the totals for `show info`'s rates.
async fn sample_rates(ctx: Context, mut stop: watch::Receiver<bool>) {
    let mut tick = tokio::time::interval(rates::SAMPLE_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = stopped(&mut stop) => return,
            _ = tick.tick() => {}
        }
        let control = ctx.control.clone();
        if let Ok(view) = tokio::task::spawn_blocking(move || control.view()).await {
            let now = Instant::now();
            ctx.rates.record(&view.stats, now);
            ctx.object_rates.record(&view, now);
        }
    }
}
