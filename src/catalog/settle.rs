//! The capabilities that passed the allowlist, waiting for their final names, and
//! [`settle_names`], which makes those names unique (the rules are [`super::Catalog::build`]'s).

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::{Prompt, Resource, ResourceTemplate, Tool};

use super::naming::{CapabilityKind, suffixed_name, suffixed_name_with};
use super::warning::{CatalogWarning, CollisionMember};

/// A capability that passed the allowlist, waiting for its final name.
pub(super) struct Pending<'a> {
    pub(super) server: Arc<str>,
    pub(super) kind: CapabilityKind,
    pub(super) raw: &'a str,
    pub(super) item: Item<'a>,
    pub(super) name: String,
    /// The name has a suffix (a collision, or a raw name with nothing left after
    /// sanitising): the description then says what it wraps ([`super::wrap::name_note`]).
    pub(super) suffixed: bool,
}

#[derive(Clone, Copy)]
pub(super) enum Item<'a> {
    Tool(&'a Tool),
    Resource(&'a Resource),
    Template(&'a ResourceTemplate),
    Prompt(&'a Prompt),
}

impl<'a> Item<'a> {
    pub(super) fn uri(self) -> Option<&'a str> {
        match self {
            Item::Resource(r) => Some(&r.uri),
            Item::Template(t) => Some(&t.uri_template),
            Item::Tool(_) | Item::Prompt(_) => None,
        }
    }
}

/// Makes every pending name unique; see [`super::Catalog::build`] for the rules.
pub(super) fn settle_names(pending: &mut Vec<Pending<'_>>, warnings: &mut Vec<CatalogWarning>) {
    for group in shared_names(pending) {
        warnings.push(CatalogWarning::NameCollision {
            name: pending[group[0]].name.clone(),
            members: group
                .iter()
                .map(|&i| CollisionMember {
                    server: pending[i].server.clone(),
                    kind: pending[i].kind,
                    raw: pending[i].raw.to_owned(),
                })
                .collect(),
        });
        for i in group {
            let p = &mut pending[i];
            p.name = suffixed_name(&p.server, p.kind, p.raw);
            p.suffixed = true;
        }
    }
    // Equal suffixes mean equal identities: same-named resources differ by URI.
    for group in shared_names(pending) {
        for i in group {
            let p = &mut pending[i];
            if let Some(uri) = p.item.uri() {
                p.name = suffixed_name_with(&p.server, p.kind, p.raw, uri);
            }
        }
    }
    let mut dropped = vec![false; pending.len()];
    for group in shared_names(pending) {
        for &i in &group[1..] {
            dropped[i] = true;
            let p = &pending[i];
            warnings.push(CatalogWarning::Duplicate {
                server: p.server.clone(),
                kind: p.kind,
                raw: p.raw.to_owned(),
                name: p.name.clone(),
            });
        }
    }
    let mut flags = dropped.into_iter();
    pending.retain(|_| !flags.next().unwrap_or(false));
}

/// Groups of indices whose names are equal, each group and the list in order of first index.
fn shared_names(pending: &[Pending<'_>]) -> Vec<Vec<usize>> {
    let mut by_name: HashMap<&str, Vec<usize>> = HashMap::with_capacity(pending.len());
    for (i, p) in pending.iter().enumerate() {
        by_name.entry(&p.name).or_default().push(i);
    }
    let mut groups: Vec<Vec<usize>> = by_name.into_values().filter(|g| g.len() > 1).collect();
    groups.sort_unstable_by_key(|g| g[0]);
    groups
}
