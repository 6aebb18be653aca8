//! Matching a URI against an RFC 6570 URI template, for routing a `resources/read` of an
//! expansion to the server whose template it expands (expanding a template is
//! [`crate::catalog::uri_template`]'s).

/// Longest URI matched against a template (the matcher backtracks).
const MAX_MATCHED_URI: usize = 8 * 1024;

/// Whether `uri` could be an expansion of the RFC 6570 `template`: the literal parts appear in
/// order, a simple `{x}` stands for text without `/`, `?` or `#`, every other expression for
/// any text.
pub fn template_matches(template: &str, uri: &str) -> bool {
    if uri.len() > MAX_MATCHED_URI {
        return false;
    }
    let mut parts = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        if open > 0 {
            parts.push(Part::Literal(&rest[..open]));
        }
        let body = &rest[open + 1..open + close];
        parts.push(Part::Variable {
            simple: body
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '%'),
        });
        rest = &rest[open + close + 1..];
    }
    if !rest.is_empty() {
        parts.push(Part::Literal(rest));
    }
    matches_parts(&parts, uri)
}

enum Part<'a> {
    Literal(&'a str),
    Variable { simple: bool },
}

fn matches_parts(parts: &[Part<'_>], uri: &str) -> bool {
    match parts.split_first() {
        None => uri.is_empty(),
        Some((Part::Literal(l), rest)) => uri
            .strip_prefix(l)
            .is_some_and(|after| matches_parts(rest, after)),
        Some((Part::Variable { simple }, rest)) => {
            for (i, c) in uri.char_indices() {
                if matches_parts(rest, &uri[i..]) {
                    return true;
                }
                if *simple && matches!(c, '/' | '?' | '#') {
                    return false;
                }
            }
            matches_parts(rest, "")
        }
    }
}
