//! Errors as one line: an error and its sources, with URLs redacted.

use super::redact;

/// `e` and its sources joined by `: `, skipping a source whose text an earlier part already
/// contains. A `reqwest::Error`'s URL is redacted, and its sources are where an SSRF refusal
/// from the resolver shows up.
pub fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = Vec::new();
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        let text = match err.downcast_ref::<reqwest::Error>() {
            Some(r) => match r.url() {
                Some(u) => r.to_string().replace(u.as_str(), &redact(u.as_str())),
                None => r.to_string(),
            },
            None => err.to_string(),
        };
        if !parts.iter().any(|p: &String| p.contains(&text)) {
            parts.push(text);
        }
        cur = err.source();
    }
    parts.join(": ")
}
