//! Byte-span edits of a JSONC document: set or remove one member of the object at a key path,
//! touching no other byte. Inserting follows the file's indentation and newline style; removing
//! is the exact inverse of inserting, so connect + disconnect gives back the original bytes
//! (an object our insert created and that is empty again is removed with it). One exception:
//! whitespace inside an object that was empty (`{ }`, `{\n}`) comes back as `{}`. A key
//! that appears twice is edited where it appears last, the copy JSON clients read.
//!
//! Decision: our own span reader ([`super::jsonc`]) and edits, not `jsonc-parser`'s CST
//! (0.34, `cst` feature). Tried against `tests/golden/connect/`: connecting Claude Code's
//! one-line `~/.claude.json` (`{"numStartups":12,"theme":"dark",…}`) through
//! `CstObject::append` re-lays the whole root object one member per line, rewriting bytes the
//! edit does not own — in the file other tools also write. The other goldens differ only in
//! what we insert (the CST writes `"args": ["bridge"]` on one line where ours follow the
//! file's pretty style) and in disconnect (removing our member leaves the `"mcpServers": {}`
//! that connect created, where ours removes it again), both of which we could adapt around;
//! the one-line case we could not without bypassing the CST for the insert.

use serde_json::Value;

use super::jsonc::{self, Kind, Member, Node, ParseError};

/// Why an edit was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum JsonEditError {
    /// The text does not parse.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// Something on the path is not an object.
    #[error("\"{path}\" is not an object")]
    NotObject {
        /// The dotted path.
        path: String,
    },
}

/// Sets `path.key` to `value`. `Ok(None)` when it already holds an equal value.
///
/// # Errors
/// [`JsonEditError`]; the text is unchanged then.
pub fn set_member(
    text: &str,
    path: &[&str],
    key: &str,
    value: &Value,
) -> Result<Option<String>, JsonEditError> {
    let nl = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let Some(root) = jsonc::parse(text)? else {
        let mut doc = value.clone();
        for k in std::iter::once(key).chain(path.iter().rev().copied()) {
            doc = Value::Object(serde_json::Map::from_iter([(k.to_owned(), doc)]));
        }
        let pretty = serde_json::to_string_pretty(&doc).unwrap_or_default();
        return Ok(Some(format!("{text}{}{nl}", pretty.replace('\n', nl))));
    };
    let unit = indent_unit(text, &root);
    let mut node = &root;
    let mut walked = Vec::new();
    for (i, seg) in path.iter().enumerate() {
        let members = object(node, &walked)?;
        walked.push(*seg);
        match last(members, seg) {
            Some(m) => node = &m.value,
            None => {
                let mut inner = value.clone();
                inner = Value::Object(serde_json::Map::from_iter([(key.to_owned(), inner)]));
                for k in path[i + 1..].iter().rev() {
                    inner = Value::Object(serde_json::Map::from_iter([((*k).to_owned(), inner)]));
                }
                return Ok(Some(insert(text, node, members, seg, &inner, &unit, nl)));
            }
        }
    }
    let members = object(node, &walked)?;
    if let Some(m) = last(members, key) {
        if jsonc::to_value(text, &m.value) == *value {
            return Ok(None);
        }
        let indent = line_indent(text, m.key_start);
        let rendered = render(value, &indent, &unit, nl);
        let mut out = text.to_owned();
        out.replace_range(m.value.start..m.value.end, &rendered);
        return Ok(Some(out));
    }
    Ok(Some(insert(text, node, members, key, value, &unit, nl)))
}

/// Removes `path.key`; then removes each object on `path` (innermost first) that is left
/// empty with nothing but whitespace inside. `Ok(None)` when there is no such member.
///
/// # Errors
/// [`JsonEditError`]; the text is unchanged then.
pub fn remove_member(
    text: &str,
    path: &[&str],
    key: &str,
) -> Result<Option<String>, JsonEditError> {
    let Some(root) = jsonc::parse(text)? else {
        return Ok(None);
    };
    let Some((parent, index)) = find(text, &root, path, key)? else {
        return Ok(None);
    };
    let mut out = remove_at(text, parent, index);
    for depth in (0..path.len()).rev() {
        let Some(root) = jsonc::parse(&out)? else {
            break;
        };
        let Some((parent, index)) = find(&out, &root, &path[..depth], path[depth])? else {
            break;
        };
        let Kind::Object(members) = &parent.kind else {
            break;
        };
        let container = &members[index].value;
        let empty = matches!(&container.kind, Kind::Object(m) if m.is_empty())
            && out[container.start + 1..container.end - 1]
                .trim()
                .is_empty();
        if !empty {
            break;
        }
        out = remove_at(&out, parent, index);
    }
    Ok(Some(out))
}

/// The object at `path` and the index of `key` in it.
fn find<'n>(
    text: &str,
    root: &'n Node,
    path: &[&str],
    key: &str,
) -> Result<Option<(&'n Node, usize)>, JsonEditError> {
    let _ = text;
    let mut node = root;
    let mut walked = Vec::new();
    for seg in path {
        let members = object(node, &walked)?;
        walked.push(*seg);
        match last(members, seg) {
            Some(m) => node = &m.value,
            None => return Ok(None),
        }
    }
    let members = object(node, &walked)?;
    Ok(members
        .iter()
        .rposition(|m| m.key == key)
        .map(|i| (node, i)))
}

/// The last member named `key`: with duplicate keys, the one `JSON.parse` (and so every
/// JavaScript client) reads, and the one `serde_json` keeps.
fn last<'m>(members: &'m [Member], key: &str) -> Option<&'m Member> {
    members.iter().rev().find(|m| m.key == key)
}

fn object<'n>(node: &'n Node, walked: &[&str]) -> Result<&'n [Member], JsonEditError> {
    match &node.kind {
        Kind::Object(m) => Ok(m),
        _ => Err(JsonEditError::NotObject {
            path: if walked.is_empty() {
                "(top level)".into()
            } else {
                walked.join(".")
            },
        }),
    }
}

/// The whitespace that starts the line holding byte `pos`.
fn line_indent(text: &str, pos: usize) -> String {
    let line_start = text[..pos].rfind('\n').map_or(0, |n| n + 1);
    text[line_start..]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect()
}

/// Whether only spaces/tabs lie between the start of `pos`'s line and `pos`.
fn starts_line(text: &str, pos: usize) -> bool {
    let line_start = text[..pos].rfind('\n').map_or(0, |n| n + 1);
    text[line_start..pos].chars().all(|c| c == ' ' || c == '\t')
}

/// One indentation step: what the top-level object's first member is indented by, else two
/// spaces.
fn indent_unit(text: &str, root: &Node) -> String {
    if let Kind::Object(m) = &root.kind
        && let Some(first) = m.first()
        && starts_line(text, first.key_start)
    {
        let indent = line_indent(text, first.key_start);
        let base = line_indent(text, root.start);
        if let Some(unit) = indent.strip_prefix(base.as_str())
            && !unit.is_empty()
        {
            return unit.to_owned();
        }
    }
    "  ".into()
}

/// `value` pretty-printed with `unit` steps, continuation lines indented by `indent`.
fn render(value: &Value, indent: &str, unit: &str, nl: &str) -> String {
    let pretty = serde_json::to_string_pretty(value).unwrap_or_default();
    let lines: Vec<String> = pretty
        .lines()
        .enumerate()
        .map(|(i, line)| {
            let spaces = line.len() - line.trim_start_matches(' ').len();
            let body = &line[spaces..];
            let lead = unit.repeat(spaces / 2);
            if i == 0 {
                format!("{lead}{body}")
            } else {
                format!("{indent}{lead}{body}")
            }
        })
        .collect();
    lines.join(nl)
}

/// The byte where the line of `pos` ends, skipping spaces and comments after `pos` (so an
/// insertion never lands inside a comment); `pos` itself when code follows on that line.
fn line_end_after(text: &str, mut pos: usize) -> usize {
    let bytes = text.as_bytes();
    loop {
        match bytes.get(pos) {
            Some(b' ' | b'\t') => pos += 1,
            Some(b'/') if bytes.get(pos + 1) == Some(&b'/') => {
                let end = text[pos..].find('\n').map_or(text.len(), |n| pos + n);
                return if end > 0 && bytes[end - 1] == b'\r' {
                    end - 1
                } else {
                    end
                };
            }
            Some(b'/') if bytes.get(pos + 1) == Some(&b'*') => match text[pos + 2..].find("*/") {
                Some(n) if !text[pos..pos + n + 4].contains('\n') => pos += n + 4,
                _ => return pos,
            },
            Some(b'\r') if bytes.get(pos + 1) == Some(&b'\n') => return pos,
            _ => return pos,
        }
    }
}

/// Inserts `"key": value` as the last member of `obj`.
fn insert(
    text: &str,
    obj: &Node,
    members: &[Member],
    key: &str,
    value: &Value,
    unit: &str,
    nl: &str,
) -> String {
    let key_json = serde_json::to_string(key).unwrap_or_default();
    let mut out = text.to_owned();
    let Some(last) = members.last() else {
        let outer = line_indent(text, obj.start);
        let indent = format!("{outer}{unit}");
        let body = format!("{key_json}: {}", render(value, &indent, unit, nl));
        let interior = &text[obj.start + 1..obj.end - 1];
        if interior.trim().is_empty() {
            out.replace_range(
                obj.start + 1..obj.end - 1,
                &format!("{nl}{indent}{body}{nl}{outer}"),
            );
        } else {
            out.insert_str(obj.start + 1, &format!("{nl}{indent}{body}"));
        }
        return out;
    };
    if !starts_line(text, members[0].key_start) {
        // One-line object: `{"a": 1}` → `{"a": 1, "key": value}`.
        let compact = serde_json::to_string(value).unwrap_or_default();
        match last.comma {
            Some(c) => out.insert_str(c + 1, &format!(" {key_json}: {compact},")),
            None => out.insert_str(last.value.end, &format!(", {key_json}: {compact}")),
        }
        return out;
    }
    let indent = line_indent(text, last.key_start);
    let member = format!("{key_json}: {}", render(value, &indent, unit, nl));
    match last.comma {
        Some(c) => {
            let at = line_end_after(text, c + 1);
            out.insert_str(at, &format!("{nl}{indent}{member},"));
        }
        None => {
            let at = line_end_after(text, last.value.end);
            out.insert_str(at, &format!("{nl}{indent}{member}"));
            out.insert(last.value.end, ',');
        }
    }
    out
}

/// Removes member `index` of `obj`: the inverse of [`insert`].
fn remove_at(text: &str, obj: &Node, index: usize) -> String {
    let Kind::Object(members) = &obj.kind else {
        return text.to_owned();
    };
    let m = &members[index];
    let mut out = text.to_owned();
    let end = m.comma.map_or(m.value.end, |c| c + 1);
    let only = members.len() == 1;
    if only
        && text[obj.start + 1..m.key_start].trim().is_empty()
        && text[end..obj.end - 1].trim().is_empty()
    {
        out.replace_range(obj.start + 1..obj.end - 1, "");
        return out;
    }
    if starts_line(text, m.key_start) {
        let line_start = text[..m.key_start].rfind('\n').map_or(0, |n| n + 1);
        let mut from = line_start.saturating_sub(1);
        if from > 0 && text.as_bytes()[from - 1] == b'\r' {
            from -= 1;
        }
        if m.comma.is_none() && index > 0 {
            let prev = &members[index - 1];
            out.replace_range(from..m.value.end, "");
            if let Some(c) = prev.comma {
                out.replace_range(c..c + 1, "");
            }
        } else {
            out.replace_range(from..end, "");
        }
        return out;
    }
    // One-line object.
    let last = index + 1 == members.len();
    if m.comma.is_none() && index > 0 {
        out.replace_range(members[index - 1].value.end..m.value.end, "");
    } else if let (true, Some(c), Some(prev)) = (last, m.comma, index.checked_sub(1)) {
        // Inserted after a trailing comma as ` "key": value,`.
        let from = members[prev]
            .comma
            .map_or(members[prev].value.end, |p| p + 1);
        out.replace_range(from..c + 1, "");
    } else {
        let next = members.get(index + 1).map_or(end, |n| n.key_start);
        out.replace_range(m.key_start..next, "");
    }
    out
}
