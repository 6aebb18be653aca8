//! Codex CLI's `config.toml`: `[mcp_servers.<name>]` edited with `toml_edit`, which keeps
//! every other byte (comments, order, spacing) as written.

use toml_edit::{Array, DocumentMut, Item, Table, value};

/// Why the TOML could not be edited.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TomlEditError {
    /// The file does not parse; the message has line and column.
    #[error("{0}")]
    Parse(String),
    /// `mcp_servers` is not a table.
    #[error("\"mcp_servers\" is not a table")]
    NotTable,
}

fn parse(text: &str) -> Result<DocumentMut, TomlEditError> {
    text.parse::<DocumentMut>()
        .map_err(|e| TomlEditError::Parse(e.to_string().trim().replace('\n', " ")))
}

/// Sets `[mcp_servers.<key>]` to `command` + `args`. `Ok(None)` when already so.
///
/// # Errors
/// [`TomlEditError`].
pub fn set_server(
    text: &str,
    key: &str,
    command: &str,
    args: &[&str],
) -> Result<Option<String>, TomlEditError> {
    let mut doc = parse(text)?;
    let mut implicit = Table::new();
    implicit.set_implicit(true);
    let servers = doc.entry("mcp_servers").or_insert(Item::Table(implicit));
    let servers = servers.as_table_mut().ok_or(TomlEditError::NotTable)?;
    if let Some(existing) = servers.get(key).and_then(Item::as_table_like) {
        let same_command = existing.get("command").and_then(Item::as_str) == Some(command);
        let same_args = existing
            .get("args")
            .and_then(Item::as_array)
            .is_some_and(|a| {
                a.iter()
                    .map(|v| v.as_str())
                    .eq(args.iter().map(|s| Some(*s)))
            });
        if same_command && same_args {
            return Ok(None);
        }
    }
    let mut table = Table::new();
    table.insert("command", value(command));
    table.insert("args", value(Array::from_iter(args.iter().copied())));
    servers.insert(key, Item::Table(table));
    let mut out = doc.to_string();
    if !text.is_empty() && !text.ends_with('\n') && out.starts_with(text) {
        // toml_edit puts the new table right after the last byte; keep it on its own line.
        out.insert(text.len(), '\n');
    }
    Ok(Some(out))
}

/// Removes `[mcp_servers.<key>]` (and `mcp_servers` when it was implicit and is now empty).
/// `Ok(None)` when absent.
///
/// # Errors
/// [`TomlEditError`].
pub fn remove_server(text: &str, key: &str) -> Result<Option<String>, TomlEditError> {
    let mut doc = parse(text)?;
    let Some(servers) = doc.get_mut("mcp_servers") else {
        return Ok(None);
    };
    let servers = servers.as_table_mut().ok_or(TomlEditError::NotTable)?;
    if servers.remove(key).is_none() {
        return Ok(None);
    }
    if servers.is_empty() && servers.is_implicit() {
        doc.remove("mcp_servers");
    }
    Ok(Some(doc.to_string()))
}

/// Whether `[mcp_servers.<key>]` exists.
///
/// # Errors
/// [`TomlEditError::Parse`].
pub fn has_server(text: &str, key: &str) -> Result<bool, TomlEditError> {
    let doc = parse(text)?;
    Ok(doc
        .get("mcp_servers")
        .and_then(Item::as_table_like)
        .is_some_and(|t| t.contains_key(key)))
}
