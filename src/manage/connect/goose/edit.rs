//! Writing our entry into Goose's `config.yaml`: a new block in Goose's own layout, a refresh
//! of only its `cmd:` and `args:` lines, and its removal, every other byte kept.

use serde_json::Value;

use super::super::yaml_lines::{Line, flow_list, indent, scalar, split, strip_comment};
use super::find::{fields, find, list_items};
use super::{TIMEOUT_SECS, YamlShapeError, refuse};

fn quoted(s: &str) -> String {
    Value::String(s.to_owned()).to_string()
}

fn args_flow(args: &[&str]) -> String {
    let items: Vec<String> = args.iter().map(|a| quoted(a)).collect();
    format!("[{}]", items.join(", "))
}

/// Our entry's lines at `child` indentation with `unit` steps, each ending in `nl`.
fn render(name: &str, cmd: &str, args: &[&str], child: usize, unit: usize, nl: &str) -> String {
    let (c, u) = (" ".repeat(child), " ".repeat(child + unit));
    let fields = [
        format!("name: {name}"),
        "type: stdio".to_owned(),
        format!("cmd: {}", quoted(cmd)),
        format!("args: {}", args_flow(args)),
        "enabled: true".to_owned(),
        format!("timeout: {TIMEOUT_SECS}"),
        format!(
            "description: {}",
            quoted("Every server of MCP Companion, through its bridge")
        ),
    ];
    let mut out = format!("{c}{name}:{nl}");
    for f in fields {
        out.push_str(&format!("{u}{f}{nl}"));
    }
    out
}

fn newline(text: &str) -> &'static str {
    if text.contains("\r\n") { "\r\n" } else { "\n" }
}

/// Adds our entry `name` running `cmd args` to `extensions`, or refreshes its `cmd` and
/// `args`. `Ok(None)` when it already runs that.
///
/// # Errors
/// [`YamlShapeError`]; nothing is written then.
pub fn set_extension(
    text: &str,
    name: &str,
    cmd: &str,
    args: &[&str],
) -> Result<Option<String>, YamlShapeError> {
    let nl = newline(text);
    let lines = split(text);
    let found = find(&lines, name)?;
    if let Some((first, last)) = found.ours {
        return refresh(text, &lines, first, last, cmd, args);
    }
    let child = found.child_indent.unwrap_or(2);
    let unit = found.unit.unwrap_or(2);
    let block = render(name, cmd, args, child, unit, nl);
    let mut out = text.to_owned();
    match found.key {
        None => {
            if !out.is_empty() && !out.ends_with('\n') {
                out.push_str(nl);
            }
            out.push_str(&format!("extensions:{nl}{block}"));
        }
        Some(at) if found.empty_flow => {
            let line = &lines[at];
            out.replace_range(line.start..line.end, &format!("extensions:{nl}{block}"));
        }
        Some(_) => {
            let after = &lines[found.last];
            let mut insert = String::new();
            if after.end == text.len() && !text.ends_with('\n') {
                insert.push_str(nl);
            }
            insert.push_str(&block);
            out.insert_str(after.end, &insert);
        }
    }
    Ok(Some(out))
}

fn refresh(
    text: &str,
    lines: &[Line<'_>],
    first: usize,
    last: usize,
    cmd: &str,
    args: &[&str],
) -> Result<Option<String>, YamlShapeError> {
    let fields = fields(lines, first, last);
    let field = |key: &str| fields.iter().find(|(k, ..)| k == key);
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    let cmd_line = field("cmd").ok_or_else(|| refuse(first, "our entry has no `cmd:`"))?;
    if scalar(&cmd_line.1).as_deref() != Some(cmd) {
        let l = &lines[cmd_line.2];
        let body = format!("{}cmd: {}", " ".repeat(indent(l.text)), quoted(cmd));
        edits.push((l.start, l.start + l.text.len(), body));
    }
    let (_, rest, at) = field("args").ok_or_else(|| refuse(first, "our entry has no `args:`"))?;
    let l = &lines[*at];
    let key_indent = indent(l.text);
    let items = if rest.is_empty() {
        list_items(lines, *at, last, key_indent)
    } else {
        Vec::new()
    };
    let current: Vec<String> = if rest.is_empty() {
        items
            .iter()
            .filter_map(|i| scalar(strip_comment(lines[*i].text.trim_start()[1..].trim())))
            .collect()
    } else {
        flow_list(rest).ok_or_else(|| refuse(*at, "our entry's `args` cannot be read"))?
    };
    if current.iter().map(String::as_str).ne(args.iter().copied()) {
        let end = items.last().map_or(l.start + l.text.len(), |i| {
            lines[*i].start + lines[*i].text.len()
        });
        let body = format!("{}args: {}", " ".repeat(key_indent), args_flow(args));
        edits.push((l.start, end, body));
    }
    if edits.is_empty() {
        return Ok(None);
    }
    let mut out = text.to_owned();
    edits.sort_by_key(|e| std::cmp::Reverse(e.0));
    for (from, to, body) in edits {
        out.replace_range(from..to, &body);
    }
    Ok(Some(out))
}

/// Removes our entry `name` (and `extensions:` when it was the only one). `Ok(None)` without
/// it.
///
/// # Errors
/// [`YamlShapeError`]; nothing is written then.
pub fn remove_extension(text: &str, name: &str) -> Result<Option<String>, YamlShapeError> {
    let lines = split(text);
    let found = find(&lines, name)?;
    let Some((first, last)) = found.ours else {
        return Ok(None);
    };
    let mut cuts = vec![(lines[first].start, lines[last].end)];
    if found.entries == 1
        && let Some(key) = found.key
    {
        // `extensions:` with nothing under it would read as null, which Goose refuses.
        cuts.push((lines[key].start, lines[key].end));
    }
    cuts.sort_by_key(|c| std::cmp::Reverse(c.0));
    let mut out = text.to_owned();
    for (from, to) in cuts {
        out.replace_range(from..to, "");
    }
    Ok(Some(out))
}
