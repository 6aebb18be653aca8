//! The call state machine on its own: which failed attempts are retried, how often, and the
//! text the agent gets, for every [`CallError`] variant on safe and unsafe tools.

use std::time::Duration;

use super::*;
use crate::upstream::bad_answer::BadAnswer;

fn all_errors() -> Vec<CallError> {
    vec![
        CallError::Timeout {
            timeout: Duration::from_secs(2),
        },
        CallError::NotSent {
            timeout: Duration::from_secs(2),
        },
        CallError::Rpc {
            code: -32602,
            message: "no such city".into(),
            data: None,
        },
        CallError::Transport {
            reason: "the connection closed".into(),
        },
        CallError::Exited {
            how: "exit code 3".into(),
            last_stderr: Some("panic: boom".into()),
        },
        CallError::BadAnswer(BadAnswer::NoResult { status: 202 }),
        CallError::NotDelivered {
            reason: "broken pipe".into(),
        },
        CallError::SessionExpired,
        CallError::Cancelled,
        CallError::ShuttingDown,
        CallError::SessionClosed,
        CallError::Arguments {
            reason: "not an object".into(),
        },
        CallError::Unexpected {
            what: "an empty result".into(),
        },
    ]
}

fn forward(retry_safe: bool) -> Forward {
    Forward::with("x".into(), "mcp_x_t", retry_safe, Duration::from_secs(7))
}

fn text(result: &CallToolResult) -> String {
    assert_eq!(result.is_error, Some(true));
    match result.content.as_slice() {
        [block] => block.as_text().map(|t| t.text.clone()).unwrap_or_default(),
        other => panic!("one text block expected, got {} blocks", other.len()),
    }
}

#[test]
fn a_failed_attempt_is_retried_exactly_when_a_second_run_is_impossible_or_harmless() {
    // (error, retried on an unsafe tool, retried on a readOnly/idempotent tool)
    let table: Vec<(CallError, bool, bool)> = all_errors()
        .into_iter()
        .map(|e| {
            let (unsafe_tool, safe_tool) = match &e {
                CallError::NotDelivered { .. } | CallError::SessionExpired => (true, true),
                CallError::Transport { .. }
                | CallError::Exited { .. }
                | CallError::SessionClosed => (false, true),
                _ => (false, false),
            };
            (e, unsafe_tool, safe_tool)
        })
        .collect();
    for (e, unsafe_tool, safe_tool) in table {
        for (retry_safe, want) in [(false, unsafe_tool), (true, safe_tool)] {
            let mut f = forward(retry_safe);
            let retried = matches!(f.judge(&e), Verdict::Retry);
            assert_eq!(
                retried, want,
                "{e:?} on a tool with retry_safe={retry_safe}"
            );
        }
    }
}

#[test]
fn a_call_is_retried_once_only() {
    for e in all_errors() {
        let mut f = forward(true);
        if matches!(f.judge(&e), Verdict::Retry) {
            let Verdict::Fail(result) = f.judge(&e) else {
                panic!("{e:?} was retried twice");
            };
            // After the retry the caveat about a second run no longer applies: it was safe.
            assert!(!text(&result).contains("may or may not"), "{e:?}");
        }
    }
}

#[test]
fn a_lost_call_that_is_not_retried_says_it_may_have_run() {
    for e in [
        CallError::Transport {
            reason: "the connection closed".into(),
        },
        CallError::Exited {
            how: "signal 9 (SIGKILL)".into(),
            last_stderr: None,
        },
        CallError::SessionClosed,
    ] {
        let Verdict::Fail(result) = forward(false).judge(&e) else {
            panic!("{e:?} retried on an unsafe tool");
        };
        let said = text(&result);
        assert!(said.starts_with("server \"x\": "), "{said}");
        assert!(said.contains("may or may not have run"), "{said}");
        assert!(said.contains("readOnlyHint or idempotentHint"), "{said}");
    }
}

#[test]
fn the_agent_reads_which_server_failed_and_how() {
    let cases = [
        (
            CallError::Rpc {
                code: -32602,
                message: "no such city".into(),
                data: None,
            },
            "server \"x\" returned an error: no such city (JSON-RPC error -32602)",
        ),
        (
            CallError::Timeout {
                timeout: Duration::from_secs(2),
            },
            "server \"x\": timed out after 2 s",
        ),
        (
            CallError::NotSent {
                timeout: Duration::from_secs(2),
            },
            "server \"x\": timed out after 2 s before the request could be sent: the server is \
             not reading its input, so the call was not delivered and did not run",
        ),
        (
            CallError::ShuttingDown,
            "server \"x\": the companion is shutting down",
        ),
        (
            CallError::Unexpected {
                what: "an empty result".into(),
            },
            "server \"x\": unexpected answer from the server: an empty result",
        ),
        (
            CallError::BadAnswer(BadAnswer::EmptyBody),
            "server \"x\": the server answered with an empty body. The server got the request, \
             so the call may have run; it was not sent again",
        ),
    ];
    for (e, want) in cases {
        for retry_safe in [false, true] {
            let Verdict::Fail(result) = forward(retry_safe).judge(&e) else {
                panic!("{e:?} retried");
            };
            assert_eq!(text(&result), want);
            assert_eq!(text(&forward(retry_safe).fail(&e)), want);
        }
    }
}

#[test]
fn the_deadline_is_the_servers_tool_timeout() {
    assert_eq!(forward(false).timeout(), Duration::from_secs(7));
}

#[test]
fn an_exited_process_is_quoted_with_its_status_and_last_stderr_line() {
    let cases = [
        (
            CallError::Exited {
                how: "exit code 3".into(),
                last_stderr: Some("panic: \u{1b}[31mboom\"\n".into()),
            },
            r#"server "x": the server's process exited during the call (exit code 3); its last stderr line: "panic: \u{1b}[31mboom\"\n". The call may or may not have run"#,
        ),
        (
            CallError::Exited {
                how: "signal 9 (SIGKILL)".into(),
                last_stderr: None,
            },
            r#"server "x": the server's process exited during the call (signal 9 (SIGKILL)). The call may or may not have run"#,
        ),
    ];
    for (e, want) in cases {
        let Verdict::Fail(result) = forward(false).judge(&e) else {
            panic!("{e:?} retried on an unsafe tool");
        };
        let said = text(&result);
        assert!(said.starts_with(want), "{said}");
    }
    let long = CallError::Exited {
        how: "exit code 1".into(),
        last_stderr: Some("x".repeat(5000)),
    };
    let said = long.to_string();
    assert!(
        said.len() < 500 && said.ends_with(r#"… (5000 bytes in all)""#),
        "{said}"
    );
}

#[test]
fn no_session_for_the_retry_says_why_and_that_nothing_ran_twice() {
    let f = forward(false);
    let e = CallError::NotDelivered {
        reason: "broken pipe".into(),
    };
    let said = text(&f.no_session(&e, "it is shutting down", "server \"x\" is stopped"));
    assert_eq!(
        said,
        "server \"x\": could not send the request: broken pipe; server \"x\" is stopped"
    );
}

#[test]
fn missing_arguments_become_an_empty_object_only_for_object_schemas() {
    let object = forward(false).object_arguments(true);
    assert_eq!(object.arguments(None), Some(JsonObject::new()));
    assert_eq!(object.raw_arguments(None), Some("{}"));
    assert_eq!(object.raw_arguments(Some("null")), Some("{}"));
    assert_eq!(object.raw_arguments(Some(r#"{"a":1}"#)), Some(r#"{"a":1}"#));
    let other = forward(false);
    assert_eq!(other.arguments(None), None);
    assert_eq!(other.raw_arguments(Some("null")), None);
}

#[test]
fn progress_moves_the_deadline_but_not_past_the_hard_maximum() {
    let clock = forward(false).clock();
    assert_eq!(clock.idle, Duration::from_secs(7));
    assert_eq!(clock.max, Duration::from_secs(70));
    let start = tokio::time::Instant::now();
    assert_eq!(clock.due(start, start), start + Duration::from_secs(7));
    let late = start + Duration::from_secs(20);
    assert_eq!(clock.due(start, late), late + Duration::from_secs(7));
    let later = start + Duration::from_secs(69);
    assert_eq!(clock.due(start, later), start + Duration::from_secs(70));
}
