//! Framing: a class byte, a type byte, and for types from 128 a varint length and a payload.
//! Table definitions and acknowledgements are decoded here; an update's payload is kept for
//! the caller, which decodes it with the definition it belongs to ([`crate::Update::decode`]).

use crate::table::TableDef;
use crate::varint::{self, Reader};
use crate::{Error, MAX_PAYLOAD};

const CLASS_CONTROL: u8 = 0;
const CLASS_ERROR: u8 = 1;
const CLASS_TABLE: u8 = 10;

const T_UPDATE: u8 = 128;
const T_INCUPDATE: u8 = 129;
const T_DEFINE: u8 = 130;
const T_SWITCH: u8 = 131;
const T_ACK: u8 = 132;
const T_UPDATE_TIMED: u8 = 133;
const T_INCUPDATE_TIMED: u8 = 134;

/// A control message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// Asks the peer for every entry it holds (a full resync).
    ResyncRequest,
    /// The entries were all sent and the sender is up to date.
    ResyncFinished,
    /// The entries were all sent but the sender is not up to date itself.
    ResyncPartial,
    /// Acknowledges a finished or partial resync.
    ResyncConfirm,
    Heartbeat,
}

/// The four kinds of entry update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateKind {
    /// Carries its update number.
    Full,
    /// Numbered one more than the previous update.
    Incremental,
    /// [`UpdateKind::Full`] with the entry's remaining life.
    Timed,
    /// [`UpdateKind::Incremental`] with the entry's remaining life.
    IncrementalTimed,
}

impl UpdateKind {
    pub fn with_id(self) -> bool {
        matches!(self, UpdateKind::Full | UpdateKind::Timed)
    }

    pub fn timed(self) -> bool {
        matches!(self, UpdateKind::Timed | UpdateKind::IncrementalTimed)
    }
}

/// A message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    Control(Control),
    /// The peer found an error in what it received (1: a message too large).
    Error(u8),
    Define(TableDef),
    /// Updates that follow belong to the sender's table `id`.
    Switch(u64),
    /// The receiver of table `table`'s updates holds them up to update `update`.
    Ack {
        table: u64,
        update: u32,
    },
    /// An entry update, to decode with the current table's definition.
    Update {
        kind: UpdateKind,
        payload: Vec<u8>,
    },
}

/// The message at the front of `buf`: `None` until it arrived whole, else the message and the
/// bytes it took.
pub fn decode(buf: &[u8]) -> Result<Option<(Message, usize)>, Error> {
    let [class, kind, rest @ ..] = buf else {
        return Ok(None);
    };
    let (class, kind) = (*class, *kind);
    if kind < 128 {
        let m = match (class, kind) {
            (CLASS_CONTROL, 0) => Message::Control(Control::ResyncRequest),
            (CLASS_CONTROL, 1) => Message::Control(Control::ResyncFinished),
            (CLASS_CONTROL, 2) => Message::Control(Control::ResyncPartial),
            (CLASS_CONTROL, 3) => Message::Control(Control::ResyncConfirm),
            (CLASS_CONTROL, 4) => Message::Control(Control::Heartbeat),
            (CLASS_ERROR, 0 | 1) => Message::Error(kind),
            (CLASS_CONTROL | CLASS_ERROR | CLASS_TABLE, _) => {
                return Err(Error::UnknownType(class, kind))
            }
            _ => return Err(Error::UnknownClass(class)),
        };
        return Ok(Some((m, 2)));
    }
    let (len, n) = match varint::get(rest) {
        Ok(v) => v,
        Err(Error::Truncated(_)) if rest.len() < 10 => return Ok(None),
        Err(e) => return Err(e),
    };
    if len > MAX_PAYLOAD as u64 {
        return Err(Error::TooLarge(len));
    }
    let len = len as usize;
    let Some(payload) = rest.get(n..n + len) else {
        return Ok(None);
    };
    if class != CLASS_TABLE {
        return Err(if class == CLASS_CONTROL || class == CLASS_ERROR {
            Error::UnknownType(class, kind)
        } else {
            Error::UnknownClass(class)
        });
    }
    let update = |kind| Message::Update {
        kind,
        payload: payload.to_vec(),
    };
    let m = match kind {
        T_UPDATE => update(UpdateKind::Full),
        T_INCUPDATE => update(UpdateKind::Incremental),
        T_UPDATE_TIMED => update(UpdateKind::Timed),
        T_INCUPDATE_TIMED => update(UpdateKind::IncrementalTimed),
        T_DEFINE => Message::Define(TableDef::decode(payload)?),
        T_SWITCH => {
            let mut r = Reader::new(payload);
            let id = r.varint()?;
            r.finish("switch")?;
            Message::Switch(id)
        }
        T_ACK => {
            let mut r = Reader::new(payload);
            let table = r.varint()?;
            let update = r.u32_be("ack update id")?;
            r.finish("ack")?;
            Message::Ack { table, update }
        }
        _ => return Err(Error::UnknownType(class, kind)),
    };
    Ok(Some((m, 2 + n + len)))
}

/// Appends `m` to `out`.
pub fn encode(m: &Message, out: &mut Vec<u8>) {
    let mut payload = Vec::new();
    let (class, kind) = match m {
        Message::Control(c) => {
            let t = match c {
                Control::ResyncRequest => 0,
                Control::ResyncFinished => 1,
                Control::ResyncPartial => 2,
                Control::ResyncConfirm => 3,
                Control::Heartbeat => 4,
            };
            out.extend_from_slice(&[CLASS_CONTROL, t]);
            return;
        }
        Message::Error(e) => {
            out.extend_from_slice(&[CLASS_ERROR, *e]);
            return;
        }
        Message::Define(def) => {
            def.encode(&mut payload);
            (CLASS_TABLE, T_DEFINE)
        }
        Message::Switch(id) => {
            varint::put(&mut payload, *id);
            (CLASS_TABLE, T_SWITCH)
        }
        Message::Ack { table, update } => {
            varint::put(&mut payload, *table);
            payload.extend_from_slice(&update.to_be_bytes());
            (CLASS_TABLE, T_ACK)
        }
        Message::Update { kind, payload: p } => {
            payload.extend_from_slice(p);
            let t = match kind {
                UpdateKind::Full => T_UPDATE,
                UpdateKind::Incremental => T_INCUPDATE,
                UpdateKind::Timed => T_UPDATE_TIMED,
                UpdateKind::IncrementalTimed => T_INCUPDATE_TIMED,
            };
            (CLASS_TABLE, t)
        }
    };
    out.extend_from_slice(&[class, kind]);
    varint::put(out, payload.len() as u64);
    out.extend_from_slice(&payload);
}
