//! URLs as we log them: scheme, host and port only, in one URL we hold or anywhere in free text,
//! `url::Url`'s `Debug` form included.

use super::store::MASK;

/// Redacts `url` for logging: `https://user:pw@h:8443/mcp?key=x` → `https://h:8443/...`.
///
/// `/` stays `/`; an unparsable URL becomes `<redacted-url>`.
pub fn redact(url: &str) -> String {
    let Ok(parsed) = url::Url::parse(url) else {
        return "<redacted-url>".to_owned();
    };
    let Some(host) = parsed.host() else {
        return "<redacted-url>".to_owned();
    };
    let mut out = format!("{}://{host}", parsed.scheme());
    if let Some(port) = parsed.port() {
        out.push_str(&format!(":{port}"));
    }
    match parsed.path() {
        "" | "/" => out.push('/'),
        _ => out.push_str("/..."),
    }
    out
}

/// Redacts every URL in `text` (anything of the form `scheme://…` up to a space, quote, angle
/// bracket, backslash or control character) with [`redact`], keeping trailing punctuation.
/// The fields of a `Debug`-printed `url::Url` (`Url { … query: Some("…") … }`) that can hold
/// secrets are masked too.
pub fn redact_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let scheme_start = rest[..at]
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
            .last()
            .map(|(i, _)| i);
        // A scheme starts with a letter: `3mhttp` (after an ANSI escape) is `mhttp`.
        let start = scheme_start.and_then(|i| {
            rest[i..at]
                .find(|c: char| c.is_ascii_alphabetic())
                .map(|j| i + j)
        });
        let Some(start) = start else {
            out.push_str(&rest[..at + 3]);
            rest = &rest[at + 3..];
            continue;
        };
        let tail = &rest[at + 3..];
        let len = tail
            .find(|c: char| {
                c.is_whitespace()
                    || c.is_control()
                    || matches!(c, '"' | '\'' | '<' | '>' | '`' | '\\')
            })
            .unwrap_or(tail.len());
        let mut end = at + 3 + len;
        while end > at + 3 && rest[..end].ends_with(['.', ',', ';', ':', ')', ']', '}', '!', '?']) {
            end -= 1;
        }
        if end == at + 3 {
            out.push_str(&rest[..end]);
        } else {
            out.push_str(&rest[..start]);
            out.push_str(&redact(&rest[start..end]));
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    mask_debug_url_fields(&out)
}

/// Masks the secret-bearing fields of `url::Url`'s `Debug` form.
fn mask_debug_url_fields(text: &str) -> String {
    if !text.contains("Url {") {
        return text.to_owned();
    }
    let mut out = text.to_owned();
    for field in [
        "username: \"",
        "password: Some(\"",
        "path: \"",
        "query: Some(\"",
        "fragment: Some(\"",
    ] {
        let mut from = 0;
        while let Some(found) = out[from..].find(field) {
            let value_start = from + found + field.len();
            let value_len = closing_quote(&out[value_start..]);
            if value_len == 0 {
                from = value_start;
                continue;
            }
            out.replace_range(value_start..value_start + value_len, MASK);
            from = value_start + MASK.len();
        }
    }
    out
}

/// The length of a `Debug`-escaped string body up to its unescaped closing quote.
fn closing_quote(s: &str) -> usize {
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        match c {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => return i,
            _ => escaped = false,
        }
    }
    s.len()
}
