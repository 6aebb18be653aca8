//! The `tools/list` pages of a [`Catalog`] (MCP 2025-06-18, server/tools "Listing Tools" and
//! utilities/pagination): [`PAGE_SIZE`] listed tools ([`Catalog::listed`]) per page, `nextCursor` the offset of the
//! next page as a decimal string.
//!
//! A catalog is immutable, so each page's JSON is made once, the first time an agent's
//! `tools/list` asks for it ([`Catalog::page_json`]), and every later listing of the same
//! catalog writes those bytes (the fast path, [`crate::endpoint::fast`]). With 2000 tools that is
//! 510 KiB of JSON that was re-encoded for every listing. The cached JSON has the shape rmcp
//! answers a session on a protocol version before 2026-07-28 with (no `resultType`, only
//! object `outputSchema`s); sessions on later versions are answered by rmcp.

use rmcp::model::{ListToolsResult, ServerResult};

use super::Catalog;

/// Tools per `tools/list` page. Large enough that typical setups fit one page (many clients
/// never follow `nextCursor`), small enough to bound one message.
pub const PAGE_SIZE: usize = 1000;

impl Catalog {
    /// The `tools/list` result for cursor `start` (an offset into [`Catalog::tools`]): up to
    /// [`PAGE_SIZE`] tools from there, with `nextCursor` when more follow; `None` when `start`
    /// is past the end.
    pub fn page(&self, start: usize) -> Option<ListToolsResult> {
        let tools = self.listed();
        if start > tools.len() {
            return None;
        }
        let end = (start + PAGE_SIZE).min(tools.len());
        let mut page = ListToolsResult::with_all_items(tools[start..end].to_vec());
        if end < tools.len() {
            page.next_cursor = Some(end.to_string());
        }
        Some(page)
    }

    /// The JSON of [`Self::page`]`(start)` as rmcp answers it to a session on a protocol
    /// version before 2026-07-28 (module doc), made once per catalog, for the cursors this
    /// catalog hands out (0 and each `nextCursor`); `None` for any other `start`.
    pub fn page_json(&self, start: usize) -> Option<&str> {
        if !start.is_multiple_of(PAGE_SIZE) {
            return None;
        }
        let pages = self.pages.get_or_init(|| {
            let starts = (0..self.listed().len().max(1)).step_by(PAGE_SIZE);
            starts
                .map_while(|start| {
                    let mut page = ServerResult::ListToolsResult(self.page(start)?);
                    page.strip_result_type_for_legacy_peer();
                    page.strip_non_object_output_for_legacy_peer();
                    if !super::execution::any_stashed(self.listed()) {
                        return serde_json::to_string(&page).ok();
                    }
                    // A tool's `execution` back in place (`execution.rs`).
                    let mut page = serde_json::to_value(&page).ok()?;
                    super::execution::unstash(&mut page);
                    serde_json::to_string(&page).ok()
                })
                .collect()
        });
        pages.get(start / PAGE_SIZE).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use rmcp::model::Tool;
    use serde_json::Value;

    use super::{Catalog, PAGE_SIZE};
    use crate::catalog::{CatalogInput, ServerListing};

    fn catalog(n: usize) -> Catalog {
        let listing = ServerListing {
            tools: (0..n)
                .map(|i| Tool::new(format!("t{i}"), format!("tool {i}"), Arc::default()))
                .collect(),
            ..ServerListing::default()
        };
        Catalog::build(&[CatalogInput {
            server: "s",
            enabled_tools: &["*".to_owned()],
            listing: &listing,
        }])
    }

    #[test]
    fn each_cached_page_is_the_page_encoded() {
        for n in [0, 1, PAGE_SIZE, PAGE_SIZE + 1, 2 * PAGE_SIZE + 5] {
            let c = catalog(n);
            let mut start = Some(0);
            let mut seen = 0;
            while let Some(s) = start {
                let json = c.page_json(s).expect("a page for every cursor handed out");
                let page = c.page(s).expect("page");
                let mut encoded = serde_json::to_value(&page).expect("encode");
                encoded
                    .as_object_mut()
                    .and_then(|o| o.remove("resultType"))
                    .expect("the page as built says resultType complete");
                assert_eq!(
                    serde_json::from_str::<Value>(json).expect("JSON"),
                    encoded,
                    "{n} tools, cursor {s}: the page without resultType"
                );
                seen += page.tools.len();
                start = page.next_cursor.map(|c| c.parse().expect("offset"));
            }
            assert_eq!(seen, n, "every tool once");
        }
    }

    #[test]
    fn other_cursors_have_no_cached_page() {
        let c = catalog(PAGE_SIZE + 1);
        assert!(c.page_json(1).is_none(), "not a page start");
        assert!(c.page_json(2 * PAGE_SIZE).is_none(), "past the last page");
        assert!(c.page(PAGE_SIZE + 1).is_some_and(|p| p.tools.is_empty()));
        assert!(c.page(PAGE_SIZE + 2).is_none());
    }
}
