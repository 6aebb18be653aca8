//! The one error type that crosses the Tauri boundary: a stable machine-readable `kind`, a
//! human `message`, and, for entry validation, the `field` the window highlights.

use mcp_companion::config::{ConfigError, UnknownServer};
use mcp_companion::hub::{AgentError, HubError};
use mcp_companion::manage::edit::EditError;
use mcp_companion::manage::presets::PresetError;
use mcp_companion::manage::probe::ProbeError;
use mcp_companion::secret::SecretError;
use serde::Serialize;

/// Stable error kinds the front end switches on (never on message text).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ErrorKind {
    /// No server has that name.
    UnknownServer,
    /// An entry, name or whitelist failed validation.
    Invalid,
    /// A server with that name already exists.
    Exists,
    /// The config file could not be read or written.
    File,
    /// The probe could not connect.
    Connect,
    /// An import source could not be read.
    Import,
    /// The OS integration (autostart, logging) failed.
    System,
    /// The companion is quitting and takes no more commands.
    ShuttingDown,
    /// The OS keychain is unavailable or refused a secret.
    Keychain,
    /// An update would connect to another origin; it needs the person's yes.
    Moved,
    /// No connected agent session has that id (it left).
    UnknownAgent,
    /// No valid profile has that name.
    UnknownProfile,
}

/// What a failed command returns to the window.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(rename_all = "camelCase")]
#[error("{message}")]
pub struct CommandError {
    /// Machine-readable kind.
    pub kind: ErrorKind,
    /// For people.
    pub message: String,
    /// The entry field at fault (`command`, `url`, `env.KEY`, …), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

impl CommandError {
    /// An error without a field.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> CommandError {
        CommandError {
            kind,
            message: message.into(),
            field: None,
        }
    }
}

impl From<UnknownServer> for CommandError {
    fn from(e: UnknownServer) -> CommandError {
        CommandError::new(ErrorKind::UnknownServer, e.to_string())
    }
}

impl From<AgentError> for CommandError {
    fn from(e: AgentError) -> CommandError {
        let kind = match e {
            AgentError::UnknownAgent(_) => ErrorKind::UnknownAgent,
            AgentError::UnknownProfile(_) => ErrorKind::UnknownProfile,
        };
        CommandError::new(kind, e.to_string())
    }
}

impl From<HubError> for CommandError {
    fn from(e: HubError) -> CommandError {
        let kind = match e {
            HubError::UnknownServer { .. } => ErrorKind::UnknownServer,
            HubError::InvalidEntry { .. } => ErrorKind::Invalid,
            HubError::ShuttingDown => ErrorKind::ShuttingDown,
        };
        CommandError::new(kind, e.to_string())
    }
}

fn config_field(e: &ConfigError) -> Option<String> {
    match e {
        ConfigError::Field { field, .. }
        | ConfigError::MissingVariable { field, .. }
        | ConfigError::MissingSecret { field, .. }
        | ConfigError::Secret { field, .. } => Some(field.clone()),
        _ => None,
    }
}

impl From<EditError> for CommandError {
    fn from(e: EditError) -> CommandError {
        let (kind, field) = match &e {
            EditError::Name { .. } => (ErrorKind::Invalid, Some("name".to_owned())),
            EditError::Invalid(c) => (ErrorKind::Invalid, config_field(c)),
            EditError::Whitelist(_) => (ErrorKind::Invalid, Some("ssrfWhitelist".to_owned())),
            EditError::UnknownServer { .. } => (ErrorKind::UnknownServer, None),
            EditError::Exists { .. } => (ErrorKind::Exists, Some("name".to_owned())),
            EditError::File(_) => (ErrorKind::File, None),
        };
        CommandError {
            kind,
            message: e.to_string(),
            field,
        }
    }
}

impl From<ConfigError> for CommandError {
    fn from(e: ConfigError) -> CommandError {
        CommandError {
            kind: ErrorKind::File,
            field: config_field(&e),
            message: e.to_string(),
        }
    }
}

impl From<PresetError> for CommandError {
    fn from(e: PresetError) -> CommandError {
        let field = match &e {
            PresetError::MissingInput { input, .. } => Some(input.clone()),
            PresetError::UnknownPreset { .. } => None,
        };
        CommandError {
            kind: ErrorKind::Invalid,
            message: e.to_string(),
            field,
        }
    }
}

impl From<SecretError> for CommandError {
    fn from(e: SecretError) -> CommandError {
        CommandError::new(ErrorKind::Keychain, e.to_string())
    }
}

impl From<ProbeError> for CommandError {
    fn from(e: ProbeError) -> CommandError {
        match e {
            ProbeError::Invalid(edit) => edit.into(),
            ProbeError::Expand(c) => CommandError {
                kind: ErrorKind::Invalid,
                field: config_field(&c),
                message: c.to_string(),
            },
            ProbeError::Connect(c) => CommandError::new(ErrorKind::Connect, c.to_string()),
        }
    }
}
