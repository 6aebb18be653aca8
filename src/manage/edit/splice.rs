//! Byte-preserving rewrites of a JSON text: saving never rewrites what the user wrote.
//!
//! [`rewrite`] takes the original text and the wanted document and changes only the bytes of
//! what differs: a changed value is replaced in place, a removed member is cut out with its
//! comma, an added member is appended after the object's last member with the indentation its
//! siblings use. Objects present on both sides are compared member by member, so editing one
//! server entry (or one value inside it) leaves every other entry, key, key order, blank line
//! and indentation exactly as written. Arrays and scalars are replaced whole.
//!
//! New text follows the surrounding style: a value replacing a one-line container stays on one
//! line (`{"a": 1, "b": [2]}`); otherwise it is pretty-printed with the file's indent unit
//! (detected from the object, two spaces by default) starting at the member's indentation.

use serde_json::{Map, Value};

use super::spans::{Obj, scan_top};

/// One replacement of `text[start..end]`.
struct Splice {
    start: usize,
    end: usize,
    with: String,
}

/// Layout of an object's members: how a member line starts and the indent unit.
#[derive(Clone)]
struct Layout {
    /// Whitespace before each member: `"\n    "` for one member per line, `""` or `" "` inline.
    sep: String,
    /// The indent unit (`"  "`, `"    "`, `"\t"`).
    unit: String,
}

impl Layout {
    fn multiline(&self) -> bool {
        self.sep.contains('\n')
    }
    /// The indentation of a member line.
    fn indent(&self) -> &str {
        self.sep.rsplit('\n').next().unwrap_or("")
    }
}

/// Returns `text` changed so that it parses to `new`, touching only the bytes of the members
/// that differ from what `text` holds.
///
/// `text` must be a JSON object and `new` an object; otherwise (or if `text` is not valid
/// JSON) `None` is returned and the caller should write `new` whole.
pub fn rewrite(text: &str, new: &Value) -> Option<String> {
    let old: Value = serde_json::from_str(text).ok()?;
    let (Value::Object(old), Value::Object(new_map)) = (&old, new) else {
        return None;
    };
    let top = scan_top(text)?;
    let mut splices = Vec::new();
    let unit = detect_unit(text, &top).unwrap_or_else(|| "  ".to_owned());
    diff_object(text, &top, old, new_map, &unit, true, &mut splices);
    splices.sort_by(|a, b| b.start.cmp(&a.start).then(b.end.cmp(&a.end)));
    let mut out = text.to_owned();
    for s in splices {
        out.replace_range(s.start..s.end, &s.with);
    }
    // The scanner trusts its input; prove the result means what was asked before anyone saves it.
    let check: Value = serde_json::from_str(&out).ok()?;
    (check == *new).then_some(out)
}

/// The indent unit of the document: the indentation of the top object's first member line.
fn detect_unit(text: &str, top: &Obj) -> Option<String> {
    let first = top.members.first()?;
    let sep = &text[top.open + 1..first.key_start];
    let indent = sep.rsplit_once('\n')?.1;
    (!indent.is_empty()).then(|| indent.to_owned())
}

/// The whitespace at the start of the line holding `pos`.
fn line_indent(text: &str, pos: usize) -> &str {
    let line_start = text[..pos].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[line_start..pos];
    let end = line
        .find(|c: char| c != ' ' && c != '\t')
        .unwrap_or(line.len());
    &line[..end]
}

fn layout_of(text: &str, obj: &Obj, unit: &str, parent_multiline: bool) -> Layout {
    match obj.members.first() {
        Some(first) => Layout {
            sep: text[obj.open + 1..first.key_start].to_owned(),
            unit: unit.to_owned(),
        },
        None if parent_multiline => Layout {
            sep: format!("\n{}{unit}", line_indent(text, obj.open)),
            unit: unit.to_owned(),
        },
        None => Layout {
            sep: String::new(),
            unit: unit.to_owned(),
        },
    }
}

fn diff_object(
    text: &str,
    obj: &Obj,
    old: &Map<String, Value>,
    new: &Map<String, Value>,
    unit: &str,
    parent_multiline: bool,
    out: &mut Vec<Splice>,
) {
    let layout = layout_of(text, obj, unit, parent_multiline);
    // Members as `serde_json` sees them: the last of duplicate keys. Earlier duplicates are
    // dead text; they are removed only when their key is.
    let live = |i: usize| {
        let m = &obj.members[i];
        obj.members[i + 1..].iter().all(|later| later.key != m.key)
    };
    let kept: Vec<bool> = (0..obj.members.len())
        .map(|i| new.contains_key(&obj.members[i].key))
        .collect();
    let added: Vec<(&String, &Value)> = new.iter().filter(|(k, _)| !old.contains_key(*k)).collect();

    let Some(first_kept) = kept.iter().position(|k| *k) else {
        // Nothing survives: write the members afresh between the braces.
        let body = render_members(&added, &layout);
        let close_ws = if added.is_empty() || !layout.multiline() {
            String::new()
        } else {
            format!("\n{}", line_indent(text, obj.open))
        };
        out.push(Splice {
            start: obj.open + 1,
            end: obj.close,
            with: format!("{body}{close_ws}"),
        });
        return;
    };
    if first_kept > 0 {
        out.push(Splice {
            start: obj.members[0].key_start,
            end: obj.members[first_kept].key_start,
            with: String::new(),
        });
    }
    for (i, m) in obj.members.iter().enumerate() {
        if !kept[i] {
            if i > first_kept {
                out.push(Splice {
                    start: obj.members[i - 1].value_end,
                    end: m.value_end,
                    with: String::new(),
                });
            }
            continue;
        }
        if !live(i) {
            continue;
        }
        let (Some(before), Some(after)) = (old.get(&m.key), new.get(&m.key)) else {
            continue;
        };
        if before == after {
            continue;
        }
        match (&m.object, before, after) {
            (Some(inner), Value::Object(b), Value::Object(a)) => {
                diff_object(text, inner, b, a, unit, layout.multiline(), out);
            }
            _ => {
                let old_text = &text[m.value_start..m.value_end];
                let non_empty_container = match before {
                    Value::Object(o) => !o.is_empty(),
                    Value::Array(a) => !a.is_empty(),
                    _ => false,
                };
                let inline_container = non_empty_container && !old_text.contains('\n');
                let pretty = layout.multiline() && !inline_container;
                out.push(Splice {
                    start: m.value_start,
                    end: m.value_end,
                    with: render(after, pretty, &layout.unit, layout.indent()),
                });
            }
        }
    }
    if !added.is_empty() {
        let last = obj.members.last().map_or(obj.open + 1, |m| m.value_end);
        out.push(Splice {
            start: last,
            end: last,
            with: format!(",{}", render_members(&added, &layout)),
        });
    }
}

/// `"k": v` members joined by commas, each preceded by the layout's separator (the first one
/// too, so the result goes right after `{` or after a `,`).
fn render_members(members: &[(&String, &Value)], layout: &Layout) -> String {
    members
        .iter()
        .map(|(k, v)| {
            format!(
                "{}{}: {}",
                layout.sep,
                Value::String((*k).clone()),
                render(v, layout.multiline(), &layout.unit, layout.indent())
            )
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// `value` as text: pretty with `unit` per level, continuation lines starting at `indent`; or
/// on one line with a space after every `:` and `,`.
fn render(value: &Value, pretty: bool, unit: &str, indent: &str) -> String {
    if !pretty {
        return inline(value);
    }
    let mut buf = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(unit.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
    if serde::Serialize::serialize(value, &mut ser).is_err() {
        return inline(value);
    }
    String::from_utf8_lossy(&buf).replace('\n', &format!("\n{indent}"))
}

fn inline(value: &Value) -> String {
    match value {
        Value::Object(m) if !m.is_empty() => {
            let inner: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), inline(v)))
                .collect();
            format!("{{{}}}", inner.join(", "))
        }
        Value::Array(a) if !a.is_empty() => {
            let inner: Vec<String> = a.iter().map(inline).collect();
            format!("[{}]", inner.join(", "))
        }
        other => other.to_string(),
    }
}
