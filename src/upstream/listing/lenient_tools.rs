//! `tools/list` that survives a malformed tool.
//!
//! The problem: rmcp parses a `tools/list` result all at once, so one tool without an
//! `inputSchema` (or with a schema that is not an object) makes the whole answer unparsable and
//! the server would lose every tool. The strategy: when the typed parse fails, rmcp still hands
//! over the raw result; each tool is then parsed on its own, a missing or non-object `inputSchema`
//! is replaced by the empty object schema (DESIGN §6), and a tool that still does not parse is
//! skipped with a warning naming it.

use rmcp::model::{
    ClientRequest, Cursor, CustomResult, ListToolsRequest, PaginatedRequestParams, ServerResult,
    Tool,
};
use rmcp::service::ServiceError;
use rmcp::{Peer, RoleClient};
use serde_json::{Value, json};

/// One page of `tools/list`: the tools that parse, and the next cursor.
///
/// # Errors
/// The request's own failure, or [`ServiceError::UnexpectedResponse`] when the answer has no
/// `tools` array at all.
pub async fn list_page(
    peer: &Peer<RoleClient>,
    params: Option<PaginatedRequestParams>,
) -> Result<(Vec<Tool>, Option<Cursor>), ServiceError> {
    let request = ClientRequest::ListToolsRequest(ListToolsRequest {
        method: Default::default(),
        params,
        extensions: Default::default(),
    });
    match peer.send_request(request).await? {
        ServerResult::ListToolsResult(r) => Ok((r.tools, r.next_cursor)),
        ServerResult::CustomResult(CustomResult(raw)) => {
            parse_leniently(&raw).ok_or(ServiceError::UnexpectedResponse)
        }
        _ => Err(ServiceError::UnexpectedResponse),
    }
}

/// Parses a raw `tools/list` result tool by tool; `None` when there is no `tools` array.
pub fn parse_leniently(raw: &Value) -> Option<(Vec<Tool>, Option<Cursor>)> {
    let listed = raw.get("tools")?.as_array()?;
    let mut tools = Vec::with_capacity(listed.len());
    for (index, item) in listed.iter().enumerate() {
        let name = item
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("<unnamed>")
            .to_owned();
        let mut item = item.clone();
        if let Some(obj) = item.as_object_mut()
            && !obj.get("inputSchema").is_some_and(Value::is_object)
        {
            tracing::warn!(tool = %name, "tool has no object inputSchema; using an empty object schema");
            obj.insert(
                "inputSchema".into(),
                json!({ "type": "object", "properties": {} }),
            );
        }
        match serde_json::from_value::<Tool>(item) {
            Ok(tool) => tools.push(tool),
            Err(e) => tracing::warn!(tool = %name, index, error = %e, "skipping a malformed tool"),
        }
    }
    let next = raw
        .get("nextCursor")
        .and_then(Value::as_str)
        .map(str::to_owned);
    Some((tools, next))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_malformed_tool_costs_only_itself() {
        let raw = json!({
            "tools": [
                { "name": "ok", "inputSchema": { "type": "object" } },
                { "name": "no_schema" },
                { "name": "string_schema", "inputSchema": { "type": "string" } },
                { "description": "no name at all", "inputSchema": { "type": "object" } },
                "not an object"
            ],
            "nextCursor": "2"
        });
        // The typed parse of the whole answer fails, which is why this path exists.
        assert!(matches!(
            serde_json::from_value::<ServerResult>(raw.clone()),
            Ok(ServerResult::CustomResult(_))
        ));
        let (tools, next) = parse_leniently(&raw).expect("a tools array");
        let names: Vec<_> = tools.iter().map(|t| t.name.to_string()).collect();
        assert_eq!(names, vec!["ok", "no_schema", "string_schema"]);
        assert_eq!(tools[1].input_schema.get("type"), Some(&json!("object")));
        assert_eq!(next.as_deref(), Some("2"));
    }

    #[test]
    fn no_tools_array_is_not_a_listing() {
        assert!(parse_leniently(&json!({ "other": 1 })).is_none());
    }
}
