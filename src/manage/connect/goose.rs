//! Goose's `config.yaml`: our entry in its `extensions` map, edited as text.
//!
//! Decision: no YAML crate keeps comments through an edit (`serde_yaml` and its forks
//! re-serialize; the comment-keeping editors are young and not in this tree), and a person's
//! file holds their provider, model and comments. So only the lines of our own block are
//! written: a new entry goes after the last line of `extensions` (or a new `extensions:` block
//! at the end of the file), a refresh rewrites only our `cmd:` and `args:` lines, and
//! `disconnect` removes exactly our lines (and `extensions:` when ours was its only entry),
//! so connect + disconnect gives back the original bytes (two exceptions: a file without a
//! final line break gains one, and `extensions: {}` goes with our entry). Every other byte
//! stays.
//!
//! The file must have the shape Goose itself writes: a top-level map whose `extensions` is a
//! block map (`extensions:` then indented `name:` keys) or the empty `extensions: {}`. Anything
//! else — `extensions` written inline or as a list, twice, tabs in its indentation, our entry
//! written inline — is refused naming the line, and the file is not touched.

use serde_json::Value;

use super::yaml_lines::{
    Line, flow_list, indent, is_filler, key_line, scalar, split, strip_comment,
};

/// Seconds Goose waits for a call to our entry (the value Goose writes for a new extension).
pub const TIMEOUT_SECS: u64 = 300;

/// Why the file was not edited.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct YamlShapeError {
    /// 1-based line.
    pub line: usize,
    /// What is there that connect does not edit.
    pub message: String,
}

fn refuse(line: usize, message: impl Into<String>) -> YamlShapeError {
    YamlShapeError {
        line: line + 1,
        message: message.into(),
    }
}

/// Where `extensions` and our entry are.
struct Found {
    /// The `extensions:` line, when there is one.
    key: Option<usize>,
    /// `extensions: {}`.
    empty_flow: bool,
    /// The last line that belongs to `extensions` (its key line when it has no entries).
    last: usize,
    /// The entries' indentation, when there are entries.
    child_indent: Option<usize>,
    /// One step inside an entry, as the first entry has it.
    unit: Option<usize>,
    /// Our entry: its first and last line.
    ours: Option<(usize, usize)>,
    /// How many entries there are.
    entries: usize,
}

fn find(lines: &[Line<'_>], name: &str) -> Result<Found, YamlShapeError> {
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
fn fields<'a>(lines: &'a [Line<'a>], first: usize, last: usize) -> Vec<(String, String, usize)> {
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
fn list_items(
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

/// What our entry runs: `cmd` then `args`, flattened; `None` without the entry.
///
/// # Errors
/// [`YamlShapeError`] for a file whose shape connect does not edit.
pub fn extension_invocation(text: &str, name: &str) -> Result<Option<Vec<String>>, YamlShapeError> {
    let lines = split(text);
    let found = find(&lines, name)?;
    let Some((first, last)) = found.ours else {
        return Ok(None);
    };
    let mut runs = Vec::new();
    let fields = fields(&lines, first, last);
    if let Some((_, rest, _)) = fields.iter().find(|(k, ..)| k == "cmd") {
        runs.extend(scalar(rest));
    }
    if let Some((_, rest, at)) = fields.iter().find(|(k, ..)| k == "args") {
        if rest.is_empty() {
            let key_indent = indent(lines[*at].text);
            for i in list_items(&lines, *at, last, key_indent) {
                let item = lines[i].text.trim_start()[1..].trim();
                runs.extend(scalar(strip_comment(item)));
            }
        } else {
            runs.extend(flow_list(rest).unwrap_or_default());
        }
    }
    Ok(Some(runs))
}

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
