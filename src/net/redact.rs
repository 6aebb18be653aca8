//! URLs as they may appear in logs and errors (DESIGN §9, nanobot §11.5): scheme, host and port
//! only; userinfo, query and fragment dropped; a non-root path shown as `/...`.

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

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn secrets_and_paths_are_dropped() {
        let cases = [
            (
                "https://user:secret@host.example/sse",
                "https://host.example/...",
            ),
            ("http://h:8080/mcp?token=abc#frag", "http://h:8080/..."),
            ("http://h/", "http://h/"),
            ("http://h", "http://h/"),
            ("http://[::1]:3000/a/b", "http://[::1]:3000/..."),
            ("https://h:443/x", "https://h/..."),
            ("not a url", "<redacted-url>"),
        ];
        for (input, want) in cases {
            assert_eq!(redact(input), want, "{input}");
        }
    }
}
