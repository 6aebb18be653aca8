//! rmcp's own warnings and errors (target `rmcp…`, level WARN or ERROR), as the companion's
//! log writes them ([`super::ScrubbedWriter`]): `Debug` dumps taken out, and the errors that
//! only repeat what our own code reports dropped.

/// rmcp's warnings that print a dump, by the start of their message, and what we say instead
/// (their fields are dropped).
const RMCP_WORDS: &[(&str, &str)] = &[
    (
        "Received unexpected message",
        "the server sent a message that does not fit this point of the session; it was ignored",
    ),
    (
        "response error",
        "a request from the server was answered with an error",
    ),
    (
        "Handle logging before handshake failed",
        "a log message the server sent before the handshake could not be handled",
    ),
    (
        "sse client event stream terminated with error",
        "the server's event stream ended with an error; it is opened again if the session goes on",
    ),
    (
        "worker quit with join error",
        "the connection's worker task ended abnormally",
    ),
    (
        "unexpected content type",
        "the server answered with a content type that is neither JSON nor an event stream",
    ),
];

/// rmcp's errors that an ordinary stop or restart of a remote server produces, by the start of
/// their message, each of which our own code already reports once, at WARN, in the server's
/// span (so with its name), or which needs no report at all. rmcp logs them at ERROR from a
/// task outside that span, so they would read as a second, nameless failure.
const RMCP_REPORTED: &[&str] = &[
    // The initialize POST failed (connection refused while the server restarts): the worker
    // gives the real error to the handshake, which fails with it: our `start failed` warning.
    // Other `worker quit with fatal` errors carry words of their own and are kept.
    "worker quit with fatal: Transport channel closed",
    // Ending a session (`DELETE`) on a server that is gone or refuses it, at a stop or restart
    // while it is down: nothing is left behind, as the server forgets sessions itself.
    "fail to delete session",
];

/// rmcp's lines that an agent produces in normal operation, by a piece of their text: an
/// agent may leave at any time and may send requests that are answered with an error, and
/// neither is a fault of the companion's (the activity log records every call).
const AGENT_TRAFFIC: &[&str] = &[
    // An agent that closed its connection while one of its requests was still being answered
    // (our agent transport's error, `endpoint::bounded`): rmcp logs the answer it can no
    // longer write (`failed to send pending response during drain`, `fail to response
    // message`) at ERROR.
    "the agent has gone",
];

/// rmcp's `response error`: its handler answered a request of the peer with an error. In an
/// agent's session (span `session`, `ipc::accept`) that is the companion answering an agent's
/// request, as for any unknown method: ordinary protocol traffic any agent can repeat at will,
/// so not written (our words, [`RMCP_WORDS`], are for a server's session, where it means a
/// request the server sent us was refused).
const RESPONSE_ERROR: &str = "response error";

/// One formatted rmcp warning or error line, with its Rust `Debug` dumps taken out: a message
/// of [`RMCP_WORDS`] is replaced and its fields dropped; any other line is cut where the first
/// dump begins (`Name { field: …`, `Name(…`, `Some(…`), with a note that a value was left out.
/// `None` for a message of [`RMCP_REPORTED`] or [`AGENT_TRAFFIC`], and for a
/// [`RESPONSE_ERROR`] in an agent's session: the line is not written.
pub(super) fn rmcp_line(text: &str) -> Option<String> {
    if RMCP_REPORTED
        .iter()
        .chain(AGENT_TRAFFIC)
        .any(|message| text.contains(message))
    {
        return None;
    }
    if text.contains(RESPONSE_ERROR) && in_agent_session(text) {
        return None;
    }
    for (message, ours) in RMCP_WORDS {
        if let Some(at) = text.find(message) {
            // rmcp's `?message` field is printed before the message itself.
            let cut = first_dump(&text[..at]).unwrap_or(at);
            return Some(format!("{} {ours}\n", text[..cut].trim_end()));
        }
    }
    Some(match first_dump(text) {
        Some(at) => format!("{} [a Rust value, left out]\n", text[..at].trim_end()),
        None => text.to_owned(),
    })
}

/// Whether a formatted rmcp line was logged in an agent's session: a span `session{…}` among
/// the spans written before rmcp's target (colours taken out first).
fn in_agent_session(text: &str) -> bool {
    let plain = without_colours(text);
    let spans = plain.find("rmcp").map_or("", |at| &plain[..at]);
    spans.contains(" session{") || spans.contains(":session{")
}

/// `text` without its ANSI colour sequences (`ESC [ … m`).
fn without_colours(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Where the first `Debug` dump in `text` starts: an identifier that begins with a capital
/// letter followed by ` { ` or `(`.
fn first_dump(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        if starts_word && bytes[i].is_ascii_uppercase() {
            let end = bytes[i..]
                .iter()
                .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
                .map_or(bytes.len(), |n| i + n);
            let rest = &text[end..];
            if rest.starts_with(" { ") || rest.starts_with('(') {
                return Some(i);
            }
            i = end;
        } else {
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logging::test_log::logged;

    #[test]
    fn rmcp_warnings_lose_their_debug_dumps() {
        #[derive(Debug)]
        #[allow(dead_code, reason = "only its Debug form is logged")]
        struct JsonRpcResponse {
            jsonrpc: &'static str,
            result: &'static str,
        }
        let dump = JsonRpcResponse {
            jsonrpc: "2.0",
            result: "OUTSIDE-TEXT",
        };
        let text = logged(false, || {
            tracing::warn!(target: "rmcp::service::client", message = ?Some(&dump), "Received unexpected message");
            tracing::warn!(target: "rmcp::transport::streamable_http_client", "sse client event stream terminated with error: {:?}", Err::<(), _>(&dump));
            tracing::error!(target: "rmcp::service", "something new: {:?}", &dump);
            tracing::warn!(target: "mcp_companion::hub", value = ?Some(&dump), "ours keep their fields");
        });
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert!(
            lines[0].ends_with("the server sent a message that does not fit this point of the session; it was ignored"),
            "{text}"
        );
        assert!(
            lines[1].contains("the server's event stream ended with an error"),
            "{text}"
        );
        assert!(
            lines[2].ends_with("something new: [a Rust value, left out]"),
            "{text}"
        );
        assert!(
            lines[..3]
                .iter()
                .all(|l| !l.contains("OUTSIDE-TEXT") && !l.contains("JsonRpc")),
            "{text}"
        );
        assert!(lines[3].contains("OUTSIDE-TEXT"), "{text}");
    }

    /// A reconnect to a server that is down, and the stop of its lost session, leave only our
    /// own words: rmcp's nameless ERROR lines for the same events are not written.
    #[test]
    fn rmcp_errors_our_own_warnings_already_report_are_dropped() {
        let text = logged(false, || {
            tracing::error!(target: "rmcp::transport::worker", "worker quit with fatal: {}, when {}", "Transport channel closed", "Client(Connect)");
            tracing::error!(target: "rmcp::transport::streamable_http_client", session_id = "s-1", "fail to delete session: {}", "Client error: error sending request");
            tracing::error!(target: "rmcp::transport::worker", "worker quit with fatal: {}, when {}", "Unexpected content type: text/plain", "process initialize response");
            tracing::warn!(target: "mcp_companion::supervisor::task", error = "cannot send initialize request: Connection refused", "start failed");
        });
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(
            lines[0].contains("ERROR") && lines[0].contains("Unexpected content type"),
            "{text}"
        );
        assert!(
            lines[1].contains("WARN") && lines[1].contains("start failed"),
            "{text}"
        );
    }

    /// An agent's requests answered with an error and an agent leaving mid-answer are normal
    /// traffic: rmcp's WARN and ERROR lines for them are not written, in colour or not. The
    /// same `response error` in a server's session (a request of the server's refused) keeps
    /// its warning.
    #[test]
    fn an_agents_error_answers_and_departure_write_no_warning_or_error() {
        for ansi in [false, true] {
            let text = logged(ansi, || {
                let agent = tracing::info_span!("session", what = "agent", n = 1165);
                agent.in_scope(|| {
                    for id in 0..3 {
                        tracing::warn!(target: "rmcp::service", %id, error = ?Some("no/such"), "response error");
                    }
                    tracing::error!(target: "rmcp::service", error = %"the agent has gone", "failed to send pending response during drain");
                    tracing::error!(target: "rmcp::service", error = %"the agent has gone", "fail to response message");
                });
                let server = tracing::info_span!("server", name = "files");
                server.in_scope(|| {
                    tracing::warn!(target: "rmcp::service", id = 7, error = ?Some("denied"), "response error");
                });
            });
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(lines.len(), 1, "{text}");
            assert!(lines[0].contains("WARN"), "{text}");
            assert!(lines[0].contains("files"), "{text}");
            assert!(
                lines[0].contains("a request from the server was answered with an error"),
                "{text}"
            );
        }
    }

    #[test]
    fn a_dump_starts_at_a_capitalised_name_followed_by_a_brace_or_parenthesis() {
        let cases = [
            ("failed: Some(3)", Some(8)),
            ("x=Response(JsonRpc { a: 1 })", Some(2)),
            ("Error { kind: X }", Some(0)),
            ("HTTP 500 Internal Server Error", None),
            ("the connection closed (EOF)", None),
        ];
        for (text, want) in cases {
            assert_eq!(first_dump(text), want, "{text}");
        }
    }
}
