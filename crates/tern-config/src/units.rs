//! Durations and sizes as operators write them: `"250ms"`, `"1m30s"`, `16384`, `"16k"`.
//!
//! Durations must carry a unit. A bare `30` is ambiguous (HAProxy reads milliseconds, most
//! people mean seconds), so it is refused with a message saying how to write it. Zero is refused
//! too: for a timeout it would mean "expire at once", never "no timeout". The upper bound is
//! HAProxy's (2^31-1 ms, about 24.8 days): beyond it a timeout is a typo, and keeping it small
//! means `Instant + timeout` can never overflow downstream.
//!
//! Sizes are bytes, either an integer or a string with a 1024-based `k` or `m` suffix
//! (case-insensitive), because `"16k"` is easier to read and review than `16384`.

use std::time::Duration;

/// Largest accepted duration: 2^31-1 milliseconds, HAProxy's limit for timeouts.
pub(crate) const MAX_DURATION: Duration = Duration::from_millis(2_147_483_647);

/// Parses a duration string such as `"5s"`, `"250ms"` or `"1m30s"`.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    let trimmed = text.trim();
    if !trimmed.is_empty() && trimmed.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "duration `{text}` needs a unit: write \"{trimmed}s\" or \"{trimmed}ms\""
        ));
    }
    let duration = humantime::parse_duration(trimmed).map_err(|e| {
        format!("invalid duration `{text}`: {e} (examples: \"250ms\", \"5s\", \"1m30s\")")
    })?;
    check_duration(duration, text)
}

/// The message for a duration written as a bare TOML integer.
pub(crate) fn duration_needs_unit(value: i64) -> String {
    format!("a duration needs a unit: write \"{value}s\" or \"{value}ms\" (a string), not {value}")
}

fn check_duration(duration: Duration, text: &str) -> Result<Duration, String> {
    if duration.is_zero() {
        return Err(format!(
            "duration `{text}` is zero; a zero timeout would expire at once"
        ));
    }
    if duration > MAX_DURATION {
        return Err(format!(
            "duration `{text}` is too long; the largest accepted is 24d (2147483647ms)"
        ));
    }
    Ok(duration)
}

/// Parses a size string: decimal digits with an optional `k` or `m` suffix (1024-based,
/// case-insensitive), e.g. `"16k"`, `"1M"`, `"8192"`.
pub(crate) fn parse_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let (digits, multiplier) = match trimmed.as_bytes().last() {
        Some(b'k' | b'K') => (&trimmed[..trimmed.len() - 1], 1024u64),
        Some(b'm' | b'M') => (&trimmed[..trimmed.len() - 1], 1024 * 1024),
        _ => (trimmed, 1),
    };
    let invalid = || {
        format!(
            "invalid size `{text}`: write bytes (16384) or use a k or m suffix (\"16k\", \"1m\")"
        )
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(invalid());
    }
    let number: u64 = digits.parse().map_err(|_| invalid())?;
    number
        .checked_mul(multiplier)
        .ok_or_else(|| format!("size `{text}` is too large"))
}

/// Formats a byte count the way a config would write it (`16k`, `1m`, or plain bytes).
pub(crate) fn format_size(bytes: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    if bytes != 0 && bytes % MIB == 0 {
        format!("{}m", bytes / MIB)
    } else if bytes != 0 && bytes % 1024 == 0 {
        format!("{}k", bytes / 1024)
    } else {
        bytes.to_string()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use proptest::prelude::*;

    #[test]
    fn durations_with_units() {
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("5s").unwrap(), Duration::from_secs(5));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
        assert_eq!(parse_duration("1m30s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration(" 10s ").unwrap(), Duration::from_secs(10));
    }

    #[test]
    fn duration_without_unit_says_how_to_write_it() {
        let err = parse_duration("30").unwrap_err();
        assert!(err.contains("\"30s\""), "{err}");
        assert!(duration_needs_unit(5).contains("\"5s\""));
    }

    #[test]
    fn duration_zero_and_garbage_are_errors() {
        assert!(parse_duration("0s").unwrap_err().contains("zero"));
        assert!(parse_duration("0ms").unwrap_err().contains("zero"));
        assert!(parse_duration("").is_err());
        assert!(parse_duration("5 parsecs").is_err());
        assert!(parse_duration("-5s").is_err());
        assert!(parse_duration("25d").unwrap_err().contains("too long"));
        assert!(parse_duration("24d").is_ok());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("8192").unwrap(), 8192);
        assert_eq!(parse_size("16k").unwrap(), 16 * 1024);
        assert_eq!(parse_size("16K").unwrap(), 16 * 1024);
        assert_eq!(parse_size("1m").unwrap(), 1024 * 1024);
        assert_eq!(parse_size("1M").unwrap(), 1024 * 1024);
        for bad in ["", "k", "1.5k", "16kb", "-1", "1g", "99999999999999999999"] {
            assert!(parse_size(bad).is_err(), "{bad:?} should be rejected");
        }
        assert!(parse_size("99999999999999999m")
            .unwrap_err()
            .contains("too large"));
    }

    #[test]
    fn size_formatting() {
        assert_eq!(format_size(16384), "16k");
        assert_eq!(format_size(1024 * 1024), "1m");
        assert_eq!(format_size(1000), "1000");
        assert_eq!(format_size(0), "0");
    }

    proptest! {
        #[test]
        fn duration_round_trips_through_humantime(ms in 1u64..=2_147_483_647) {
            let duration = Duration::from_millis(ms);
            let text = humantime::format_duration(duration).to_string();
            prop_assert_eq!(parse_duration(&text), Ok(duration));
        }

        #[test]
        fn size_round_trips(bytes in 0u64..=(1 << 40)) {
            prop_assert_eq!(parse_size(&format_size(bytes)), Ok(bytes));
        }

        #[test]
        fn parsers_never_panic(text in "\\PC*") {
            let _ = parse_duration(&text);
            let _ = parse_size(&text);
        }
    }
}
