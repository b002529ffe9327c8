//! HAProxy's numbers, times and sizes (doc/configuration.txt §2.4), and tern's spelling of them.
//!
//! A HAProxy time is a number with an optional unit (`us`, `ms`, `s`, `m`, `h`, `d`); without
//! one, the keyword's default unit applies (milliseconds for timeouts and check intervals,
//! seconds for a few keywords such as `stats refresh`). tern writes durations with a unit, so
//! every time is carried in milliseconds and printed with the largest unit that is exact.

/// The unit of a time written without one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    Ms,
    S,
}

/// The largest time HAProxy accepts (2^31 - 1 ms, about 24.8 days), which is also tern's.
pub(crate) const MAX_MS: u64 = 2_147_483_647;

/// Parses a HAProxy time into milliseconds (microseconds are rounded up to a whole ms).
pub(crate) fn parse_time(text: &str, default: Unit) -> Result<u64, String> {
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let bad = || {
        format!(
            "invalid time '{text}': a number with an optional unit (us, ms, s, m, h, d) expected"
        )
    };
    if digits.is_empty() {
        return Err(bad());
    }
    let n: u64 = digits.parse().map_err(|_| bad())?;
    let ms = match unit {
        "" => match default {
            Unit::Ms => Some(n),
            Unit::S => n.checked_mul(1000),
        },
        "us" => Some(n.div_ceil(1000)),
        "ms" => Some(n),
        "s" => n.checked_mul(1000),
        "m" => n.checked_mul(60_000),
        "h" => n.checked_mul(3_600_000),
        "d" => n.checked_mul(86_400_000),
        _ => return Err(bad()),
    };
    match ms {
        Some(ms) if ms <= MAX_MS => Ok(ms),
        _ => Err(format!(
            "time '{text}' is too large: at most 2147483647ms (about 24.8 days)"
        )),
    }
}

/// tern's spelling of a time: the largest exact unit (`"30s"`, `"1500ms"`, `"2m"`).
pub(crate) fn duration(ms: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (86_400_000, "d"),
        (3_600_000, "h"),
        (60_000, "m"),
        (1000, "s"),
    ];
    if ms > 0 {
        for (size, unit) in UNITS {
            if ms % size == 0 {
                return format!("{}{unit}", ms / size);
            }
        }
    }
    format!("{ms}ms")
}

/// Parses a size with an optional `k`, `m` or `g` suffix (powers of 1024, as HAProxy's
/// `stick-table size`).
pub(crate) fn parse_size(text: &str) -> Result<u64, String> {
    let lower = text.to_ascii_lowercase();
    let (digits, factor) = match lower.chars().last() {
        Some('k') => (&lower[..lower.len() - 1], 1u64 << 10),
        Some('m') => (&lower[..lower.len() - 1], 1 << 20),
        Some('g') => (&lower[..lower.len() - 1], 1 << 30),
        _ => (lower.as_str(), 1),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(factor))
        .ok_or_else(|| {
            format!("invalid size '{text}': a number with an optional k, m or g suffix expected")
        })
}

/// Parses a non-negative integer argument.
pub(crate) fn parse_uint(text: &str) -> Result<u64, String> {
    text.parse::<u64>()
        .map_err(|_| format!("invalid number '{text}': a non-negative integer expected"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn times_with_and_without_units() {
        assert_eq!(parse_time("5000", Unit::Ms), Ok(5000));
        assert_eq!(parse_time("10", Unit::S), Ok(10_000));
        assert_eq!(parse_time("30s", Unit::Ms), Ok(30_000));
        assert_eq!(parse_time("2m", Unit::Ms), Ok(120_000));
        assert_eq!(parse_time("1h", Unit::Ms), Ok(3_600_000));
        assert_eq!(parse_time("1d", Unit::Ms), Ok(86_400_000));
        assert_eq!(parse_time("1500us", Unit::Ms), Ok(2));
        assert_eq!(parse_time("0", Unit::Ms), Ok(0));
        assert!(parse_time("5x", Unit::Ms).is_err());
        assert!(parse_time("s", Unit::Ms).is_err());
        assert!(parse_time("-1", Unit::Ms).is_err());
        assert!(parse_time("25d", Unit::Ms)
            .unwrap_err()
            .contains("too large"));
    }

    #[test]
    fn durations_use_the_largest_exact_unit() {
        assert_eq!(duration(30_000), "30s");
        assert_eq!(duration(1500), "1500ms");
        assert_eq!(duration(120_000), "2m");
        assert_eq!(duration(90_000), "90s");
        assert_eq!(duration(86_400_000), "1d");
        assert_eq!(duration(0), "0ms");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("200k"), Ok(204_800));
        assert_eq!(parse_size("1m"), Ok(1_048_576));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("100"), Ok(100));
        assert!(parse_size("k").is_err());
        assert!(parse_size("1t").is_err());
    }
}
