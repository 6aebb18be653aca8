//! Fetching a server's whole catalog: `tools/list`, `resources/list`,
//! `resources/templates/list` and `prompts/list`, each followed through every `nextCursor`
//! (MCP "Pagination").
//!
//! Only what the server declared in its `initialize` capabilities is listed (MCP
//! "Lifecycle", capability negotiation): a server with only `prompts` or only `resources` is as
//! valid as one with tools.
//!
//! | list | asked when | -32601 (method not found) | any other failure |
//! |---|---|---|---|
//! | tools | `tools` declared | no tools | fails the connection |
//! | tools | nothing at all declared (a sloppy server) | no tools | warning, no tools |
//! | resources, templates | `resources` declared | none | warning, none |
//! | prompts | `prompts` declared | none | warning, none |
//!
//! One malformed tool only costs that tool ([`lenient_tools`]). A name (or URI) listed twice
//! is served once, as first listed (`first_of_each`): a call or read names only the name, so
//! the server cannot be asked for the second, and a person approving pinned tools must see one.

use std::collections::HashSet;
use std::future::Future;

use rmcp::model::{Cursor, ErrorCode, PaginatedRequestParams};
use rmcp::service::ServiceError;
use rmcp::{Peer, RoleClient};

use crate::catalog::ServerListing;

pub mod lenient_tools;

/// A server's message `line` with each tool's `execution` moved into its `_meta`
/// ([`crate::catalog::execution`]) when it is a `tools/list` answer carrying any; `None` for
/// every other line (looked at only when the bytes `"execution"` occur in it).
pub fn keep_execution(line: &[u8]) -> Option<Vec<u8>> {
    const NEEDLE: &[u8] = b"\"execution\"";
    if !line.windows(NEEDLE.len()).any(|w| w == NEEDLE) {
        return None;
    }
    let mut message = serde_json::from_slice::<serde_json::Value>(line).ok()?;
    if !crate::catalog::execution::stash(message.get_mut("result")?) {
        return None;
    }
    serde_json::to_vec(&message).ok()
}

/// Most pages followed for one list before giving up (a server looping with fresh cursors).
pub const MAX_PAGES: usize = 10_000;

/// Lists everything `peer` declared, following pagination (see the module doc for which
/// failures count).
///
/// # Errors
/// The `tools/list` failure of a server that declared `tools`, unless it is -32601.
pub async fn list_all(peer: &Peer<RoleClient>) -> Result<ServerListing, ServiceError> {
    let caps = peer
        .peer_info()
        .map(|info| info.capabilities.clone())
        .unwrap_or_default();
    let mut listing = ServerListing {
        declared: declared(&caps),
        ..ServerListing::default()
    };
    let tools = |p| lenient_tools::list_page(peer, p);
    if caps.tools.is_some() {
        listing.tools = match paginate("tools/list", tools).await {
            Err(e) if is_method_not_found(&e) => {
                tracing::info!("tools declared but tools/list is not served; no tools");
                Vec::new()
            }
            other => other?,
        };
    } else if caps.resources.is_none() && caps.prompts.is_none() {
        listing.tools = optional("tools/list", tools).await;
    }
    // Any tool of a server that speaks the Tasks extension can become a task.
    if super::tasks::offered(peer) {
        listing
            .tools
            .iter_mut()
            .for_each(crate::catalog::execution::mark_optional);
    }
    if caps.resources.is_some() {
        listing.resources = optional("resources/list", |p| async move {
            peer.list_resources(p)
                .await
                .map(|r| (r.resources, r.next_cursor))
        })
        .await;
        listing.resource_templates = optional("resources/templates/list", |p| async move {
            peer.list_resource_templates(p)
                .await
                .map(|r| (r.resource_templates, r.next_cursor))
        })
        .await;
    }
    if caps.prompts.is_some() {
        listing.prompts = optional("prompts/list", |p| async move {
            peer.list_prompts(p)
                .await
                .map(|r| (r.prompts, r.next_cursor))
        })
        .await;
    }
    first_of_each(&mut listing.tools, |t| &t.name, "tool");
    first_of_each(&mut listing.prompts, |p| &p.name, "prompt");
    first_of_each(&mut listing.resources, |r| &r.uri, "resource");
    first_of_each(
        &mut listing.resource_templates,
        |t| &t.uri_template,
        "resource template",
    );
    Ok(listing)
}

/// Keeps the first of `items` with each key; a later one with the same key is left out, with a
/// warning naming it (`what`: "tool", "prompt"…).
fn first_of_each<T>(items: &mut Vec<T>, key: impl Fn(&T) -> &str, what: &'static str) {
    let mut seen: HashSet<String> = HashSet::new();
    items.retain(|item| {
        let key = key(item);
        let first = seen.insert(key.to_owned());
        if !first {
            tracing::warn!(
                what,
                name = key,
                "listed twice by the server; the first is served"
            );
        }
        first
    });
}

/// What `caps` declares, as the catalog merges it.
pub fn declared(caps: &rmcp::model::ServerCapabilities) -> crate::catalog::Declared {
    crate::catalog::Declared {
        prompts: caps.prompts.is_some(),
        resources: caps.resources.is_some(),
        subscribe: caps
            .resources
            .as_ref()
            .is_some_and(|r| r.subscribe == Some(true)),
        completions: caps.completions.is_some(),
        logging: caps.logging.is_some(),
    }
}

/// Lists `method` with [`paginate`]; -32601 means none, any other failure is a warning and an
/// empty list.
async fn optional<T, F, Fut>(method: &'static str, fetch: F) -> Vec<T>
where
    F: FnMut(Option<PaginatedRequestParams>) -> Fut,
    Fut: Future<Output = Result<(Vec<T>, Option<Cursor>), ServiceError>>,
{
    paginate(method, fetch).await.unwrap_or_else(|e| {
        if is_method_not_found(&e) {
            tracing::debug!(method, "not served; none");
        } else {
            tracing::warn!(method, error = %e, "listing failed; treating the list as empty");
        }
        Vec::new()
    })
}

/// Whether the server answered JSON-RPC -32601 "method not found".
fn is_method_not_found(e: &ServiceError) -> bool {
    matches!(e, ServiceError::McpError(err) if err.code == ErrorCode::METHOD_NOT_FOUND)
}

/// Calls `fetch` with each cursor in turn until a page has no `nextCursor`, a cursor repeats,
/// or [`MAX_PAGES`] pages were read; returns every item in order.
pub async fn paginate<T, F, Fut>(method: &'static str, mut fetch: F) -> Result<Vec<T>, ServiceError>
where
    F: FnMut(Option<PaginatedRequestParams>) -> Fut,
    Fut: Future<Output = Result<(Vec<T>, Option<Cursor>), ServiceError>>,
{
    let mut items = Vec::new();
    let mut seen: HashSet<Cursor> = HashSet::new();
    let mut params = None;
    for _ in 0..MAX_PAGES {
        let (page, next) = fetch(params.take()).await?;
        items.extend(page);
        match next {
            Some(cursor) if !cursor.is_empty() => {
                if !seen.insert(cursor.clone()) {
                    tracing::warn!(method, "server repeated a pagination cursor; stopping");
                    return Ok(items);
                }
                params = Some(PaginatedRequestParams::default().with_cursor(Some(cursor)));
            }
            _ => return Ok(items),
        }
    }
    tracing::warn!(method, pages = MAX_PAGES, "too many pages; stopping");
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_listed_twice_is_kept_as_first_listed() {
        let mut items = vec![
            ("dup", 1),
            ("other", 2),
            ("dup", 3),
            ("other", 4),
            ("last", 5),
        ];
        first_of_each(&mut items, |i| i.0, "tool");
        assert_eq!(items, vec![("dup", 1), ("other", 2), ("last", 5)]);
    }

    async fn run(pages: Vec<(Vec<u32>, Option<&'static str>)>) -> (Vec<u32>, Vec<Option<String>>) {
        let asked = std::sync::Mutex::new(Vec::new());
        let items = paginate("test/list", |p| {
            let cursor = p.and_then(|p| p.cursor);
            let mut asked = asked.lock().expect("lock");
            let idx = asked.len();
            asked.push(cursor);
            let (items, next) = pages[idx].clone();
            async move { Ok((items, next.map(str::to_owned))) }
        })
        .await
        .expect("paginate");
        (items, asked.into_inner().expect("lock"))
    }

    #[tokio::test]
    async fn follows_every_cursor_in_order() {
        let (items, asked) = run(vec![
            (vec![1, 2], Some("a")),
            (vec![3], Some("b")),
            (vec![4], None),
        ])
        .await;
        assert_eq!(items, vec![1, 2, 3, 4]);
        assert_eq!(asked, vec![None, Some("a".into()), Some("b".into())]);
    }

    #[tokio::test]
    async fn stops_on_a_repeated_cursor() {
        let (items, asked) = run(vec![
            (vec![1], Some("a")),
            (vec![2], Some("a")),
            (vec![9], None),
        ])
        .await;
        assert_eq!(items, vec![1, 2]);
        assert_eq!(asked.len(), 2);
    }

    #[tokio::test]
    async fn empty_cursor_ends_the_list() {
        let (items, _) = run(vec![(vec![1], Some(""))]).await;
        assert_eq!(items, vec![1]);
    }
}
