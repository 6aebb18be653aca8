//! Transport kinds as written in `type`, detection when `type` is absent, and the URL check for
//! remote servers (DESIGN §3, §9: http and https only).

use super::ConfigError;

/// A transport kind, before its settings are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Stdio,
    Sse,
    StreamableHttp,
}

/// Every transport, in one table: its kind, the name written in `type` (and shown by
/// `status`), and the other spellings `type` accepts. Adding a transport adds a row here.
const TABLE: &[(Kind, &str, &[&str])] = &[
    (Kind::Stdio, "stdio", &[]),
    (Kind::Sse, "sse", &[]),
    (
        Kind::StreamableHttp,
        "streamableHttp",
        &["http", "streamable-http", "streamable_http"],
    ),
];

impl Kind {
    pub(crate) fn from_type(text: &str) -> Option<Kind> {
        TABLE
            .iter()
            .find(|(_, name, aliases)| *name == text || aliases.contains(&text))
            .map(|(kind, _, _)| *kind)
    }

    pub(crate) fn name(self) -> &'static str {
        TABLE
            .iter()
            .find(|(kind, _, _)| *kind == self)
            .map_or("unknown", |(_, name, _)| name)
    }
}

/// The transport implied when `type` is absent: `command` → stdio; else a `url` whose path
/// (query and fragment dropped, trailing `/` removed) ends in `/sse` → sse; else a `url` →
/// streamableHttp; neither → `None`.
pub(crate) fn detect(has_command: bool, url: Option<&str>) -> Option<Kind> {
    if has_command {
        return Some(Kind::Stdio);
    }
    let url = url?;
    // Textual, not `url::Url`, so it also works before `${VAR}` expansion.
    let no_query = url.find(['?', '#']).map_or(url, |i| &url[..i]);
    let path = match no_query.find("://") {
        Some(i) => {
            let after = &no_query[i + 3..];
            after.find('/').map_or("", |j| &after[j..])
        }
        None => no_query,
    };
    if path.trim_end_matches('/').ends_with("/sse") {
        Some(Kind::Sse)
    } else {
        Some(Kind::StreamableHttp)
    }
}

/// Checks that `url` parses, uses http or https, and has a host. The error never shows the URL.
pub(crate) fn check_url(server: &str, url: &str) -> Result<(), ConfigError> {
    let parsed = url::Url::parse(url)
        .map_err(|e| ConfigError::field(server, "url", format!("not a valid URL: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(ConfigError::field(
            server,
            "url",
            format!(
                "scheme \"{}\" is not supported (use http or https)",
                parsed.scheme()
            ),
        ));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(ConfigError::field(server, "url", "has no host"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_one_name_that_reads_back() {
        for kind in [Kind::Stdio, Kind::Sse, Kind::StreamableHttp] {
            assert_eq!(Kind::from_type(kind.name()), Some(kind));
        }
        assert_eq!(Kind::from_type("http"), Some(Kind::StreamableHttp));
        assert_eq!(Kind::from_type("websocket"), None);
    }

    #[test]
    fn detection_reads_the_url_path_textually() {
        let cases = [
            (true, Some("https://h/sse"), Some(Kind::Stdio)),
            (false, None, None),
            (false, Some("https://h/sse"), Some(Kind::Sse)),
            (false, Some("https://h/sse//"), Some(Kind::Sse)),
            (false, Some("https://h:8080/v1/sse?key=x"), Some(Kind::Sse)),
            (false, Some("${BASE}/sse"), Some(Kind::Sse)),
            (false, Some("https://sse"), Some(Kind::StreamableHttp)),
            (false, Some("https://h/mcp"), Some(Kind::StreamableHttp)),
            (
                false,
                Some("https://h/mcp#/sse"),
                Some(Kind::StreamableHttp),
            ),
            (false, Some("https://h/SSE"), Some(Kind::StreamableHttp)),
        ];
        for (has_command, url, want) in cases {
            assert_eq!(detect(has_command, url), want, "{url:?}");
        }
    }

    #[test]
    fn only_http_and_https_urls_with_a_host_pass() {
        for ok in [
            "http://h/",
            "https://h:1/p?q",
            "http://127.0.0.1:8000/mcp",
            "https://[::1]/",
        ] {
            assert_eq!(check_url("s", ok), Ok(()), "{ok}");
        }
        for bad in [
            "ws://h/",
            "file:///etc/passwd",
            "h/mcp",
            "",
            "https://",
            "mailto:a@b",
        ] {
            assert!(
                matches!(check_url("s", bad), Err(ConfigError::Field { ref field, .. }) if field == "url"),
                "{bad}"
            );
        }
    }
}
