//! A server's listing split by its pins: what agents may see, and what waits for approval.

use serde::Serialize;

use super::{Kind, ServerPins, Waiting, pin};
use crate::catalog::ServerListing;

/// `items` split by `pins`: those served, and those withheld appended to `waiting`.
fn split<T: Serialize + Clone>(
    kind: Kind,
    items: &[T],
    key: impl Fn(&T) -> String,
    pins: &ServerPins,
    waiting: &mut Vec<Waiting>,
) -> Vec<T> {
    let mut keep = Vec::with_capacity(items.len());
    for item in items {
        let listed = pin(kind, item);
        let key = key(item);
        let approved = pins.of(kind).get(&key);
        if approved.is_some_and(|a| a.fingerprint == listed.fingerprint) {
            keep.push(item.clone());
        } else {
            waiting.push(Waiting {
                kind,
                tool: key,
                approved: approved.cloned(),
                listed,
            });
        }
    }
    keep
}

/// Splits `listing` by `pins`: the listing agents may see (withheld capabilities removed;
/// `None` when nothing is withheld) and the withheld ones, tools first, in listing order.
pub fn withhold(
    listing: &ServerListing,
    pins: &ServerPins,
) -> (Option<ServerListing>, Vec<Waiting>) {
    let mut waiting = Vec::new();
    let mut narrowed = ServerListing {
        tools: split(
            Kind::Tool,
            &listing.tools,
            |t| t.name.to_string(),
            pins,
            &mut waiting,
        ),
        prompts: split(
            Kind::Prompt,
            &listing.prompts,
            |p| p.name.clone(),
            pins,
            &mut waiting,
        ),
        resources: split(
            Kind::Resource,
            &listing.resources,
            |r| r.uri.clone(),
            pins,
            &mut waiting,
        ),
        resource_templates: split(
            Kind::ResourceTemplate,
            &listing.resource_templates,
            |t| t.uri_template.clone(),
            pins,
            &mut waiting,
        ),
        declared: listing.declared,
        withheld_resources: false,
        withheld_uris: listing.withheld_uris.clone(),
    };
    narrowed.withheld_uris.extend(
        waiting
            .iter()
            .filter(|w| w.kind == Kind::Resource)
            .map(|w| w.tool.clone()),
    );
    narrowed.withheld_resources = listing.withheld_resources
        || narrowed.resources.len() < listing.resources.len()
        || narrowed.resource_templates.len() < listing.resource_templates.len();
    if waiting.is_empty() {
        return (None, waiting);
    }
    (Some(narrowed), waiting)
}
