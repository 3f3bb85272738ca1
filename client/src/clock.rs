//! The one clock helper of Tickloop: now as RFC 3339 UTC text, as every
//! record, status, ledger and log line carries it.

/// Now, RFC 3339 UTC, with the sub-second digits the clock gives
/// (nanoseconds on Linux).
pub fn now_rfc3339() -> String {
    format_rfc3339(time::OffsetDateTime::now_utc())
}

/// Now, RFC 3339 UTC, to the millisecond, always three digits (the Loop's
/// audit ledger, the activity record).
pub fn now_rfc3339_millis() -> String {
    millis_text(time::OffsetDateTime::now_utc())
}

/// An RFC 3339 time as milliseconds since the epoch; `None` when `text`
/// is no such time.
pub fn unix_millis(text: &str) -> Option<i128> {
    let at =
        time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()?;
    Some(at.unix_timestamp_nanos() / 1_000_000)
}

/// Milliseconds since the epoch as RFC 3339 UTC to the millisecond (the
/// form of [`now_rfc3339_millis`]); `None` out of the calendar's range.
pub fn rfc3339_millis_at(millis: i128) -> Option<String> {
    let at = time::OffsetDateTime::from_unix_timestamp_nanos(millis * 1_000_000).ok()?;
    Some(millis_text(at))
}

fn millis_text(at: time::OffsetDateTime) -> String {
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second(),
        at.millisecond()
    )
}

fn format_rfc3339(at: time::OffsetDateTime) -> String {
    at.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_forms_parse_back() {
        for text in [now_rfc3339(), now_rfc3339_millis()] {
            let parsed =
                time::OffsetDateTime::parse(&text, &time::format_description::well_known::Rfc3339);
            assert!(parsed.is_ok(), "{text}");
        }
        let millis = now_rfc3339_millis();
        let fraction = millis.split('.').nth(1).unwrap_or("");
        assert_eq!(fraction.trim_end_matches('Z').len(), 3, "{millis}");
        let back = unix_millis(&millis).and_then(rfc3339_millis_at);
        assert_eq!(back.as_deref(), Some(millis.as_str()));
        assert_eq!(unix_millis("2026-12-02T08:00:00+01:00"), unix_millis("2026-12-02T07:00:00Z"));
        assert_eq!(unix_millis("yesterday"), None);
    }
}
