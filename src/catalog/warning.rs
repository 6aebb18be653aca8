//! What a catalog build reports to the user (logged, and kept for the UI and CLI).

use std::sync::Arc;

use super::allowlist::UnmatchedEntries;
use super::naming::CapabilityKind;
use super::schema::SchemaWarning;

/// One member of a name collision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CollisionMember {
    /// The owning server.
    pub server: Arc<str>,
    /// The capability kind.
    pub kind: CapabilityKind,
    /// The upstream name.
    pub raw: String,
}

impl std::fmt::Display for CollisionMember {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} {:?}", self.server, self.kind, self.raw)
    }
}

/// Something a build wants the user to see (logged, and kept for the UI and CLI).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CatalogWarning {
    /// Some `enabledTools` entries of `server` matched nothing.
    #[error("{unmatched}")]
    UnmatchedEntries {
        /// The server whose allowlist it is.
        server: Arc<str>,
        /// The entries and the names that were available.
        unmatched: UnmatchedEntries,
    },
    /// Several capabilities had the same wrapped name; each is served with a suffix.
    #[error("wrapped name {name} is shared by {}; each is served with a hash suffix", list(.members))]
    NameCollision {
        /// The shared name.
        name: String,
        /// Every capability that had it, in input order.
        members: Vec<CollisionMember>,
    },
    /// A capability identical to an earlier one (same server, kind and name, and for
    /// resources the same URI) was dropped.
    #[error("duplicate {kind} {raw:?} dropped; it would be served as {name}")]
    Duplicate {
        /// The server that listed it twice.
        server: Arc<str>,
        /// The capability kind.
        kind: CapabilityKind,
        /// The upstream name.
        raw: String,
        /// The wrapped name it would have had.
        name: String,
    },
    /// A tool's input schema has a problem; the tool is still served.
    #[error("tool {tool:?}: {warning}")]
    Schema {
        /// The owning server.
        server: Arc<str>,
        /// The upstream tool name.
        tool: String,
        /// What is wrong.
        warning: SchemaWarning,
    },
}

fn list(members: &[CollisionMember]) -> String {
    let parts: Vec<String> = members.iter().map(ToString::to_string).collect();
    parts.join(" and ")
}

impl CatalogWarning {
    /// Whether the warning concerns `server` (a collision concerns every member's server).
    pub fn concerns(&self, server: &str) -> bool {
        match self {
            CatalogWarning::UnmatchedEntries { server: s, .. }
            | CatalogWarning::Duplicate { server: s, .. }
            | CatalogWarning::Schema { server: s, .. } => &**s == server,
            CatalogWarning::NameCollision { members, .. } => {
                members.iter().any(|m| &*m.server == server)
            }
        }
    }

    /// The server a log line about this warning is attributed to (for a collision: its
    /// first member).
    pub fn log_server(&self) -> &str {
        match self {
            CatalogWarning::UnmatchedEntries { server, .. }
            | CatalogWarning::Duplicate { server, .. }
            | CatalogWarning::Schema { server, .. } => server,
            CatalogWarning::NameCollision { members, .. } => {
                members.first().map_or("", |m| &*m.server)
            }
        }
    }
}
