//! One session with a remote peer: the handshake, then messages both ways until the peer
//! goes quiet for [`TIMEOUT`], sends something malformed, or a newer session replaces it.
//!
//! Reads are bounded (a message is at most `tern_peers::MAX_PAYLOAD` bytes, a hello three
//! 256-byte lines), writes time out after [`TIMEOUT`], and a session learns at most
//! [`MAX_TABLES`] table definitions. A malformed message is logged with the peer's name,
//! counted in the peer's `errors`, answered with a protocol error message, and ends the
//! session; the connector reconnects.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use tern_peers::{decode, encode, Control, Hello, Message, Status, TableDef, Update};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::OwnedWriteHalf;
use tokio::net::TcpStream;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::Notify;
use tokio::time::Instant;
use tracing::{debug, info, warn};

use super::image::{self, DICT_ENTRIES};
use super::link::next_id;
use super::{Section, Shared};
use crate::exchange::servers::now;

/// A peer silent for this long is gone (HAProxy's 5 s).
pub(super) const TIMEOUT: Duration = Duration::from_secs(5);
/// A heartbeat is sent after this long without sending (HAProxy's 3 s).
const HEARTBEAT: Duration = Duration::from_secs(3);
/// The most table definitions a session keeps.
const MAX_TABLES: usize = 256;

/// This node connected to remote peer `i`: hello, status, then the session. Returns whether a
/// session was established.
pub(super) async fn connected(s: Arc<Section>, i: usize, mut stream: TcpStream) -> bool {
    let p = &s.peers[i];
    let hello = Hello {
        remote: p.name.clone(),
        local: s.cfg.local.clone(),
        pid: std::process::id(),
        relative_pid: 1,
    };
    let status = async {
        stream.write_all(hello.encode().as_bytes()).await.ok()?;
        let mut buf = Vec::new();
        loop {
            let mut chunk = [0u8; 64];
            let n = stream.read(&mut chunk).await.ok()?;
            if n == 0 {
                return None;
            }
            buf.extend_from_slice(&chunk[..n]);
            match Status::parse(&buf) {
                Ok(Some((status, used))) => return Some((status, buf.split_off(used))),
                Ok(None) => {}
                Err(_) => return None,
            }
        }
    };
    let Ok(Some((status, rest))) = tokio::time::timeout(TIMEOUT, status).await else {
        debug!(peer = %p.name, "peers: no status from the peer");
        return false;
    };
    if status != Status::Ok {
        debug!(peer = %p.name, code = status.code(), "peers: the peer declined the session");
        return false;
    }
    let id = next_id();
    let close = Arc::new(Notify::new());
    if !p.claim(&s.cfg.local, id, true, &close) {
        return false;
    }
    info!(peers = %s.cfg.name, peer = %p.name, "peers: session up (connected)");
    run(&s, i, stream, rest, &close).await;
    p.release(id);
    true
}

/// A peer connected to this node: read its hello, answer, then the session.
pub(super) async fn accepted(
    s: Arc<Section>,
    mut stream: TcpStream,
    from: SocketAddr,
    handshake: tokio::sync::OwnedSemaphorePermit,
) {
    let hello = async {
        let mut buf = Vec::new();
        loop {
            let mut chunk = [0u8; 256];
            let n = stream.read(&mut chunk).await.map_err(|_| "read failed")?;
            if n == 0 {
                return Err("closed during the hello");
            }
            buf.extend_from_slice(&chunk[..n]);
            match Hello::parse(&buf) {
                Ok(Some((hello, used))) => return Ok((hello, buf.split_off(used))),
                Ok(None) => {}
                Err(tern_peers::Error::Bad("version")) => return Err("version"),
                Err(_) => return Err("not a peers hello"),
            }
        }
    };
    let refuse = |why: &str| {
        s.refused.fetch_add(1, Ordering::Relaxed);
        warn!(peers = %s.cfg.name, from = %from, "peers: refused a connection: {why}");
    };
    let (hello, rest) = match tokio::time::timeout(TIMEOUT, hello).await {
        Ok(Ok(h)) => h,
        Ok(Err(why)) => {
            refuse(why);
            let status = if why == "version" {
                Status::BadVersion
            } else {
                Status::ProtocolError
            };
            let _ = stream.write_all(status.line().as_bytes()).await;
            return;
        }
        Err(_) => return refuse("no hello within 5s"),
    };
    drop(handshake);
    let answer = if hello.remote != s.cfg.local {
        refuse(&format!(
            "the hello is for peer '{}', this node is '{}'",
            hello.remote, s.cfg.local
        ));
        Status::LocalMismatch
    } else if let Some(i) = s.peers.iter().position(|p| p.name == hello.local) {
        let id = next_id();
        let close = Arc::new(Notify::new());
        if s.peers[i].claim(&s.cfg.local, id, false, &close) {
            if stream.write_all(Status::Ok.line().as_bytes()).await.is_ok() {
                info!(peers = %s.cfg.name, peer = %hello.local, "peers: session up (accepted)");
                run(&s, i, stream, rest, &close).await;
            }
            s.peers[i].release(id);
            return;
        }
        Status::TryAgain
    } else {
        refuse(&format!("unknown peer '{}'", hello.local));
        Status::RemoteMismatch
    };
    let _ = stream.write_all(answer.line().as_bytes()).await;
}

/// What a session knows of the peer's tables.
#[derive(Debug)]
struct Remote {
    def: TableDef,
    /// The local table of the same name, key type and key length.
    local: Option<usize>,
    /// The last update number received, and whether it is still to acknowledge.
    last: u32,
    unacked: bool,
}

/// The state of a running session.
struct Session<'a> {
    s: &'a Section,
    peer: usize,
    out: Vec<u8>,
    remotes: Vec<Remote>,
    current: Option<usize>,
    dict: Vec<Option<Vec<u8>>>,
    /// The local table last defined to the peer, and the next update number of each table.
    sent_table: Option<usize>,
    next_update: Vec<u32>,
    last_send: Instant,
}

async fn run(s: &Section, peer: usize, stream: TcpStream, rest: Vec<u8>, close: &Notify) {
    let p = &s.peers[peer];
    let (mut rd, mut wr) = stream.into_split();
    let mut updates = s.updates.subscribe();
    let mut st = Session {
        s,
        peer,
        out: Vec::new(),
        remotes: Vec::new(),
        current: None,
        dict: vec![None; DICT_ENTRIES as usize],
        sent_table: None,
        next_update: vec![1; s.tables.len()],
        last_send: Instant::now(),
    };
    for t in 0..s.tables.len() {
        st.define(t);
    }
    // What changed while there was no session is sent again (HAProxy resends from the last
    // update the peer acknowledged; tern keeps no history, so it sends every entry).
    st.teach_entries();
    if !p.resync_asked.swap(true, Ordering::AcqRel) {
        encode(&Message::Control(Control::ResyncRequest), &mut st.out);
    }
    let mut buf = rest;
    let mut last_rx = Instant::now();
    let why = loop {
        if let Err(why) = st.read_messages(&mut buf) {
            p.errors.fetch_add(1, Ordering::Relaxed);
            warn!(peers = %s.cfg.name, peer = %p.name, "peers: malformed message, closing the session: {why}");
            encode(&Message::Error(0), &mut st.out);
            let _ = st.flush(&mut wr).await;
            break "malformed message".to_owned();
        }
        if st.flush(&mut wr).await.is_err() {
            break "write failed or timed out".to_owned();
        }
        let mut chunk = [0u8; 16 * 1024];
        let idle = st.last_send + HEARTBEAT;
        tokio::select! {
            r = rd.read(&mut chunk) => match r {
                Ok(0) => break "closed by the peer".to_owned(),
                Ok(n) => {
                    // At most one partial message is kept between reads.
                    if buf.len() + n > tern_peers::MAX_PAYLOAD + 16 + chunk.len() {
                        p.errors.fetch_add(1, Ordering::Relaxed);
                        break "message larger than the limit".to_owned();
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    last_rx = Instant::now();
                    p.last_rx.store(now(), Ordering::Relaxed);
                }
                Err(e) => break format!("read failed: {e}"),
            },
            b = updates.recv() => match b {
                Ok(batch) => st.send_batch(&batch),
                Err(RecvError::Lagged(n)) => {
                    warn!(peers = %s.cfg.name, peer = %p.name, batches = n, "peers: the peer fell behind, sending every entry again");
                    p.errors.fetch_add(1, Ordering::Relaxed);
                    st.teach_entries();
                }
                Err(RecvError::Closed) => break "stopping".to_owned(),
            },
            _ = tokio::time::sleep_until(idle) => {
                encode(&Message::Control(Control::Heartbeat), &mut st.out);
            }
            _ = tokio::time::sleep_until(last_rx + TIMEOUT) => break "no message for 5s".to_owned(),
            _ = close.notified() => break "replaced by another session".to_owned(),
        }
    };
    info!(peers = %s.cfg.name, peer = %p.name, "peers: session down: {why}");
}

impl Session<'_> {
    /// Sends table `t`'s definition (it also makes `t` the table later updates belong to).
    fn define(&mut self, t: usize) {
        if let Some(shared) = self.s.tables.get(t) {
            encode(&Message::Define(shared.def.clone()), &mut self.out);
            self.sent_table = Some(t);
        }
    }

    fn send_update(&mut self, t: usize, mut u: Update) {
        if self.sent_table != Some(t) {
            self.define(t);
        }
        let Some(shared) = self.s.tables.get(t) else {
            return;
        };
        let Some(next) = self.next_update.get_mut(t) else {
            return;
        };
        u.id = Some(*next);
        *next = next.wrapping_add(1);
        debug!(table = %shared.def.name, key = ?u.key, id = ?u.id, "peers: sending an update");
        let mut payload = Vec::new();
        u.encode(&shared.def, &mut payload);
        encode(
            &Message::Update {
                kind: tern_peers::UpdateKind::Full,
                payload,
            },
            &mut self.out,
        );
        self.s.peers[self.peer].sent.fetch_add(1, Ordering::Relaxed);
    }

    fn send_batch(&mut self, batch: &[(usize, Update)]) {
        for (t, u) in batch {
            self.send_update(*t, u.clone());
        }
    }

    /// Every entry of every table.
    fn teach_entries(&mut self) {
        let now = now();
        for t in 0..self.s.tables.len() {
            let shared: &Shared = &self.s.tables[t];
            for u in image::all(self.s, shared, now) {
                self.send_update(t, u);
            }
        }
    }

    /// A full resync: every entry, then "resync finished".
    fn teach_all(&mut self) {
        self.teach_entries();
        encode(&Message::Control(Control::ResyncFinished), &mut self.out);
    }

    /// Handles every whole message in `buf`, then acknowledges the updates taken.
    fn read_messages(&mut self, buf: &mut Vec<u8>) -> Result<(), String> {
        let mut used = 0;
        while let Some((m, n)) = decode(&buf[used..]).map_err(|e| e.to_string())? {
            used += n;
            self.handle(m)?;
        }
        buf.drain(..used);
        for r in &mut self.remotes {
            if std::mem::take(&mut r.unacked) {
                let ack = Message::Ack {
                    table: r.def.id,
                    update: r.last,
                };
                encode(&ack, &mut self.out);
            }
        }
        Ok(())
    }

    fn handle(&mut self, m: Message) -> Result<(), String> {
        let p = &self.s.peers[self.peer];
        match m {
            Message::Control(Control::ResyncRequest) => self.teach_all(),
            Message::Control(Control::ResyncFinished | Control::ResyncPartial) => {
                encode(&Message::Control(Control::ResyncConfirm), &mut self.out);
            }
            Message::Control(Control::ResyncConfirm) => {}
            Message::Control(Control::Heartbeat) => {
                p.last_heartbeat.store(now(), Ordering::Relaxed)
            }
            Message::Error(e) => return Err(format!("the peer reported error {e}")),
            Message::Define(def) => self.defined(def)?,
            Message::Switch(id) => {
                let i = self.remotes.iter().position(|r| r.def.id == id);
                self.current = Some(i.ok_or("switch to a table never defined")?);
            }
            Message::Ack { .. } => {}
            Message::Update { kind, payload } => self.update(kind, &payload)?,
        }
        Ok(())
    }

    fn defined(&mut self, def: TableDef) -> Result<(), String> {
        let local = self.s.tables.iter().position(|t| {
            t.def.name == def.name && t.def.key_type == def.key_type && t.def.key_len == def.key_len
        });
        if local.is_none() {
            debug!(table = %def.name, "peers: a table of the peer with no match here, its updates are skipped");
        }
        let known = self.remotes.iter().position(|r| r.def.id == def.id);
        let remote = Remote {
            def,
            local,
            last: 0,
            unacked: false,
        };
        let i = match known {
            Some(i) => {
                self.remotes[i] = remote;
                i
            }
            None if self.remotes.len() >= MAX_TABLES => return Err("too many tables".to_owned()),
            None => {
                self.remotes.push(remote);
                self.remotes.len() - 1
            }
        };
        self.current = Some(i);
        Ok(())
    }

    fn update(&mut self, kind: tern_peers::UpdateKind, payload: &[u8]) -> Result<(), String> {
        let i = self
            .current
            .ok_or("an update before any table definition")?;
        let r = &mut self.remotes[i];
        let id = if kind.with_id() {
            None
        } else {
            Some(r.last.wrapping_add(1))
        };
        if !r.def.known() {
            // A data type this version cannot decode: the table is skipped, not the session.
            r.last = id.unwrap_or(r.last);
            return Ok(());
        }
        let u = Update::decode(&r.def, payload, kind.with_id(), kind.timed())
            .map_err(|e| format!("update of table '{}': {e}", r.def.name))?;
        r.last = u.id.or(id).unwrap_or(r.last);
        r.unacked = true;
        // Remember the dictionary entries sent in full.
        if let Some(tern_peers::Value::Dict { id, text: Some(t) }) =
            u.get(tern_peers::table::dt::SERVER_KEY)
        {
            let slot = usize::try_from(*id).ok().and_then(|i| i.checked_sub(1));
            match slot.and_then(|i| self.dict.get_mut(i)) {
                Some(entry) => *entry = Some(t.clone()),
                None => return Err(format!("dictionary entry {id} beyond {DICT_ENTRIES}")),
            }
        }
        let p = &self.s.peers[self.peer];
        p.received.fetch_add(1, Ordering::Relaxed);
        if let Some(local) = r.local.and_then(|l| self.s.tables.get(l)) {
            image::apply(self.s, local, &u, &self.dict, now());
        }
        Ok(())
    }

    /// Writes what is queued, within [`TIMEOUT`].
    async fn flush(&mut self, wr: &mut OwnedWriteHalf) -> Result<(), ()> {
        if self.out.is_empty() {
            return Ok(());
        }
        let out = std::mem::take(&mut self.out);
        match tokio::time::timeout(TIMEOUT, wr.write_all(&out)).await {
            Ok(Ok(())) => {
                self.last_send = Instant::now();
                Ok(())
            }
            _ => Err(()),
        }
    }
}
