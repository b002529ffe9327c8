//! A fetch by the name it is written with (HAProxy's), for messages: `tern check` names what
//! the file says (`hdr(host)`), never the model's shape (`Header("host")`).

use std::fmt;

use super::Fetch;
use crate::model::counters::{Counter, CounterFetch, CounterOp, CounterSource};

impl fmt::Display for Fetch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            Fetch::Method => "method",
            Fetch::Url => "url",
            Fetch::Path => "path",
            Fetch::Query => "query",
            Fetch::Header(name) => return write!(f, "hdr({name})"),
            Fetch::Version => "req.ver",
            Fetch::Src => "src",
            Fetch::DstPort => "dst_port",
            Fetch::Tls => "ssl_fc",
            Fetch::Sni => "ssl_fc_sni",
            Fetch::HelloType => "req.ssl_hello_type",
            Fetch::Constant(true) => "always_true",
            Fetch::Constant(false) => "always_false",
            Fetch::Var(name) => return write!(f, "var({name})"),
            Fetch::HttpAuth(list) => return write!(f, "http_auth({})", list.name),
            Fetch::HttpAuthGroup(list) => return write!(f, "http_auth_group({})", list.name),
            Fetch::Counter(counter) => return counter.fmt(f),
            Fetch::UniqueId => "unique-id",
            Fetch::PpTlv(id) => return write!(f, "fc_pp_tlv({id:#04X})"),
        };
        f.write_str(name)
    }
}

impl fmt::Display for CounterFetch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = match self.op {
            CounterOp::Get(Counter::Gpc0) => "get_gpc0",
            CounterOp::Get(counter) => counter.name(),
            CounterOp::IncGpc0 => "inc_gpc0",
            CounterOp::ClrGpc0 => "clr_gpc0",
        };
        match &self.source {
            CounterSource::Tracked(slot) => write!(f, "sc{slot}_{op}"),
            CounterSource::Src(table) if table.name.is_empty() => write!(f, "src_{op}"),
            CounterSource::Src(table) => write!(f, "src_{op}({})", table.name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::TableRef;

    #[test]
    fn fetches_read_as_written() {
        assert_eq!(Fetch::Header("host".into()).to_string(), "hdr(host)");
        assert_eq!(Fetch::Path.to_string(), "path");
        assert_eq!(Fetch::Var("txn.x".into()).to_string(), "var(txn.x)");
        let tracked = CounterFetch {
            source: CounterSource::Tracked(0),
            op: CounterOp::Get(Counter::HttpReqRate),
        };
        assert_eq!(Fetch::Counter(tracked).to_string(), "sc0_http_req_rate");
        let src = CounterFetch {
            source: CounterSource::Src(TableRef {
                name: "per_ip".into(),
                index: 0,
            }),
            op: CounterOp::Get(Counter::Gpc0),
        };
        assert_eq!(src.to_string(), "src_get_gpc0(per_ip)");
    }
}
