use super::*;
use crate::upstream::notice::ServerLogs;
use rmcp::RoleClient;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, EmptyResult,
    GetExtensions, GetMeta, JsonRpcMessage, NumberOrString, ProgressNotification, RequestId,
    ServerJsonRpcMessage, ServerNotification, ServerResult,
};
use rmcp::transport::Transport;

/// An in-memory upstream: `receive` yields `incoming` in order, `send` records.
struct Fake {
    incoming: std::collections::VecDeque<ServerJsonRpcMessage>,
}

impl Transport<RoleClient> for Fake {
    type Error = std::io::Error;

    fn send(
        &mut self,
        _item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        std::future::ready(Ok(()))
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        self.incoming.pop_front()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

fn logs() -> ServerLogs {
    ServerLogs {
        server: "s".into(),
        notices: crate::upstream::notice::Notices::default(),
    }
}

fn token(n: i64) -> ProgressToken {
    ProgressToken(NumberOrString::Number(n))
}

fn progress(n: i64, value: f64) -> ServerJsonRpcMessage {
    ServerJsonRpcMessage::notification(ServerNotification::ProgressNotification(
        ProgressNotification::new(ProgressNotificationParam::new(token(n), value)),
    ))
}

fn response(id: i64) -> ServerJsonRpcMessage {
    ServerJsonRpcMessage::response(
        ServerResult::EmptyResult(EmptyResult {}),
        RequestId::Number(id),
    )
}

/// A `tools/call` as rmcp hands it to the transport: its progressToken set, `sink` attached.
fn request(id: i64, progress_token: i64, sink: Option<ProgressSink>) -> ClientJsonRpcMessage {
    let mut request =
        ClientRequest::CallToolRequest(CallToolRequest::new(CallToolRequestParams::new("t")));
    request
        .get_meta_mut()
        .set_progress_token(token(progress_token));
    if let Some(sink) = sink {
        request.extensions_mut().insert(sink);
    }
    ClientJsonRpcMessage::request(request, RequestId::Number(id))
}

fn values(queue: &mut SinkRx) -> Vec<f64> {
    std::iter::from_fn(|| queue.try_recv())
        .map(|p| p.progress)
        .collect()
}

#[tokio::test]
async fn progress_is_queued_for_its_call_before_the_response_is_received() {
    let routes = ProgressRoutes::default();
    let mut tap = routes.tap(
        Fake {
            incoming: [
                progress(7, 0.25),
                progress(99, 1.0),
                progress(7, 0.5),
                response(1),
            ]
            .into(),
        },
        logs(),
    );
    let (sink, mut queue) = sink_pair();
    tap.send(request(1, 7, Some(sink))).await.expect("send");

    // The first message rmcp sees is the response; by then both progress notifications
    // of token 7 are queued, in wire order, and token 99 (no call) was dropped.
    let first = tap.receive().await.expect("a message");
    assert!(matches!(first, JsonRpcMessage::Response(_)), "{first:?}");
    assert_eq!(values(&mut queue), [0.25, 0.5]);
    assert!(tap.receive().await.is_none());
}

#[tokio::test]
async fn a_request_without_a_sink_gets_no_route() {
    let routes = ProgressRoutes::default();
    let mut tap = routes.tap(
        Fake {
            incoming: [progress(3, 1.0)].into(),
        },
        logs(),
    );
    tap.send(request(1, 3, None)).await.expect("send");
    assert_eq!(routes.len(), 0);
    assert!(tap.receive().await.is_none(), "progress is never passed on");
}

#[tokio::test]
async fn routes_of_finished_calls_are_forgotten() {
    let routes = ProgressRoutes::default();
    let mut tap = routes.tap(
        Fake {
            incoming: [progress(1, 1.0)].into(),
        },
        logs(),
    );
    let (sink, queue) = sink_pair();
    tap.send(request(1, 1, Some(sink))).await.expect("send");
    drop(queue);
    // A notification for a finished call removes its route…
    assert!(tap.receive().await.is_none());
    assert_eq!(routes.len(), 0);
    // …and so does the next request, for calls that got no notification at all.
    let (sink, queue) = sink_pair();
    tap.send(request(2, 2, Some(sink))).await.expect("send");
    drop(queue);
    let (sink, _queue) = sink_pair();
    tap.send(request(3, 3, Some(sink))).await.expect("send");
    assert_eq!(routes.len(), 1);
}

#[tokio::test]
async fn a_flooding_server_fills_one_bounded_queue_and_the_rest_is_dropped() {
    let routes = ProgressRoutes::default();
    let each = weight(&ProgressNotificationParam::new(token(5), 0.0));
    let fits = SINK_BYTES / each;
    let flood = (0..fits as i64 + 10).map(|i| progress(5, i as f64));
    let mut tap = routes.tap(
        Fake {
            incoming: flood.chain([response(1)]).collect(),
        },
        logs(),
    );
    let (sink, mut queue) = sink_pair();
    tap.send(request(1, 5, Some(sink))).await.expect("send");
    assert!(tap.receive().await.is_some());
    let kept = values(&mut queue);
    assert_eq!(kept.len(), fits);
    assert!(fits >= 5000, "a burst of thousands fits: {fits}");
    assert_eq!(kept.first(), Some(&0.0), "the earliest are kept, in order");
}
