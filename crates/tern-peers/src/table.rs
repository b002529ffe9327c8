//! Stick-table definitions and entry updates.
//!
//! A definition (message 130) names a table and lists what its entries carry: a bitfield of
//! HAProxy's data types (`server_id` is bit 0, `gpc0` bit 2, `http_req_rate` bit 10, ...), the
//! key type and length, the expiry, then the period of each rate (and the length of each
//! array type). An update carries a key and one value per listed type, in type order:
//!
//! | standard type | types | encoding |
//! |---|---|---|
//! | signed / unsigned int, u64 | `server_id`, `gpc0`, `conn_cnt`, `http_req_cnt`, `bytes_in_cnt`, ... | varint |
//! | frequency counter | `gpc0_rate`, `conn_rate`, `http_req_rate`, ... | varints: ms since the current period started, its count, the previous period's count |
//! | dictionary | `server_key` | varint length L, then L bytes: entry id, and on first use the text (varint length + bytes) |
//! | array (`gpc`, `gpt`, `gpc_rate`) | 22–24 | the element count of the definition, each as above |
//!
//! Keys: IPv4 4 bytes, IPv6 16 bytes, integer 4 bytes big-endian, string a varint length then
//! the bytes (at most the defined key length), binary exactly the key length.

use crate::varint::{self, Reader};
use crate::Error;

/// HAProxy's data type number (`STKTABLE_DT_*`).
pub type DataType = u8;

/// The data types tern knows by name.
pub mod dt {
    use super::DataType;
    pub const SERVER_ID: DataType = 0;
    pub const GPC0: DataType = 2;
    pub const GPC0_RATE: DataType = 3;
    pub const CONN_CNT: DataType = 4;
    pub const CONN_RATE: DataType = 5;
    pub const CONN_CUR: DataType = 6;
    pub const HTTP_REQ_CNT: DataType = 9;
    pub const HTTP_REQ_RATE: DataType = 10;
    pub const HTTP_ERR_RATE: DataType = 12;
    pub const BYTES_IN_RATE: DataType = 14;
    pub const BYTES_OUT_RATE: DataType = 16;
    pub const SERVER_KEY: DataType = 19;
}

/// How a data type's values are encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Std {
    Int,
    Freq,
    Dict,
    Array { freq: bool },
}

/// The encoding of data type `t`; `None` for a type this version does not know.
fn std_type(t: DataType) -> Option<Std> {
    Some(match t {
        0 | 1 | 2 | 4 | 6 | 7 | 9 | 11 | 13 | 15 | 17 | 20 | 25 => Std::Int,
        3 | 5 | 8 | 10 | 12 | 14 | 16 | 18 | 21 | 26 => Std::Freq,
        19 => Std::Dict,
        22 | 23 => Std::Array { freq: false },
        24 => Std::Array { freq: true },
        _ => return None,
    })
}

/// A key type (HAProxy's sample types, as sent in definitions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyType {
    Sint,
    Ipv4,
    Ipv6,
    Str,
    Bin,
}

impl KeyType {
    pub fn code(self) -> u64 {
        match self {
            KeyType::Sint => 2,
            KeyType::Ipv4 => 4,
            KeyType::Ipv6 => 5,
            KeyType::Str => 6,
            KeyType::Bin => 7,
        }
    }

    fn from_code(code: u64) -> Option<KeyType> {
        Some(match code {
            2 => KeyType::Sint,
            4 => KeyType::Ipv4,
            5 => KeyType::Ipv6,
            6 => KeyType::Str,
            7 => KeyType::Bin,
            _ => return None,
        })
    }
}

/// A table definition (message 130).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableDef {
    /// The sender's id for the table; updates after this definition belong to it.
    pub id: u64,
    pub name: String,
    pub key_type: KeyType,
    pub key_len: u32,
    /// Bit `t` set: entries carry data type `t`.
    pub data_types: u64,
    pub expire_ms: u64,
    /// The period in ms of each rate, and the element count (and period) of each array.
    pub params: Vec<(DataType, u64, u64)>,
}

/// A key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Key {
    Ipv4([u8; 4]),
    Ipv6([u8; 16]),
    Int(u32),
    Str(Vec<u8>),
    Bin(Vec<u8>),
}

/// A frequency counter as sent: how long ago its current period started, and the counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Freq {
    pub elapsed_ms: u32,
    pub curr: u32,
    pub prev: u32,
}

/// One value of an update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Int(u64),
    Freq(Freq),
    /// A dictionary entry (`server_key`): its id, and its text when sent.
    Dict {
        id: u64,
        text: Option<Vec<u8>>,
    },
    /// No dictionary entry.
    NoDict,
    /// An array (decoded, not used by tern).
    Array,
}

/// An entry update (messages 128, 129, 133, 134).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Update {
    /// The sender's update number; `None` in an incremental update (the previous one plus 1).
    pub id: Option<u32>,
    /// The entry's remaining life in ms, in timed updates.
    pub expire_ms: Option<u32>,
    pub key: Key,
    /// One value per data type of the definition, in type order.
    pub values: Vec<(DataType, Value)>,
}

impl TableDef {
    /// The data types, in order.
    pub fn types(&self) -> impl Iterator<Item = DataType> + '_ {
        (0..64u8).filter(move |t| self.data_types & (1u64 << t) != 0)
    }

    /// Whether every listed data type can be decoded.
    pub fn known(&self) -> bool {
        self.types().all(|t| std_type(t).is_some())
    }

    fn param(&self, t: DataType) -> Option<(u64, u64)> {
        self.params
            .iter()
            .find(|p| p.0 == t)
            .map(|&(_, a, b)| (a, b))
    }

    /// The period in ms of rate `t`.
    pub fn period(&self, t: DataType) -> Option<u64> {
        self.param(t).map(|p| p.0)
    }

    pub fn encode(&self, out: &mut Vec<u8>) {
        varint::put(out, self.id);
        varint::put(out, self.name.len() as u64);
        out.extend_from_slice(self.name.as_bytes());
        varint::put(out, self.key_type.code());
        varint::put(out, u64::from(self.key_len));
        varint::put(out, self.data_types);
        varint::put(out, self.expire_ms);
        for (t, a, b) in &self.params {
            varint::put(out, u64::from(*t));
            varint::put(out, *a);
            if matches!(std_type(*t), Some(Std::Array { freq: true })) {
                varint::put(out, *b);
            }
        }
    }

    pub fn decode(payload: &[u8]) -> Result<TableDef, Error> {
        let mut r = Reader::new(payload);
        let id = r.varint()?;
        let len = r.varint()?;
        let len = usize::try_from(len).map_err(|_| Error::Bad("table name length"))?;
        if len == 0 || len > 255 {
            return Err(Error::Bad("table name length"));
        }
        let name = r.bytes(len, "table name")?;
        let name = std::str::from_utf8(name)
            .map_err(|_| Error::Bad("table name"))?
            .to_owned();
        let key_type = KeyType::from_code(r.varint()?).ok_or(Error::Bad("table key type"))?;
        let key_len = r.varint32("table key length")?;
        let key_ok = match key_type {
            KeyType::Ipv4 | KeyType::Sint => key_len == 4,
            KeyType::Ipv6 => key_len == 16,
            KeyType::Str | KeyType::Bin => (1..=1024).contains(&key_len),
        };
        if !key_ok {
            return Err(Error::Bad("table key length"));
        }
        let data_types = r.varint()?;
        let expire_ms = r.varint()?;
        let mut def = TableDef {
            id,
            name,
            key_type,
            key_len,
            data_types,
            expire_ms,
            params: Vec::new(),
        };
        while !r.is_empty() {
            let t = u8::try_from(r.varint()?).map_err(|_| Error::Bad("data type"))?;
            // A type past 63 cannot be listed (the list is a 64-bit mask): refused, not shifted.
            let listed = 1u64
                .checked_shl(u32::from(t))
                .is_some_and(|bit| def.data_types & bit != 0);
            if !listed || def.params.len() >= 64 {
                return Err(Error::Bad("parameter of a data type not listed"));
            }
            let a = r.varint()?;
            let b = match std_type(t) {
                Some(Std::Freq) => 0,
                Some(Std::Array { freq }) => {
                    if a == 0 || a > 100 {
                        return Err(Error::Bad("array length"));
                    }
                    if freq {
                        r.varint()?
                    } else {
                        0
                    }
                }
                _ => return Err(Error::Bad("parameter of a data type without one")),
            };
            def.params.push((t, a, b));
        }
        Ok(def)
    }
}

impl Update {
    /// Appends the payload of this update (its kind follows `id` and `expire_ms`).
    pub fn encode(&self, def: &TableDef, out: &mut Vec<u8>) {
        if let Some(id) = self.id {
            out.extend_from_slice(&id.to_be_bytes());
        }
        if let Some(e) = self.expire_ms {
            out.extend_from_slice(&e.to_be_bytes());
        }
        match &self.key {
            Key::Ipv4(b) => out.extend_from_slice(b),
            Key::Ipv6(b) => out.extend_from_slice(b),
            Key::Int(n) => out.extend_from_slice(&n.to_be_bytes()),
            Key::Str(s) => {
                let s = &s[..s.len().min(def.key_len as usize)];
                varint::put(out, s.len() as u64);
                out.extend_from_slice(s);
            }
            Key::Bin(b) => {
                let mut b = b.clone();
                b.resize(def.key_len as usize, 0);
                out.extend_from_slice(&b);
            }
        }
        for (_, v) in &self.values {
            match v {
                Value::Int(n) => varint::put(out, *n),
                Value::Freq(f) => {
                    varint::put(out, u64::from(f.elapsed_ms));
                    varint::put(out, u64::from(f.curr));
                    varint::put(out, u64::from(f.prev));
                }
                Value::Dict { id, text } => {
                    let mut inner = Vec::new();
                    varint::put(&mut inner, *id);
                    if let Some(t) = text {
                        varint::put(&mut inner, t.len() as u64);
                        inner.extend_from_slice(t);
                    }
                    varint::put(out, inner.len() as u64);
                    out.extend_from_slice(&inner);
                }
                Value::NoDict | Value::Array => varint::put(out, 0),
            }
        }
    }

    /// An update of table `def`; `with_id` and `timed` come from the message type.
    pub fn decode(
        def: &TableDef,
        payload: &[u8],
        with_id: bool,
        timed: bool,
    ) -> Result<Update, Error> {
        let mut r = Reader::new(payload);
        let id = with_id.then(|| r.u32_be("update id")).transpose()?;
        let expire_ms = timed.then(|| r.u32_be("update expiry")).transpose()?;
        let key = match def.key_type {
            KeyType::Ipv4 => Key::Ipv4(array(r.bytes(4, "key")?)),
            KeyType::Ipv6 => Key::Ipv6(array(r.bytes(16, "key")?)),
            KeyType::Sint => Key::Int(r.u32_be("key")?),
            KeyType::Str => {
                let n = r.varint()?;
                if n > u64::from(def.key_len) {
                    return Err(Error::Bad("string key longer than the table's"));
                }
                Key::Str(r.bytes(n as usize, "key")?.to_vec())
            }
            KeyType::Bin => Key::Bin(r.bytes(def.key_len as usize, "key")?.to_vec()),
        };
        let mut values = Vec::new();
        for t in def.types() {
            let std = std_type(t).ok_or(Error::Bad("unknown data type"))?;
            values.push((t, value(&mut r, std, def.param(t))?));
        }
        r.finish("update")?;
        Ok(Update {
            id,
            expire_ms,
            key,
            values,
        })
    }

    /// The value of data type `t`.
    pub fn get(&self, t: DataType) -> Option<&Value> {
        self.values.iter().find(|v| v.0 == t).map(|v| &v.1)
    }
}

fn array<const N: usize>(b: &[u8]) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&b[..N]);
    a
}

fn value(r: &mut Reader<'_>, std: Std, param: Option<(u64, u64)>) -> Result<Value, Error> {
    Ok(match std {
        Std::Int => Value::Int(r.varint()?),
        Std::Freq => Value::Freq(freq(r)?),
        Std::Dict => {
            let len = r.varint()?;
            if len == 0 {
                return Ok(Value::NoDict);
            }
            let len = usize::try_from(len).map_err(|_| Error::Bad("dictionary length"))?;
            let mut inner = Reader::new(r.bytes(len, "dictionary entry")?);
            let id = inner.varint()?;
            let text = if inner.is_empty() {
                None
            } else {
                let n = inner.varint()?;
                let n = usize::try_from(n).map_err(|_| Error::Bad("dictionary text"))?;
                let t = inner.bytes(n, "dictionary text")?.to_vec();
                inner.finish("dictionary entry")?;
                Some(t)
            };
            Value::Dict { id, text }
        }
        Std::Array { freq: is_freq } => {
            let n = param.ok_or(Error::Bad("array without a length"))?.0;
            for _ in 0..n {
                if is_freq {
                    self::freq(r)?;
                } else {
                    r.varint()?;
                }
            }
            Value::Array
        }
    })
}

fn freq(r: &mut Reader<'_>) -> Result<Freq, Error> {
    Ok(Freq {
        elapsed_ms: r.varint32("rate period start")?,
        curr: r.varint32("rate count")?,
        prev: r.varint32("rate count")?,
    })
}
