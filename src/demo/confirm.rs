//! The `confirm` test tool: asks the client to confirm, in the way of the 2026-07-28 era (an
//! `InputRequiredResult` with one `elicitation/create` form under the key `confirm` and the
//! `requestState` [`STATE`]), then says what the client answered: `confirm: <action>`, and
//! `(state kept)` when the retry carried the state back unchanged.

use std::collections::BTreeMap;

use rmcp::model::{
    CallToolResponse, CallToolResult, ContentBlock, ElicitRequest, ElicitRequestParams,
    ElicitationSchema, InputRequest, InputRequiredResult, InputResponses,
};

/// The `requestState` the first round hands out.
pub const STATE: &str = "demo-confirm-1";

/// The tool's answer to a call carrying `responses` and `state` (none on the first round).
pub fn call(responses: Option<&InputResponses>, state: Option<&str>) -> CallToolResponse {
    if let Some(answer) = responses.and_then(|r| r.get("confirm")) {
        let action = answer["action"].as_str().unwrap_or("(no action)");
        let kept = if state == Some(STATE) {
            " (state kept)"
        } else {
            ""
        };
        return CallToolResponse::Complete(CallToolResult::success(vec![ContentBlock::text(
            format!("confirm: {action}{kept}"),
        )]));
    }
    let schema = ElicitationSchema::builder().required_bool("ok").build();
    let Ok(requested_schema) = schema else {
        return CallToolResponse::Complete(CallToolResult::error(vec![ContentBlock::text(
            "the confirm form could not be built",
        )]));
    };
    let form = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: "Go ahead?".to_owned(),
        requested_schema,
    };
    let requests = BTreeMap::from([(
        "confirm".to_owned(),
        InputRequest::Elicitation(ElicitRequest::new(form)),
    )]);
    CallToolResponse::InputRequired(InputRequiredResult::new(
        Some(requests),
        Some(STATE.to_owned()),
    ))
}
