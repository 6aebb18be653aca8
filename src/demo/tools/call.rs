//! tools/call: each name to its tool, and the tools that use the session or the server's
//! state: `sleep` and `work` (progress, cancellation), `toggle_extra`, `touch`, `confirm`.

use std::sync::atomic::Ordering;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ErrorCode, JsonObject,
    ProgressNotificationParam,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};

use super::answers::{add, append, argv, big, error, get_env, image, text};
use super::{EXTRA_TOOL, GARBAGE_LINE, MAX_SLEEP_SECONDS, ODD_TOOL, PROGRESS_EVERY, Tools};
use crate::demo::tool_args::{
    CrashArgs, EchoArgs, FailArgs, ProtocolErrorArgs, ReadSlowlyArgs, SleepArgs, TouchArgs, parse,
};

impl Tools {
    /// Handles tools/call.
    ///
    /// Tool failures are `isError` results; only `protocol_error`, bad arguments and unknown
    /// names are JSON-RPC errors. `toggle_extra` emits notifications/tools/list_changed and
    /// `sleep` emits notifications/progress when the request carries a progressToken: at the
    /// start, every 0.25 s, and once more (progress = total) right before its result.
    ///
    /// # Errors
    ///
    /// `-32602` for an unknown tool or arguments that do not match its schema; the requested
    /// code for `protocol_error`.
    pub async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name: &str = &request.name;
        if self.test_tools && name == "confirm" {
            return Ok(crate::demo::confirm::call(
                request.input_responses.as_ref(),
                request.request_state.as_deref(),
            ));
        }
        let args = request.arguments;
        let result = match name {
            "echo" => text(parse::<EchoArgs>(args)?.message),
            "add" => add(parse(args)?),
            "sleep" => self.sleep(parse(args)?, &context).await,
            "image" => image(parse(args)?),
            _ if self.test_tools => self.call_test_tool(name, args, &context).await?,
            _ => self.call_generated(name)?,
        };
        Ok(CallToolResponse::Complete(result))
    }

    async fn call_test_tool(
        &self,
        name: &str,
        args: Option<JsonObject>,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        Ok(match name {
            "fail" => error(parse::<FailArgs>(args)?.message),
            "protocol_error" => {
                let ProtocolErrorArgs { code, message } = parse(args)?;
                return Err(McpError::new(ErrorCode(code), message, None));
            }
            "crash" => {
                let CrashArgs {
                    exit_code,
                    last_words,
                } = parse(args)?;
                eprintln!("demo-server: crashing with exit code {exit_code} as requested");
                if let Some(words) = last_words {
                    eprintln!("{words}");
                }
                std::process::exit(exit_code);
            }
            "garbage" => match self.raw_lines.write_line(GARBAGE_LINE).await {
                Ok(()) => text("ok after garbage"),
                Err(e) => error(format!("could not write the garbage line: {e}")),
            },
            "big" => big(parse(args)?),
            ODD_TOOL => text("odd ok"),
            "get_env" => get_env(parse(args)?),
            "pid" => text(std::process::id().to_string()),
            "append" => append(parse(args)?).await,
            "work" => self.sleep(parse(args)?, context).await,
            "read_slowly" => {
                let ReadSlowlyArgs { seconds } = parse(args)?;
                tokio::time::sleep(Duration::from_secs_f64(
                    seconds.clamp(0.0, MAX_SLEEP_SECONDS),
                ))
                .await;
                text(format!("read after {seconds} s"))
            }
            "argv" => argv(),
            "toggle_extra" => self.toggle_extra(context).await,
            "touch" if self.listeners.is_some() => {
                let TouchArgs { uri } = parse(args)?;
                let heard = match &self.listeners {
                    Some(listeners) => listeners.updated(&uri).await,
                    None => 0,
                };
                text(format!("{uri} updated on {heard} stream(s)"))
            }
            EXTRA_TOOL if self.extra_enabled.load(Ordering::SeqCst) => text("extra ok"),
            _ => self.call_generated(name)?,
        })
    }

    fn call_generated(&self, name: &str) -> Result<CallToolResult, McpError> {
        let index = name
            .strip_prefix("gen_")
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|i| *i < self.extra_tools && name == format!("gen_{i}"));
        match index {
            Some(_) => Ok(text(format!("{name} ok"))),
            None => Err(McpError::invalid_params(
                format!("unknown tool {name:?}"),
                None,
            )),
        }
    }

    async fn sleep(&self, args: SleepArgs, context: &RequestContext<RoleServer>) -> CallToolResult {
        let seconds = args.seconds;
        if !(0.0..=MAX_SLEEP_SECONDS).contains(&seconds) {
            return error(format!("seconds must be between 0 and {MAX_SLEEP_SECONDS}"));
        }
        let start = tokio::time::Instant::now();
        let deadline = start + Duration::from_secs_f64(seconds);
        let token = context.meta.get_progress_token();
        let report = |progress: f64| {
            let token = token.clone();
            async move {
                let Some(token) = token else { return };
                let note = ProgressNotificationParam::new(token, progress)
                    .with_total(seconds)
                    .with_message("sleeping");
                if let Err(e) = context.peer.notify_progress(note).await {
                    tracing::debug!(error = %e, "could not send progress");
                }
            }
        };
        // A first and a last notification whatever the timing, so a client always sees some.
        report(0.0).await;
        let mut ticks = tokio::time::interval_at(start + PROGRESS_EVERY, PROGRESS_EVERY);
        loop {
            tokio::select! {
                () = context.ct.cancelled() => {
                    self.cancelled_sleeps.fetch_add(1, Ordering::SeqCst);
                    tracing::info!(seconds, "sleep cancelled by the client");
                    return error("sleep cancelled");
                }
                () = tokio::time::sleep_until(deadline) => break,
                _ = ticks.tick(), if token.is_some() => {
                    // Progress must increase: a late tick never repeats the final value.
                    let now = start.elapsed().as_secs_f64();
                    if now < seconds {
                        report(now).await;
                    }
                }
            }
        }
        if seconds > 0.0 {
            report(seconds).await;
        }
        text(format!("slept {seconds} s"))
    }

    async fn toggle_extra(&self, context: &RequestContext<RoleServer>) -> CallToolResult {
        let was_enabled = self.extra_enabled.fetch_xor(true, Ordering::SeqCst);
        if let Some(listeners) = &self.listeners {
            listeners.tools_changed().await;
        } else if let Err(e) = context.peer.notify_tool_list_changed().await {
            tracing::warn!(error = %e, "could not send notifications/tools/list_changed");
        }
        text(if was_enabled {
            "extra removed"
        } else {
            "extra added"
        })
    }
}
