//! Codex CLI's `config.toml`: `[mcp_servers.<name>]` edited with `toml_edit`, which keeps
//! every other byte (comments, order, spacing) as written. Also handled: `mcp_servers` written
//! as an inline table (`mcp_servers = { a = { … } }`, our entry then goes inline too), an entry
//! the person extended with their own keys (`env`, timeouts: only `command` and `args` are
//! refreshed) and CRLF files (they come back CRLF; `toml_edit` writes `\n`).

use toml_edit::{Array, DocumentMut, InlineTable, Item, Table, TableLike, value};

/// Why the TOML could not be edited.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TomlEditError {
    /// The file does not parse; the message has line and column.
    #[error("{0}")]
    Parse(String),
    /// `mcp_servers` (or the entry under it) holds something other than a table.
    #[error("\"{key}\" is {found}, not a table of servers")]
    NotTable {
        /// `mcp_servers` or `mcp_servers.<name>`.
        key: String,
        /// What it holds: `a string`, `an array`…
        found: &'static str,
    },
}

fn parse(text: &str) -> Result<DocumentMut, TomlEditError> {
    text.parse::<DocumentMut>()
        .map_err(|e| TomlEditError::Parse(e.to_string().trim().replace('\n', " ")))
}

fn kind(item: &Item) -> &'static str {
    match item {
        Item::None => "empty",
        Item::Table(_) => "a table",
        Item::ArrayOfTables(_) => "an array of tables",
        Item::Value(v) => match v {
            toml_edit::Value::String(_) => "a string",
            toml_edit::Value::Integer(_) => "an integer",
            toml_edit::Value::Float(_) => "a float",
            toml_edit::Value::Boolean(_) => "a boolean",
            toml_edit::Value::Datetime(_) => "a date",
            toml_edit::Value::Array(_) => "an array",
            toml_edit::Value::InlineTable(_) => "an inline table",
        },
    }
}

/// `out` with the newline style of `original`: CRLF when `original`'s first line ends so.
fn keep_newlines(original: &str, out: String) -> String {
    let crlf = original
        .find('\n')
        .is_some_and(|n| original[..n].ends_with('\r'));
    if crlf {
        out.replace("\r\n", "\n").replace('\n', "\r\n")
    } else {
        out
    }
}

fn same_args(existing: &dyn TableLike, args: &[&str]) -> bool {
    existing
        .get("args")
        .and_then(Item::as_array)
        .is_some_and(|a| {
            a.iter()
                .map(|v| v.as_str())
                .eq(args.iter().map(|s| Some(*s)))
        })
}

/// Sets `mcp_servers.<key>` to run `command` + `args`; other keys of an existing entry stay.
/// `Ok(None)` when already so.
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
    let found = kind(servers);
    let inline = servers.is_inline_table();
    let servers = servers
        .as_table_like_mut()
        .ok_or_else(|| TomlEditError::NotTable {
            key: "mcp_servers".into(),
            found,
        })?;
    let args_value = value(Array::from_iter(args.iter().copied()));
    match servers.get_mut(key) {
        Some(item) if item.is_table_like() => {
            let entry = item.as_table_like_mut().ok_or(TomlEditError::NotTable {
                key: format!("mcp_servers.{key}"),
                found: "a table",
            })?;
            let same_command = entry.get("command").and_then(Item::as_str) == Some(command);
            if same_command && same_args(entry, args) {
                return Ok(None);
            }
            // The person's own keys (`env`, `startup_timeout_sec`…) stay as they are.
            if !same_command {
                entry.insert("command", value(command));
            }
            if !same_args(entry, args) {
                entry.insert("args", args_value);
            }
        }
        _ if inline => {
            let mut table = InlineTable::new();
            table.insert("command", command.into());
            table.insert("args", Array::from_iter(args.iter().copied()).into());
            servers.insert(key, value(table));
        }
        _ => {
            let mut table = Table::new();
            table.insert("command", value(command));
            table.insert("args", args_value);
            servers.insert(key, Item::Table(table));
        }
    }
    let mut out = doc.to_string();
    if !text.is_empty() && !text.ends_with('\n') && out.starts_with(text) {
        // toml_edit puts the new table right after the last byte; keep it on its own line.
        out.insert(text.len(), '\n');
    }
    Ok(Some(keep_newlines(text, out)))
}

/// Removes `mcp_servers.<key>` (and `mcp_servers` when it was implicit and is now empty).
/// `Ok(None)` when absent.
///
/// # Errors
/// [`TomlEditError`].
pub fn remove_server(text: &str, key: &str) -> Result<Option<String>, TomlEditError> {
    let mut doc = parse(text)?;
    let Some(servers) = doc.get_mut("mcp_servers") else {
        return Ok(None);
    };
    let found = kind(servers);
    let implicit = servers.as_table().is_some_and(Table::is_implicit);
    let servers = servers
        .as_table_like_mut()
        .ok_or_else(|| TomlEditError::NotTable {
            key: "mcp_servers".into(),
            found,
        })?;
    if servers.remove(key).is_none() {
        return Ok(None);
    }
    if servers.is_empty() && implicit {
        doc.remove("mcp_servers");
    }
    Ok(Some(keep_newlines(text, doc.to_string())))
}

/// Whether `mcp_servers.<key>` exists.
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

/// The command and arguments of the server `key` (`command` then each of `args`), if it has
/// one; strings only.
///
/// # Errors
/// [`TomlEditError`] for a file that does not parse.
pub fn server_invocation(text: &str, key: &str) -> Result<Option<Vec<String>>, TomlEditError> {
    let doc = parse(text)?;
    let Some(server) = doc
        .get("mcp_servers")
        .and_then(Item::as_table_like)
        .and_then(|t| t.get(key))
        .and_then(Item::as_table_like)
    else {
        return Ok(None);
    };
    let mut out: Vec<String> = server
        .get("command")
        .and_then(Item::as_str)
        .map(str::to_owned)
        .into_iter()
        .collect();
    if let Some(args) = server.get("args").and_then(Item::as_array) {
        out.extend(args.iter().filter_map(|a| a.as_str()).map(str::to_owned));
    }
    Ok(Some(out))
}
