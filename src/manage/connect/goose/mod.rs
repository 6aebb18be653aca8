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
//!
//! This file owns the refusal and reading our entry back; `find.rs` reads where `extensions`
//! and our entry are, `edit.rs` writes, refreshes and removes our lines.

use super::yaml_lines::{flow_list, indent, scalar, split, strip_comment};

mod edit;
mod find;

pub use self::edit::{remove_extension, set_extension};
use self::find::{fields, find, list_items};

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
