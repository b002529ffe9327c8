//! `acl = { name = "expr" | ["expr", ...] }`, as written (checked in `validate/condition.rs`).

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{Deserializer, SeqAccess, Visitor};
use serde::Deserialize;

/// The `acl` table of a frontend or backend: ACL name → its expressions.
pub(crate) type RawAcls = BTreeMap<String, RawAclDef>;

/// One ACL: an expression, or a list of them (HAProxy's several `acl` lines with one name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RawAclDef {
    One(String),
    Many(Vec<String>),
}

impl RawAclDef {
    /// The expressions, in order.
    pub fn expressions(&self) -> &[String] {
        match self {
            RawAclDef::One(e) => std::slice::from_ref(e),
            RawAclDef::Many(all) => all,
        }
    }
}

struct AclDefVisitor;

impl<'de> Visitor<'de> for AclDefVisitor {
    type Value = RawAclDef;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an ACL expression like \"path_beg /api/\" or a list of them")
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(RawAclDef::One(v.to_owned()))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut all = Vec::new();
        // Bounded by the input: the deserializer yields each written element once.
        while let Some(e) = seq.next_element::<String>()? {
            all.push(e);
        }
        Ok(RawAclDef::Many(all))
    }
}

impl<'de> Deserialize<'de> for RawAclDef {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(AclDefVisitor)
    }
}

/// One `use_backend` rule: `{ backend = "api", if = "is_api" }`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRoute {
    pub backend: Option<String>,
    #[serde(rename = "if")]
    pub if_: Option<String>,
    pub unless: Option<String>,
}
