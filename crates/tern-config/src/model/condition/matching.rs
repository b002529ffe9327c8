//! Pattern matching of ACL samples (HAProxy's `-m` methods), one function per sample type.
//!
//! Text patterns are stored lower-cased when `-i` is given, and compared ASCII
//! case-insensitively then, so evaluation never allocates.

use std::fmt;
use std::net::IpAddr;

/// How a sample is matched against an ACL's patterns.
#[derive(Debug, Clone, PartialEq)]
pub enum Matcher {
    /// Text patterns (`-m str|beg|end|sub|dom|dir`); `icase` for `-i`.
    Text {
        how: TextMatch,
        icase: bool,
        patterns: Vec<Box<[u8]>>,
    },
    /// `-m reg`: any of the regular expressions is found in the sample.
    Regex(Vec<Regex>),
    /// `-m found`: the sample exists.
    Found,
    /// `-m len`: the sample's length is in one of the ranges.
    Len(Vec<IntRange>),
    /// Integer samples (`dst_port`): the value is in one of the ranges.
    Int(Vec<IntRange>),
    /// Address samples (`src`): the address is in one of the networks.
    Ip(Vec<IpNet>),
    /// Boolean samples (`ssl_fc`): true.
    Bool,
}

/// The text match methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextMatch {
    /// Equal.
    Str,
    /// The sample begins with the pattern.
    Beg,
    /// The sample ends with the pattern.
    End,
    /// The pattern occurs in the sample.
    Sub,
    /// The pattern occurs between delimiters `/ ? . :` (or the sample's ends).
    Dom,
    /// The pattern occurs between delimiters `/ ?` (or the sample's ends).
    Dir,
}

/// An inclusive integer range (`80`, `1024:65535`, `:1023`, `gt 5`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntRange {
    pub low: u64,
    pub high: u64,
}

/// An address or network (`10.0.0.0/8`, `::1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpNet {
    pub addr: IpAddr,
    pub prefix: u8,
}

/// A compiled regular expression, compared by its source text.
#[derive(Clone)]
pub struct Regex(pub regex::bytes::Regex);

impl PartialEq for Regex {
    fn eq(&self, other: &Self) -> bool {
        self.0.as_str() == other.0.as_str()
    }
}

impl fmt::Debug for Regex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Regex({:?})", self.0.as_str())
    }
}

impl Matcher {
    /// Matches a text sample.
    pub fn text(&self, sample: &[u8]) -> bool {
        match self {
            Matcher::Text {
                how,
                icase,
                patterns,
            } => patterns.iter().any(|p| text_match(*how, *icase, sample, p)),
            Matcher::Regex(all) => all.iter().any(|r| r.0.is_match(sample)),
            Matcher::Found => true,
            Matcher::Len(ranges) => in_ranges(ranges, sample.len() as u64),
            // Validation gives text fetches only the matchers above.
            Matcher::Int(_) | Matcher::Ip(_) | Matcher::Bool => false,
        }
    }

    /// Matches an integer sample.
    pub fn int(&self, sample: u64) -> bool {
        match self {
            Matcher::Int(ranges) => in_ranges(ranges, sample),
            Matcher::Found => true,
            _ => false,
        }
    }

    /// Matches an address sample (an IPv4-mapped IPv6 address matches IPv4 networks).
    pub fn ip(&self, sample: IpAddr) -> bool {
        match self {
            Matcher::Ip(nets) => nets.iter().any(|n| n.contains(sample)),
            Matcher::Found => true,
            _ => false,
        }
    }

    /// Matches a boolean sample.
    pub fn boolean(&self, sample: bool) -> bool {
        match self {
            Matcher::Bool => sample,
            Matcher::Found => true,
            _ => false,
        }
    }
}

impl IpNet {
    /// Whether `addr` is in this network.
    pub fn contains(&self, addr: IpAddr) -> bool {
        let addr = match addr {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(addr, IpAddr::V4),
            v4 => v4,
        };
        match (self.addr, addr) {
            (IpAddr::V4(net), IpAddr::V4(a)) => prefix_eq(
                u128::from(u32::from(net)),
                u128::from(u32::from(a)),
                32,
                self.prefix,
            ),
            (IpAddr::V6(net), IpAddr::V6(a)) => {
                prefix_eq(u128::from(net), u128::from(a), 128, self.prefix)
            }
            _ => false,
        }
    }
}

fn prefix_eq(net: u128, addr: u128, bits: u8, prefix: u8) -> bool {
    let shift = u32::from(bits.saturating_sub(prefix));
    net.checked_shr(shift).unwrap_or(0) == addr.checked_shr(shift).unwrap_or(0)
}

fn in_ranges(ranges: &[IntRange], value: u64) -> bool {
    ranges.iter().any(|r| (r.low..=r.high).contains(&value))
}

fn eq(icase: bool, a: &[u8], b: &[u8]) -> bool {
    if icase {
        a.eq_ignore_ascii_case(b)
    } else {
        a == b
    }
}

fn text_match(how: TextMatch, icase: bool, sample: &[u8], pattern: &[u8]) -> bool {
    match how {
        TextMatch::Str => eq(icase, sample, pattern),
        TextMatch::Beg => {
            sample.len() >= pattern.len() && eq(icase, &sample[..pattern.len()], pattern)
        }
        TextMatch::End => {
            sample.len() >= pattern.len()
                && eq(icase, &sample[sample.len() - pattern.len()..], pattern)
        }
        TextMatch::Sub => occurrences(icase, sample, pattern).next().is_some(),
        TextMatch::Dom => delimited(icase, sample, pattern, b"/?.:"),
        TextMatch::Dir => delimited(icase, sample, pattern, b"/?"),
    }
}

/// Start offsets of `pattern` in `sample`.
fn occurrences<'a>(
    icase: bool,
    sample: &'a [u8],
    pattern: &'a [u8],
) -> impl Iterator<Item = usize> + 'a {
    let last = sample.len().checked_sub(pattern.len());
    (0..=last.unwrap_or(0))
        .filter(move |_| last.is_some())
        .filter(move |&at| eq(icase, &sample[at..at + pattern.len()], pattern))
}

/// `pattern` occurs in `sample` with a delimiter (or the sample's end) on each side; the
/// pattern's own leading and trailing delimiters are ignored, as HAProxy does.
fn delimited(icase: bool, sample: &[u8], pattern: &[u8], delims: &[u8]) -> bool {
    let is_delim = |b: &u8| delims.contains(b);
    let start = pattern.iter().position(|b| !is_delim(b));
    let end = pattern.iter().rposition(|b| !is_delim(b));
    let (Some(start), Some(end)) = (start, end) else {
        return false;
    };
    let pattern = &pattern[start..=end];
    occurrences(icase, sample, pattern).any(|at| {
        let before = at.checked_sub(1).map(|i| sample[i]);
        let after = sample.get(at + pattern.len()).copied();
        before.is_none_or(|b| is_delim(&b)) && after.is_none_or(|b| is_delim(&b))
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn text(how: TextMatch, icase: bool, pats: &[&str]) -> Matcher {
        Matcher::Text {
            how,
            icase,
            patterns: pats.iter().map(|p| p.as_bytes().into()).collect(),
        }
    }

    #[test]
    fn text_methods() {
        assert!(text(TextMatch::Str, false, &["/a"]).text(b"/a"));
        assert!(!text(TextMatch::Str, false, &["/a"]).text(b"/A"));
        assert!(text(TextMatch::Str, true, &["/a"]).text(b"/A"));
        assert!(text(TextMatch::Beg, false, &["/api/"]).text(b"/api/x"));
        assert!(!text(TextMatch::Beg, false, &["/api/"]).text(b"/ap"));
        assert!(text(TextMatch::End, true, &[".JPG"]).text(b"/x.jpg"));
        assert!(text(TextMatch::Sub, false, &["min"]).text(b"/admin/x"));
        assert!(!text(TextMatch::Sub, false, &["xyz"]).text(b"xy"));
    }

    #[test]
    fn domain_and_dir_need_delimiters() {
        let dom = text(TextMatch::Dom, true, &["example.com"]);
        assert!(dom.text(b"www.Example.com"));
        assert!(dom.text(b"example.com:8080"));
        assert!(!dom.text(b"badexample.com"));
        let dir = text(TextMatch::Dir, false, &["/img/"]);
        assert!(dir.text(b"/static/img/a.png"));
        assert!(!dir.text(b"/static/imgs/a.png"));
        assert!(!text(TextMatch::Dom, false, &["..."]).text(b"a.b"));
    }

    #[test]
    fn networks_and_ranges() {
        let nets = Matcher::Ip(vec![IpNet {
            addr: "10.0.0.0".parse().unwrap(),
            prefix: 8,
        }]);
        assert!(nets.ip("10.1.2.3".parse().unwrap()));
        assert!(nets.ip("::ffff:10.1.2.3".parse().unwrap()));
        assert!(!nets.ip("11.0.0.1".parse().unwrap()));
        let all = Matcher::Ip(vec![IpNet {
            addr: "::".parse().unwrap(),
            prefix: 0,
        }]);
        assert!(all.ip("2001:db8::1".parse().unwrap()));
        let ports = Matcher::Int(vec![IntRange { low: 80, high: 80 }]);
        assert!(ports.int(80) && !ports.int(443));
        assert!(Matcher::Len(vec![IntRange { low: 0, high: 3 }]).text(b"abc"));
    }
}
