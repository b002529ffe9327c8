//! The thread of a generation's peers: per section a listener, a connector per remote peer and
//! the pump; the state of each remote peer (its one session, its counters).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Notify};
use tracing::{debug, info, warn};

use super::{image, session, Section, PUMP_EVERY};
use crate::exchange::servers::now;

/// Accepted connections that may wait for their hello at once.
const MAX_HANDSHAKES: usize = 64;

/// The longest wait between two connection attempts to a peer.
const MAX_BACKOFF: Duration = Duration::from_secs(3);

/// The session a peer has now.
#[derive(Debug)]
struct Active {
    id: u64,
    /// This node connected.
    ours: bool,
    close: Arc<Notify>,
}

/// A remote peer.
#[derive(Debug)]
pub(super) struct PeerState {
    pub name: String,
    pub address: SocketAddr,
    slot: Mutex<Option<Active>>,
    connected: AtomicBool,
    /// `now()` of the last message received, and of the last heartbeat (0: never).
    pub last_rx: AtomicU64,
    pub last_heartbeat: AtomicU64,
    pub sent: AtomicU64,
    pub received: AtomicU64,
    pub errors: AtomicU64,
    pub sessions: AtomicU64,
    /// A full resync was asked of this peer (once per generation).
    pub resync_asked: AtomicBool,
}

impl PeerState {
    pub(super) fn new(name: &str, address: SocketAddr) -> Self {
        Self {
            name: name.to_owned(),
            address,
            slot: Mutex::new(None),
            connected: AtomicBool::new(false),
            last_rx: AtomicU64::new(0),
            last_heartbeat: AtomicU64::new(0),
            sent: AtomicU64::new(0),
            received: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            sessions: AtomicU64::new(0),
            resync_asked: AtomicBool::new(false),
        }
    }

    /// Takes the peer's session slot for session `id` (`ours`: this node connected). When
    /// another session holds it, the one started by the peer whose name sorts first stays
    /// (between two sessions started by the same side, the newer); false when `id` lost.
    pub(super) fn claim(&self, local: &str, id: u64, ours: bool, close: &Arc<Notify>) -> bool {
        let mut slot = self.slot.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(a) = slot.as_ref() {
            let starter = |ours: bool| if ours { local } else { self.name.as_str() };
            let new_wins = a.ours == ours || starter(ours) < starter(a.ours);
            if !new_wins {
                return false;
            }
            a.close.notify_one();
        }
        *slot = Some(Active {
            id,
            ours,
            close: Arc::clone(close),
        });
        self.connected.store(true, Ordering::Release);
        self.sessions.fetch_add(1, Ordering::Relaxed);
        true
    }

    /// Session `id` ended.
    pub(super) fn release(&self, id: u64) {
        let mut slot = self.slot.lock().unwrap_or_else(|e| e.into_inner());
        if slot.as_ref().is_some_and(|a| a.id == id) {
            *slot = None;
            self.connected.store(false, Ordering::Release);
        }
    }

    fn is_free(&self) -> bool {
        self.slot
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_none()
    }

    pub(super) fn counts(&self) -> (bool, u64, u64, u64) {
        (
            self.connected.load(Ordering::Acquire),
            self.sent.load(Ordering::Relaxed),
            self.received.load(Ordering::Relaxed),
            self.errors.load(Ordering::Relaxed),
        )
    }

    /// One line of `show peers`.
    pub(super) fn show(&self) -> String {
        let ago = |at: u64| {
            if at == 0 {
                "never".to_owned()
            } else {
                format!("{}ms", now().saturating_sub(at) / 1_000_000)
            }
        };
        let (connected, sent, received, errors) = self.counts();
        format!(
            "{} addr={} state={} last_rx={} last_heartbeat={} sessions={} updates_sent={} updates_received={} errors={}",
            self.name,
            self.address,
            if connected { "connected" } else { "disconnected" },
            ago(self.last_rx.load(Ordering::Relaxed)),
            ago(self.last_heartbeat.load(Ordering::Relaxed)),
            self.sessions.load(Ordering::Relaxed),
            sent,
            received,
            errors
        )
    }
}

/// The thread's body: runs every section until `stop` turns true.
pub(super) fn run(sections: Vec<Arc<Section>>, mut stop: watch::Receiver<bool>) {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            warn!(error = %e, "peers: no runtime, stick tables are not shared");
            return;
        }
    };
    rt.block_on(async move {
        for s in &sections {
            tokio::spawn(listen(Arc::clone(s)));
            tokio::spawn(pump(Arc::clone(s)));
            for i in 0..s.peers.len() {
                tokio::spawn(connect(Arc::clone(s), i));
            }
        }
        while !*stop.borrow_and_update() {
            if stop.changed().await.is_err() {
                break;
            }
        }
    });
}

/// Session ids, unique in the process.
pub(super) fn next_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Accepts the peers' connections; binding is retried (the previous generation or process
/// may still hold the address for a moment after a reload or an upgrade).
async fn listen(s: Arc<Section>) {
    let mut wait = Duration::from_millis(50);
    let listener = loop {
        match TcpListener::bind(s.cfg.bind).await {
            Ok(l) => break l,
            Err(e) => {
                if wait >= Duration::from_secs(1) {
                    warn!(peers = %s.cfg.name, bind = %s.cfg.bind, error = %e, "peers: cannot listen yet, retrying");
                }
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(MAX_BACKOFF);
            }
        }
    };
    info!(peers = %s.cfg.name, bind = %s.cfg.bind, local = %s.cfg.local, "peers: listening");
    let handshakes = Arc::new(tokio::sync::Semaphore::new(MAX_HANDSHAKES));
    loop {
        match listener.accept().await {
            Ok((stream, from)) => {
                // Updates are small messages each worth sending at once (see `nodelay`).
                nodelay(&stream);
                // Connections not yet past their hello are bounded: more are closed at once.
                let Some(permit) = Arc::clone(&handshakes).try_acquire_owned().ok() else {
                    s.refused.fetch_add(1, Ordering::Relaxed);
                    warn!(peers = %s.cfg.name, from = %from, "peers: refused a connection: {MAX_HANDSHAKES} hellos pending");
                    continue;
                };
                tokio::spawn(session::accepted(Arc::clone(&s), stream, from, permit));
            }
            Err(e) => {
                warn!(peers = %s.cfg.name, error = %e, "peers: accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// Keeps a session with remote peer `i`: connects whenever it has none, backing off after
/// failures (50 ms doubling to 3 s, with jitter so two nodes do not retry in step).
async fn connect(s: Arc<Section>, i: usize) {
    let mut wait = Duration::from_millis(50);
    loop {
        let p = &s.peers[i];
        if !p.is_free() {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        }
        let ok = match tokio::time::timeout(session::TIMEOUT, TcpStream::connect(p.address)).await {
            Ok(Ok(stream)) => {
                nodelay(&stream);
                session::connected(Arc::clone(&s), i, stream).await
            }
            Ok(Err(_)) | Err(_) => false,
        };
        if ok {
            wait = Duration::from_millis(50);
        } else {
            wait = (wait * 2).min(MAX_BACKOFF);
        }
        let jitter = Duration::from_millis(now() % 50);
        tokio::time::sleep(wait + jitter).await;
    }
}

/// Turns Nagle's algorithm off on a peer connection: an update written while the previous one
/// is unacknowledged would otherwise wait for the peer's delayed ACK (up to 40 ms), longer
/// than the pump's interval, and a shared rate limit would count late on the other nodes.
fn nodelay(stream: &TcpStream) {
    if let Err(e) = stream.set_nodelay(true) {
        debug!(error = %e, "peers: cannot set TCP_NODELAY");
    }
}

/// Every [`PUMP_EVERY`], hands the changed entries to the sessions.
async fn pump(s: Arc<Section>) {
    let mut tick = tokio::time::interval(PUMP_EVERY);
    loop {
        tick.tick().await;
        let batch = image::changed(&s, now());
        if !batch.is_empty() && s.updates.receiver_count() > 0 {
            let _ = s.updates.send(Arc::new(batch));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crossing_sessions_keep_the_one_the_first_name_started() {
        let addr: SocketAddr = ([127, 0, 0, 1], 1).into();
        let close = Arc::new(Notify::new());
        // Seen from node "b", peer "a": a's session (incoming) beats b's own (outgoing).
        let a = PeerState::new("a", addr);
        assert!(a.claim("b", 1, true, &close));
        assert!(a.claim("b", 2, false, &close));
        assert!(!a.claim("b", 3, true, &close));
        // A newer session started by the same side replaces the older.
        assert!(a.claim("b", 4, false, &close));
        a.release(2);
        assert!(!a.is_free());
        a.release(4);
        assert!(a.is_free());
        // Seen from node "a", peer "b": a's own session wins.
        let b = PeerState::new("b", addr);
        assert!(b.claim("a", 5, true, &close));
        assert!(!b.claim("a", 6, false, &close));
        assert_eq!(b.sessions.load(Ordering::Relaxed), 1);
    }
}
