//! What each agent pays for its tool list: the exact `tools/list` result JSON of the default
//! view and of each profile, and each server's share of the default one — what
//! `mcp-companion tools --tokens` measures ([`Hub::listings`]).

use serde::{Deserialize, Serialize};

use super::Hub;
use crate::catalog::Catalog;

/// One tool list as an agent receives it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Listing {
    /// The profile or server; `everything` for the default view.
    pub name: String,
    /// Tools in the list.
    pub tools: usize,
    /// Whether the view lists only the search tools (`toolSearch`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tool_search: bool,
    /// The `tools/list` result JSON as an agent on a protocol before 2026-07-28 receives it,
    /// one line per page ([`crate::catalog::PAGE_SIZE`] tools a page).
    pub json: String,
}

/// Every view's and server's tool list.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listings {
    /// The default view, then each valid profile in config order.
    pub views: Vec<Listing>,
    /// Each server with tools in the default view, in config order: its tools as that view
    /// lists them.
    pub servers: Vec<Listing>,
}

impl Hub {
    /// The tool lists of the default view, of each valid profile and of each server.
    pub fn listings(&self) -> Listings {
        let everything = self.clone().for_profile(None).catalog();
        let mut views = vec![view_listing("everything", &everything)];
        for p in self.profiles() {
            if p.error.is_some() {
                continue;
            }
            let catalog = self.clone().for_profile(Some(&p.name)).catalog();
            views.push(view_listing(&p.name, &catalog));
        }
        let servers = self
            .statuses()
            .into_iter()
            .filter_map(|s| {
                let tools: Vec<_> = everything
                    .tools()
                    .iter()
                    .filter(|t| {
                        everything
                            .route(&t.name)
                            .is_some_and(|r| *r.server == *s.name)
                    })
                    .cloned()
                    .collect();
                (!tools.is_empty()).then(|| Listing {
                    name: s.name.clone(),
                    tools: tools.len(),
                    tool_search: false,
                    json: list_json(tools),
                })
            })
            .collect();
        Listings { views, servers }
    }
}

fn view_listing(name: &str, catalog: &Catalog) -> Listing {
    Listing {
        name: name.to_owned(),
        tools: catalog.listed().len(),
        tool_search: catalog.searching(),
        json: (0..catalog.listed().len().max(1))
            .step_by(crate::catalog::PAGE_SIZE)
            .filter_map(|start| catalog.page_json(start))
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// `{"tools": [...]}` as the catalog's pages write a `tools/list` result.
fn list_json(tools: Vec<rmcp::model::Tool>) -> String {
    let mut result = rmcp::model::ServerResult::ListToolsResult(
        rmcp::model::ListToolsResult::with_all_items(tools),
    );
    result.strip_result_type_for_legacy_peer();
    result.strip_non_object_output_for_legacy_peer();
    // A tool is JSON already (it came from a server as JSON): writing it cannot fail.
    serde_json::to_string(&result).unwrap_or_default()
}
