//! One source file read for an import: JSON with comments (VS Code's), its client, and the
//! server entries where that client keeps them.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{ClientKind, detect_client};
use crate::manage::connect::jsonc;

/// One source document to import from.
#[derive(Clone, Debug)]
pub struct Source {
    /// Whose format it is.
    pub client: ClientKind,
    /// Where it was read (for the report).
    pub path: PathBuf,
    /// Its parsed JSON.
    pub doc: Value,
}

/// Why a file could not be read as a source.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// Reading failed.
    #[error("cannot read {path}: {reason}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        reason: String,
    },
    /// The file is not JSON (VS Code's JSON-with-comments is stripped of comments first).
    #[error("{path} is not valid JSON: {reason}")]
    Syntax {
        /// The file.
        path: PathBuf,
        /// What the parser said.
        reason: String,
    },
}

impl Source {
    /// Reads `path`, guessing the client with [`detect_client`] unless `client` is given.
    ///
    /// # Errors
    /// [`ImportError`] when the file cannot be read or is not JSON.
    pub fn read(path: &Path, client: Option<ClientKind>) -> Result<Source, ImportError> {
        let text = std::fs::read_to_string(path).map_err(|e| ImportError::Read {
            path: path.to_owned(),
            reason: e.to_string(),
        })?;
        // Notepad starts UTF-8 files with a byte order mark.
        let text = text.strip_prefix(crate::config::BOM).unwrap_or(&text);
        let doc: Value = parse_jsonc(text).map_err(|e| ImportError::Syntax {
            path: path.to_owned(),
            reason: e.to_string(),
        })?;
        let client = client.unwrap_or_else(|| detect_client(path, &doc));
        Ok(Source {
            client,
            path: path.to_owned(),
            doc,
        })
    }

    /// The source's server entries, by name, in file order.
    pub(super) fn servers(&self) -> Vec<(&String, &Value)> {
        let map = match self.client {
            ClientKind::ClaudeDesktop | ClientKind::Cursor => self.doc.get("mcpServers"),
            ClientKind::VsCode => self
                .doc
                .get("servers")
                .or_else(|| self.doc.pointer("/mcp/servers")),
            ClientKind::Nanobot => self.doc.pointer("/tools/mcpServers"),
        };
        map.and_then(Value::as_object)
            .map(|m| m.iter().collect())
            .unwrap_or_default()
    }
}

/// `text` read as JSONC, the way VS Code and Zed read their files (comments, trailing
/// commas; a key written twice counts where it appears last, as in `JSON.parse`). A file with
/// nothing but whitespace and comments is `null`.
pub(super) fn parse_jsonc(text: &str) -> Result<Value, jsonc::ParseError> {
    Ok(jsonc::parse(text)?.map_or(Value::Null, |root| jsonc::to_value(text, &root)))
}
