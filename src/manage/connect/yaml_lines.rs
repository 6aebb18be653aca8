//! Reading YAML one line at a time, for the few shapes [`super::goose`] edits: a line's
//! indentation, `key: value` lines (plain or quoted keys, a trailing comment dropped), and
//! scalars plain, `'single'` or `"double"` (JSON's escapes), alone or in a flow list
//! `[a, "b"]`. Anything richer (anchors, tags, block scalars as values we read) is `None`,
//! and the caller refuses the file.

/// One line: its text without the line break, and the byte range it covers with the break.
pub(super) struct Line<'a> {
    /// The text, without its line break.
    pub text: &'a str,
    /// Its first byte.
    pub start: usize,
    /// One past its line break (or the text's end).
    pub end: usize,
}

/// `text`'s lines, `\n` or `\r\n` ended (the last may have no break).
pub(super) fn split(text: &str) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let end = text[start..]
            .find('\n')
            .map_or(text.len(), |n| start + n + 1);
        let body = text[start..end]
            .trim_end_matches('\n')
            .trim_end_matches('\r');
        out.push(Line {
            text: body,
            start,
            end,
        });
        start = end;
    }
    out
}

pub(super) fn indent(s: &str) -> usize {
    s.len() - s.trim_start_matches(' ').len()
}

/// Blank, or only a comment.
pub(super) fn is_filler(s: &str) -> bool {
    let t = s.trim_start();
    t.is_empty() || t.starts_with('#')
}

/// `key: rest` (key plain or quoted) → (key, rest without a trailing comment, trimmed).
pub(super) fn key_line(s: &str) -> Option<(String, String)> {
    let t = s.trim_start();
    let (key, after) = if let Some(q) = t.strip_prefix('"') {
        let close = q.find('"')?;
        (q[..close].to_owned(), &q[close + 1..])
    } else if let Some(q) = t.strip_prefix('\'') {
        let close = q.find('\'')?;
        (q[..close].to_owned(), &q[close + 1..])
    } else {
        let colon = t
            .find(": ")
            .or_else(|| t.strip_suffix(':').map(|k| k.len()))?;
        (t[..colon].trim_end().to_owned(), &t[colon..])
    };
    let rest = after.trim_start().strip_prefix(':')?;
    if !(rest.is_empty() || rest.starts_with(' ')) || key.starts_with(['-', '#', '{', '[']) {
        return None;
    }
    Some((key, strip_comment(rest).trim().to_owned()))
}

/// `s` up to a ` #` comment outside quotes.
pub(super) fn strip_comment(s: &str) -> &str {
    let (mut single, mut double, mut prev) = (false, false, ' ');
    for (i, c) in s.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single && prev != '\\' => double = !double,
            '#' if !single && !double && prev.is_whitespace() => return &s[..i],
            _ => {}
        }
        prev = c;
    }
    s
}

/// One scalar: plain, `'single'` or `"double"` (JSON's escapes).
pub(super) fn scalar(s: &str) -> Option<String> {
    let s = s.trim();
    if s.starts_with('"') {
        return serde_json::from_str::<String>(s).ok();
    }
    if let Some(inner) = s.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
        return Some(inner.replace("''", "'"));
    }
    if s.is_empty() || s.starts_with(['[', '{', '&', '*', '!', '|', '>']) {
        return None;
    }
    Some(s.to_owned())
}

/// `[a, "b", 'c']` → its scalars.
pub(super) fn flow_list(s: &str) -> Option<Vec<String>> {
    let inner = s.trim().strip_prefix('[')?.strip_suffix(']')?;
    if inner.trim().is_empty() {
        return Some(Vec::new());
    }
    let (mut items, mut from) = (Vec::new(), 0);
    let (mut single, mut double, mut prev) = (false, false, ' ');
    for (i, c) in inner.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single && prev != '\\' => double = !double,
            ',' if !single && !double => {
                items.push(scalar(&inner[from..i])?);
                from = i + 1;
            }
            _ => {}
        }
        prev = c;
    }
    items.push(scalar(&inner[from..])?);
    Some(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_scalars_and_flow_lists_are_read_and_richer_yaml_is_not() {
        assert_eq!(
            key_line("  cmd: /usr/bin/x  # mine"),
            Some(("cmd".into(), "/usr/bin/x".into()))
        );
        assert_eq!(
            key_line("\"mcp-companion\":"),
            Some(("mcp-companion".into(), String::new()))
        );
        assert_eq!(key_line("- item: 1"), None);
        assert_eq!(
            key_line("url: http://x"),
            Some(("url".into(), "http://x".into()))
        );
        assert_eq!(strip_comment("\"a # b\" # c"), "\"a # b\" ");
        assert_eq!(
            scalar("\"C:\\\\bin\\\\x.exe\""),
            Some("C:\\bin\\x.exe".into())
        );
        assert_eq!(scalar("'it''s'"), Some("it's".into()));
        assert_eq!(scalar("*anchor"), None);
        assert_eq!(scalar("|"), None);
        assert_eq!(
            flow_list("[bridge, \"--profile\", 'a, b']"),
            Some(vec!["bridge".into(), "--profile".into(), "a, b".into()])
        );
        assert_eq!(flow_list("[]"), Some(vec![]));
        assert_eq!(flow_list("[[nested]]"), None);
        let lines = split("a: 1\r\nb: 2");
        assert_eq!(
            (lines[0].text, lines[0].end, lines[1].text),
            ("a: 1", 6, "b: 2")
        );
    }
}
