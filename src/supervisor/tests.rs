//! The restart policy of a supervisor task, on Tokio's paused clock with an injected connect:
//! minutes of backoff run in milliseconds, and the times asserted are exact.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use super::*;
use crate::demo::{self, DemoOptions};
use crate::upstream::ask::AskContext;
use crate::upstream::connect::connect_stream;

/// What one connect attempt does.
#[derive(Clone, Copy, Debug)]
enum Attempt {
    /// Fails with a transient error.
    Fail,
    /// The server answers 401: it wants a sign-in.
    NeedsSignIn,
    /// The server refuses with `Retry-After` this many seconds.
    RetryAfter(u64),
    /// Connects to an in-process demo server that hangs up after this long.
    RunFor(Duration),
}

/// The `WWW-Authenticate` of [`Attempt::NeedsSignIn`].
const CHALLENGE: &str = r#"Bearer resource_metadata="https://auth.example/.well-known/x""#;

/// A connect that plays `plan` (then fails forever), recording when each attempt began.
fn scripted(plan: Vec<Attempt>) -> (Connect, Arc<Mutex<Vec<Instant>>>) {
    let times = Arc::new(Mutex::new(Vec::new()));
    let seen = times.clone();
    let connect: Connect = Arc::new(move |args: ConnectArgs| {
        let attempt = {
            let mut times = seen.lock().unwrap();
            times.push(Instant::now());
            plan.get(times.len() - 1).copied().unwrap_or(Attempt::Fail)
        };
        Box::pin(async move {
            match attempt {
                Attempt::Fail => Err(StartFailure {
                    message: "boom".into(),
                    permanent: false,
                    sign_in: false,
                    challenge: None,
                    retry_after: None,
                }),
                Attempt::NeedsSignIn => Err(StartFailure {
                    message: "the server asks for a sign-in (HTTP 401)".into(),
                    permanent: false,
                    sign_in: true,
                    challenge: Some(CHALLENGE.to_owned()),
                    retry_after: None,
                }),
                Attempt::RetryAfter(secs) => Err(StartFailure {
                    message: "HTTP 429 Too Many Requests (Retry-After: …)".into(),
                    permanent: false,
                    sign_in: false,
                    challenge: None,
                    retry_after: Some(Duration::from_secs(secs)),
                }),
                Attempt::RunFor(lifetime) => {
                    let (ours, theirs) = tokio::io::duplex(1 << 16);
                    tokio::spawn(async move {
                        tokio::select! {
                            _ = demo::serve_on(DemoOptions::default(), theirs) => {}
                            () = tokio::time::sleep(lifetime) => {}
                        }
                    });
                    connect_stream(
                        ours,
                        args.progress,
                        AskContext::new("s", args.askers, args.roots, Duration::from_secs(30)),
                        Duration::from_secs(30),
                    )
                    .await
                    .map_err(|e| StartFailure {
                        message: e.to_string(),
                        permanent: false,
                        sign_in: false,
                        challenge: None,
                        retry_after: None,
                    })
                }
            }
        })
    });
    (connect, times)
}

fn spec() -> ServerSpec {
    let text = r#"{"mcpServers":{"s":{"command":"not-run"}}}"#;
    crate::config::parse(text, std::path::Path::new("test"))
        .unwrap()
        .servers
        .remove(0)
}

fn start(connect: Connect) -> ServerHandle {
    let quiet: Reporter = Arc::new(|_: &Arc<str>| {});
    spawn_with(&spec(), &SsrfWhitelist::default(), quiet, connect)
}

async fn wait_for(server: &ServerHandle, state: ServerState) -> ServerStatus {
    wait_until(server, |s| s.state == state).await
}

async fn wait_until(server: &ServerHandle, want: impl Fn(&ServerStatus) -> bool) -> ServerStatus {
    let mut watch = server.watch();
    let snap = tokio::time::timeout(
        Duration::from_secs(3600),
        watch.wait_for(|s| want(&s.status)),
    )
    .await
    .expect("state reached within an hour of paused time")
    .expect("supervisor alive")
    .clone();
    snap.status
}

/// Seconds from the first attempt to each attempt, in whole milliseconds.
fn offsets(times: &Mutex<Vec<Instant>>) -> Vec<u128> {
    let times = times.lock().unwrap();
    times.iter().map(|t| (*t - times[0]).as_millis()).collect()
}

#[tokio::test(start_paused = true)]
async fn failed_starts_back_off_1_2_4_8_s_and_give_up_after_five() {
    let (connect, times) = scripted(vec![]);
    let server = start(connect);
    let status = wait_for(&server, ServerState::Failed).await;
    assert_eq!(offsets(&times), vec![0, 1000, 3000, 7000, 15000]);
    assert_eq!(
        status.last_error.as_deref(),
        Some("boom (gave up after 5 failures in a row)")
    );
    assert_eq!(status.restarts, 4);
    // Nothing more happens by itself.
    tokio::time::sleep(Duration::from_secs(600)).await;
    assert_eq!(times.lock().unwrap().len(), 5);
}

#[tokio::test(start_paused = true)]
async fn a_retry_after_longer_than_the_backoff_is_waited_and_a_huge_one_is_capped() {
    use Attempt::*;
    let (connect, times) = scripted(vec![RetryAfter(30), Fail, RetryAfter(1_000_000)]);
    let server = start(connect);
    wait_for(&server, ServerState::Failed).await;
    let cap = super::backoff::MAX_RETRY_AFTER.as_millis();
    // 30 s instead of 1 s; then the doubling's 2 s; then the cap instead of 4 s; then 8 s.
    assert_eq!(
        offsets(&times),
        vec![0, 30_000, 32_000, 32_000 + cap, 32_000 + cap + 8_000]
    );
}

#[tokio::test(start_paused = true)]
async fn a_server_that_wants_a_sign_in_waits_without_retrying_until_started_again() {
    use Attempt::*;
    let (connect, times) = scripted(vec![NeedsSignIn, RunFor(Duration::from_secs(3600))]);
    let server = start(connect);
    let status = wait_for(&server, ServerState::NeedsSignIn).await;
    assert_eq!(status.restarts, 0);
    assert!(status.last_error.unwrap().contains("sign-in"));
    // No restart loop: an hour later it has still tried once.
    tokio::time::sleep(Duration::from_secs(3600)).await;
    assert_eq!(times.lock().unwrap().len(), 1);
    assert_eq!(server.snapshot().status.state, ServerState::NeedsSignIn);
    // The server's challenge waits for `login` with the server, not in a process-wide table.
    assert_eq!(
        server.snapshot().sign_in_challenge.as_deref(),
        Some(CHALLENGE)
    );
    // What `login` does once the tokens are stored: a restart, which now connects.
    server.restart().await;
    wait_for(&server, ServerState::Running).await;
    assert_eq!(times.lock().unwrap().len(), 2);
    assert_eq!(server.snapshot().sign_in_challenge, None);
}

#[tokio::test(start_paused = true)]
async fn a_session_that_ran_five_minutes_starts_the_count_over() {
    use Attempt::*;
    let (connect, times) = scripted(vec![Fail, Fail, Fail, Fail, RunFor(HEALTHY_AFTER)]);
    let server = start(connect);
    wait_for(&server, ServerState::Running).await;
    let up = Instant::now();
    // The healthy session ends; the count starts over: 1 s, then 2, 4, 8 and give up.
    let status = wait_for(&server, ServerState::Failed).await;
    let times = times.lock().unwrap().clone();
    assert_eq!(times.len(), 9, "4 failures, 1 session, 4 more failures");
    let after_loss: Vec<u128> = times[5..].iter().map(|t| (*t - up).as_millis()).collect();
    // The loss is seen at 5 min; 100 ms for the stderr drain, then 1 s, 2 s, 4 s, 8 s.
    let lost = HEALTHY_AFTER.as_millis() + 100;
    assert_eq!(
        after_loss,
        vec![lost + 1000, lost + 3000, lost + 7000, lost + 15000]
    );
    assert!(status.last_error.unwrap().contains("gave up after 5"));
}

#[tokio::test(start_paused = true)]
async fn a_session_shorter_than_five_minutes_counts_toward_giving_up() {
    use Attempt::*;
    let short = HEALTHY_AFTER - Duration::from_secs(1);
    let (connect, times) = scripted(vec![Fail, Fail, Fail, Fail, RunFor(short)]);
    let server = start(connect);
    wait_for(&server, ServerState::Running).await;
    let status = wait_for(&server, ServerState::Failed).await;
    assert_eq!(
        times.lock().unwrap().len(),
        5,
        "no attempt after the 5th failure"
    );
    let error = status.last_error.unwrap();
    assert!(
        error.contains("the session closed") && error.contains("gave up after 5"),
        "{error}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_start_by_hand_forgets_past_failures() {
    let (connect, times) = scripted(vec![]);
    let server = start(connect);
    wait_for(&server, ServerState::Failed).await;
    let again = Instant::now();
    server.start().await;
    // Four more restarts, then failed again.
    wait_until(&server, |s| {
        s.state == ServerState::Failed && s.restarts == 8
    })
    .await;
    let times = times.lock().unwrap().clone();
    let fresh: Vec<u128> = times[5..]
        .iter()
        .map(|t| (*t - again).as_millis())
        .collect();
    assert_eq!(fresh, vec![0, 1000, 3000, 7000, 15000]);
}
