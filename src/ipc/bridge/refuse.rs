//! The bridge's last word when it cannot reach a companion: many agents show a server's
//! JSON-RPC error but never its stderr, so the agent's first request (its `initialize`) is
//! answered with an error that says why, before the bridge exits non-zero.

use std::time::Duration;

use serde::Deserialize;
use serde::de::IgnoredAny;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

use super::GONE_CODE;
use crate::io::{LineReader, Overflow, Read};
use crate::upstream::MAX_MESSAGE_BYTES;

/// How long the bridge waits for the agent's first request before it exits without one.
pub const FIRST_REQUEST_WAIT: Duration = Duration::from_secs(10);

/// Answers the first request read from `input` (a line with `method` and an integer or string
/// `id`) on `output` with a JSON-RPC error ([`GONE_CODE`]) whose message is `why`; notifications
/// before it are skipped. Returns whether a request was answered: false when `input` ended,
/// failed, or sent no request within `wait`.
///
/// # Errors
/// Writing `output` failed.
pub async fn answer_first_request<I, O>(
    input: I,
    mut output: O,
    why: &str,
    wait: Duration,
) -> std::io::Result<bool>
where
    I: AsyncRead + Unpin,
    O: AsyncWrite + Unpin,
{
    #[derive(Deserialize)]
    struct Request {
        id: serde_json::Value,
        #[expect(dead_code, reason = "only its presence is checked")]
        method: IgnoredAny,
    }
    let mut lines = LineReader::new(BufReader::new(input), MAX_MESSAGE_BYTES, Overflow::Pass);
    let first = async {
        loop {
            match lines.next().await {
                Ok(Read::Line | Read::Last) => {
                    if let Ok(req) = serde_json::from_slice::<Request>(lines.line())
                        && (req.id.is_string() || req.id.is_i64() || req.id.is_u64())
                    {
                        return Some(req.id);
                    }
                }
                Ok(Read::TooLong | Read::Piece) => {}
                Ok(Read::Eof | Read::Stalled) | Err(_) => return None,
            }
        }
    };
    let Ok(Some(id)) = tokio::time::timeout(wait, first).await else {
        return Ok(false);
    };
    let answer = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": GONE_CODE, "message": why },
    });
    output.write_all(format!("{answer}\n").as_bytes()).await?;
    output.flush().await?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_first_request_gets_the_reason_and_notifications_are_skipped() {
        let input = concat!(
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}\n",
            "not json\n",
            "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"initialize\",\"params\":{}}\n",
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n",
        );
        let mut out = Vec::new();
        let answered = answer_first_request(
            input.as_bytes(),
            &mut out,
            "why \"not\"",
            FIRST_REQUEST_WAIT,
        )
        .await
        .unwrap();
        assert!(answered);
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.lines().count(), 1, "{text}");
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["id"], "a");
        assert_eq!(v["error"]["code"], GONE_CODE);
        assert_eq!(v["error"]["message"], "why \"not\"");
    }

    #[tokio::test]
    async fn no_request_before_the_input_ends_answers_nothing() {
        let mut out = Vec::new();
        let input = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}\n";
        let answered = answer_first_request(input.as_bytes(), &mut out, "x", FIRST_REQUEST_WAIT)
            .await
            .unwrap();
        assert!(!answered);
        assert!(out.is_empty());
    }
}
