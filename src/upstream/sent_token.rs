//! The `_meta.progressToken` of the requests the companion sends through rmcp, as their
//! sender gave it.
//!
//! rmcp puts a token of its own on every request it sends (its progress bookkeeping). A relay
//! must not: a request an agent sent without a token reaches its server without one, and a
//! server's `elicitation/create` or `sampling/createMessage` reaches the agent with the
//! server's own token or none (MCP 2025-11-25, basic/utilities/progress: the token is the
//! requester's choice). So the transports take rmcp's token off every request as it is
//! written ([`as_sent`]), unless
//!
//! - the request carries a [`SenderToken`]: the token the original request had goes out in
//!   its place, or
//! - the request carries a [`crate::upstream::progress::ProgressSink`] (an upstream call whose
//!   agent asked for progress): the companion's token stays, and the server's progress under
//!   it is mapped back to the agent's token, which the server never sees.

use rmcp::model::{GetExtensions, GetMeta, ProgressToken, RequestMetaObject};

/// The `_meta` key of a request's progress token.
const PROGRESS_TOKEN: &str = "progressToken";

/// A request extension (never serialised): the `progressToken` the request's original sender
/// put in its `_meta`, to go out instead of rmcp's.
#[derive(Clone, Debug)]
pub struct SenderToken(pub ProgressToken);

/// `request` as its sender sent it: rmcp's `progressToken` taken off its `_meta`, the
/// [`SenderToken`] put in its place when there is one; an `_meta` left empty is dropped.
pub fn as_sent<R>(request: &mut R)
where
    R: GetMeta<Metadata = RequestMetaObject> + GetExtensions,
{
    let sender = request.extensions().get::<SenderToken>().cloned();
    let meta = request.get_meta_mut();
    meta.remove(PROGRESS_TOKEN);
    if let Some(SenderToken(token)) = sender {
        meta.set_progress_token(token);
    }
    if meta.is_empty() {
        request.extensions_mut().remove::<RequestMetaObject>();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{ClientRequest, NumberOrString, PingRequest};

    fn ping_with_rmcp_token() -> ClientRequest {
        let mut request = ClientRequest::PingRequest(PingRequest::default());
        request
            .get_meta_mut()
            .set_progress_token(ProgressToken(NumberOrString::Number(3)));
        request
    }

    #[test]
    fn rmcp_token_is_taken_off_and_an_empty_meta_dropped() {
        let mut request = ping_with_rmcp_token();
        as_sent(&mut request);
        let json = serde_json::to_value(&request).unwrap_or_default();
        assert_eq!(json, serde_json::json!({"method": "ping"}));
    }

    #[test]
    fn the_sender_token_goes_out_and_other_keys_stay() {
        let mut request = ping_with_rmcp_token();
        request.get_meta_mut().insert("k".into(), 1.into());
        request
            .extensions_mut()
            .insert(SenderToken(ProgressToken(NumberOrString::String(
                "tok".into(),
            ))));
        as_sent(&mut request);
        let json = serde_json::to_value(&request).unwrap_or_default();
        assert_eq!(
            json["params"]["_meta"],
            serde_json::json!({"k": 1, "progressToken": "tok"})
        );
    }
}
