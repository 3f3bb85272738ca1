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
    let now = time::OffsetDateTime::now_utc();
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        now.year(),
        u8::from(now.month()),
        now.day(),
        now.hour(),
        now.minute(),
        now.second(),
        now.millisecond()
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
    }
}
