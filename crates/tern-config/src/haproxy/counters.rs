//! A `stick-table ... store ...` line → a `[[table]]` named like its section, which is what
//! HAProxy's `table NAME` arguments and `src_*` fetches refer to.
//!
//! The counters (`store`) are copied as written and checked by the TOML stage, which names
//! the `.cfg` line. A table without `store` is source stickiness (`persist.rs`).

use super::build::Proxy;
use super::emit::Table;
use super::toml_text::string;
use super::units::duration;

/// The `[[table]]` of a proxy whose `stick-table` stores counters.
pub(crate) fn table(p: &Proxy) -> Option<Table> {
    let line = p.cfg.stick_table.as_ref()?;
    let st = &line.v;
    if st.store.is_empty() {
        return None;
    }
    let mut t = Table::new("table", line.line, p.context());
    t.set("name", string(p.name()), line.line);
    t.set("type", string(&st.key), line.line);
    t.set("size", st.size.to_string(), line.line);
    // HAProxy keeps entries without `expire` until the table is full; tern's longest
    // duration is the closest.
    let expire = st.expire.unwrap_or(super::timeouts::TERN_MAX_MS);
    t.set("expire", string(&duration(expire)), line.line);
    let store: Vec<String> = st.store.iter().map(|s| string(s)).collect();
    t.set("store", format!("[{}]", store.join(", ")), line.line);
    if let Some(peers) = &st.peers {
        t.set("peers", string(peers), line.line);
    }
    Some(t)
}
