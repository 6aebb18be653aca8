//! Pinned tool definitions: the fingerprint of each tool a person approved, and the split of a
//! server's listing into what agents may see and what waits for approval.
//!
//! A capability's *definition* is the canonical JSON (objects' keys sorted at every depth, no
//! whitespace) of what a model reads as its contract ([`Kind::fields`]): a tool's `name`,
//! `description`, `inputSchema`, `outputSchema` and `annotations`; a prompt's `name`,
//! `description` and `arguments`; a resource's `uri`, `name`, `description` and `mimeType`; a
//! template's `uriTemplate`, `name`, `description` and `mimeType`. Its *fingerprint* is the
//! lowercase hex SHA-256 of that text. `title`, `icons`, `_meta`, a resource's `size` and
//! annotations (`lastModified` changes with the content) are not part of it.
//!
//! A capability is served when its server's pins hold its key (name; URI for a resource, URI
//! template for a template) with the same fingerprint. One whose fingerprint differs, or whose
//! key is not pinned, is withheld ([`Waiting`]). A renamed tool is a new name, so it waits like
//! any new tool. Removed capabilities simply leave the catalog; their pins stay, so one that
//! comes back unchanged is served again.
//!
//! The hub owns the state and where it is stored (`hub::pins`); this module is pure.

mod describe;
mod fingerprint;
mod split;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use fingerprint::{pin, pin_all, pin_tool};
pub use split::withhold;

/// One approved tool: its fingerprint and the definition it was computed from (kept so a later
/// change can be shown as a diff).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PinnedTool {
    /// Lowercase hex SHA-256 of the canonical definition.
    pub fingerprint: String,
    /// The definition (see the module docs).
    pub definition: Value,
}

/// What kind of capability a pin or a [`Waiting`] is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Kind {
    /// A tool, keyed by name.
    #[default]
    Tool,
    /// A prompt, keyed by name.
    Prompt,
    /// A concrete resource, keyed by URI.
    Resource,
    /// A resource template, keyed by URI template.
    ResourceTemplate,
}

impl Kind {
    /// The fields of the definition (see the module docs).
    pub fn fields(self) -> &'static [&'static str] {
        match self {
            Kind::Tool => &[
                "name",
                "description",
                "inputSchema",
                "outputSchema",
                "annotations",
            ],
            Kind::Prompt => &["name", "description", "arguments"],
            Kind::Resource => &["uri", "name", "description", "mimeType"],
            Kind::ResourceTemplate => &["uriTemplate", "name", "description", "mimeType"],
        }
    }

    /// The word a person reads: `tool`, `prompt`, `resource`, `resource template`.
    pub fn word(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Prompt => "prompt",
            Kind::Resource => "resource",
            Kind::ResourceTemplate => "resource template",
        }
    }
}

/// One server's approved capabilities, by upstream key.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerPins {
    /// Approved tools, by upstream name.
    pub tools: BTreeMap<String, PinnedTool>,
    /// Approved prompts, by upstream name.
    #[serde(default)]
    pub prompts: BTreeMap<String, PinnedTool>,
    /// Approved resources, by upstream URI.
    #[serde(default)]
    pub resources: BTreeMap<String, PinnedTool>,
    /// Approved resource templates, by upstream URI template.
    #[serde(default)]
    pub templates: BTreeMap<String, PinnedTool>,
}

impl ServerPins {
    /// The pins of `kind`.
    pub fn of(&self, kind: Kind) -> &BTreeMap<String, PinnedTool> {
        match kind {
            Kind::Tool => &self.tools,
            Kind::Prompt => &self.prompts,
            Kind::Resource => &self.resources,
            Kind::ResourceTemplate => &self.templates,
        }
    }

    /// The pins of `kind`, to change.
    pub fn of_mut(&mut self, kind: Kind) -> &mut BTreeMap<String, PinnedTool> {
        match kind {
            Kind::Tool => &mut self.tools,
            Kind::Prompt => &mut self.prompts,
            Kind::Resource => &mut self.resources,
            Kind::ResourceTemplate => &mut self.templates,
        }
    }
}

/// A capability withheld from agents until the person approves it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Waiting {
    /// What it is (default `tool`).
    #[serde(default)]
    pub kind: Kind,
    /// Its upstream key: a tool's or prompt's name, a resource's URI, a template's URI template.
    pub tool: String,
    /// What was approved under this key before; `None` for a new one (or a renamed one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved: Option<PinnedTool>,
    /// What the server lists now.
    pub listed: PinnedTool,
}
