//! Reading the shape of Goose's `config.yaml` line by line: where `extensions` is, where our
//! entry starts and ends, how its entries are indented, and the shapes connect refuses to edit
//! (module doc of `goose`).

use super::super::yaml_lines::{Line, indent, is_filler, key_line};
use super::{YamlShapeError, refuse};

/// Where `extensions` and our entry are.
pub(super) struct Found {
    /// The `extensions:` line, when there is one.
    pub(super) key: Option<usize>,
    /// `extensions: {}`.
    pub(super) empty_flow: bool,
    /// The last line that belongs to `extensions` (its key line when it has no entries).
    pub(super) last: usize,
    /// The entries' indentation, when there are entries.
    pub(super) child_indent: Option<usize>,
    /// One step inside an entry, as the first entry has it.
    pub(super) unit: Option<usize>,
    /// Our entry: its first and last line.
    pub(super) ours: Option<(usize, usize)>,
    /// How many entries there are.
    pub(super) entries: usize,
}

pub(super) fn find(lines: &[Line<'_>], name: &str) -> Result<Found, YamlShapeError> {
    let mut key = None;
    let mut empty_flow = false;
    for (i, line) in lines.iter().enumerate() {
        let t = line.text;
        if is_filler(t) || indent(t) > 0 {
            continue;
        }
        if t == "---" && lines[..i].iter().all(|l| is_filler(l.text)) {
            continue;
        }
        let Some((k, rest)) = key_line(t) else {
            return Err(refuse(
                i,
                format!("`{t}` is not a `key: value` line of a top-level map"),
            ));
        };
        if k != "extensions" {
            continue;
        }
        if key.is_some() {
            return Err(refuse(i, "\"extensions\" appears twice"));
        }
        match rest.as_str() {
            "" => {}
            "{}" => empty_flow = true,
            _ => {
                return Err(refuse(
                    i,
                    format!(
                        "\"extensions\" is written inline (`{rest}`); connect edits only the \
                         block form Goose writes"
                    ),
                ));
            }
        }
        key = Some(i);
    }
    let Some(at) = key else {
        return Ok(Found {
            key: None,
            empty_flow: false,
            last: 0,
            child_indent: None,
            unit: None,
            ours: None,
            entries: 0,
        });
    };
    let mut found = Found {
        key: Some(at),
        empty_flow,
        last: at,
        child_indent: None,
        unit: None,
        ours: None,
        entries: 0,
    };
    if empty_flow {
        return Ok(found);
    }
    // The entry being read: its name and first line.
    let mut current: Option<(String, usize)> = None;
    for (i, line) in lines.iter().enumerate().skip(at + 1) {
        let t = line.text;
        if is_filler(t) {
            continue;
        }
        if t[..t.len() - t.trim_start().len()].contains('\t') {
            return Err(refuse(i, "a tab in the indentation of \"extensions\""));
        }
        let n = indent(t);
        if n == 0 {
            break;
        }
        let child = *found.child_indent.get_or_insert(n);
        if n < child {
            return Err(refuse(i, "uneven indentation under \"extensions\""));
        }
        if n == child {
            if t.trim_start().starts_with('-') {
                return Err(refuse(
                    i,
                    "\"extensions\" is a list; Goose writes a map of name: entry",
                ));
            }
            let Some((k, rest)) = key_line(t) else {
                return Err(refuse(i, format!("`{}` is not an entry", t.trim())));
            };
            if let Some((prev, first)) = current.take()
                && prev == name
            {
                found.ours = Some((first, found.last));
            }
            if k == name {
                if found.ours.is_some() {
                    return Err(refuse(i, format!("\"{name}\" appears twice")));
                }
                if !rest.is_empty() {
                    return Err(refuse(
                        i,
                        format!("the entry \"{name}\" is written inline; edit it by hand"),
                    ));
                }
            }
            found.entries += 1;
            current = Some((k, i));
        } else if found.unit.is_none() {
            found.unit = Some(n - child);
        }
        found.last = i;
    }
    if let Some((prev, first)) = current
        && prev == name
    {
        found.ours = Some((first, found.last));
    }
    Ok(found)
}

/// The direct fields of the entry spanning `first..=last`: `(key, rest, line)`.
pub(super) fn fields<'a>(
    lines: &'a [Line<'a>],
    first: usize,
    last: usize,
) -> Vec<(String, String, usize)> {
    let mut inner = None;
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate().take(last + 1).skip(first + 1) {
        if is_filler(line.text) {
            continue;
        }
        let n = indent(line.text);
        if *inner.get_or_insert(n) == n
            && let Some((k, rest)) = key_line(line.text)
        {
            out.push((k, rest, i));
        }
    }
    out
}

/// The `- item` lines of a block list starting after `key_line` (at `indent` or deeper),
/// up to `last`: their indices.
pub(super) fn list_items(
    lines: &[Line<'_>],
    key_line: usize,
    last: usize,
    indent_of_key: usize,
) -> Vec<usize> {
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate().take(last + 1).skip(key_line + 1) {
        if is_filler(line.text) {
            continue;
        }
        let t = line.text.trim_start();
        if indent(line.text) >= indent_of_key && (t == "-" || t.starts_with("- ")) {
            out.push(i);
        } else {
            break;
        }
    }
    out
}
