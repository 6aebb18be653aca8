//! The person's answers over the control API: `approvals` with `watch` attaches the connection
//! as an approver ([`crate::hub::Approvals`]) and streams every ask and its end; `approve`
//! answers one ask, and for `always` writes `allow` for the tool into the config file
//! (`manage::edit`, atomic) and reloads it, which changes the policy without a restart.

use tokio::io::{AsyncBufRead, AsyncWrite};

use super::ControlContext;
use super::lines;
use super::protocol::{ApprovalsReport, ApproveReport, ControlResponse, ErrorKind, Refusal, Reply};
use super::server::send;
use crate::hub::Answer;

/// Streams the open asks, then every approval event, until the client hangs up (end of its
/// input, or a failed write); the connection counts as an approver meanwhile.
pub(super) async fn watch<R, W>(
    rd: &mut crate::io::LineReader<R>,
    wr: &mut W,
    ctx: &ControlContext,
) -> std::io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut approver = ctx.hub.approvals().attach();
    let first = ApprovalsReport {
        open: approver.open(),
    };
    send(
        wr,
        Reply::from_outcome(Ok(ControlResponse::Approvals(first))),
    )
    .await?;
    loop {
        tokio::select! {
            events = approver.recv() => {
                let Some(events) = events else { return Ok(()) };
                for event in events {
                    send(wr, Reply::from_outcome(Ok(ControlResponse::Approval(event)))).await?;
                }
            }
            // Nothing more is expected from a watcher; its end of input means it left.
            more = lines::read_line(rd) => match more {
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => return Ok(()),
            },
        }
    }
}

/// Answers ask `id`; for [`Answer::Always`], then writes the tool's `allow` into the config
/// file and reloads it.
pub(super) async fn approve(
    ctx: &ControlContext,
    id: u64,
    answer: Answer,
) -> Result<ControlResponse, Refusal> {
    let ask = ctx
        .hub
        .approvals()
        .answer(id, answer)
        .map_err(|e| Refusal::new(ErrorKind::NotWaiting, e.to_string()))?;
    if answer != Answer::Always {
        return Ok(ControlResponse::Approved(ApproveReport {
            approved: ask,
            policy_written: false,
        }));
    }
    let Some(path) = ctx.config_path.as_deref() else {
        return Err(Refusal::new(
            ErrorKind::PolicyNotSaved,
            "the call was allowed once, but this companion has no config file to write \"allow\" into",
        ));
    };
    let (server, tool) = (ask.server.clone(), ask.tool.clone());
    let written = crate::manage::edit::update_file(path, |doc| {
        crate::manage::edit::set_tool_policy(
            doc,
            &server,
            &tool,
            Some(crate::config::Policy::Allow),
        )
    });
    match written {
        Ok(config) => {
            ctx.hub.reload(&config).await;
            tracing::info!(server = %server, tool = %tool, "the person always allows this tool: toolPolicy \"allow\" written");
            Ok(ControlResponse::Approved(ApproveReport {
                approved: ask,
                policy_written: true,
            }))
        }
        Err(e) => Err(Refusal::new(
            ErrorKind::PolicyNotSaved,
            format!(
                "the call was allowed once, but \"allow\" could not be written into the config: {e}"
            ),
        )),
    }
}
