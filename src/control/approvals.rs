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

/// Answers ask `id`; for [`Answer::Always`], first writes the tool's `allow` into the config
/// file and reloads it, so the call runs with the new policy in place.
pub(super) async fn approve(
    ctx: &ControlContext,
    id: u64,
    answer: Answer,
) -> Result<ControlResponse, Refusal> {
    let not_waiting =
        |e: crate::hub::approvals::NotOpen| Refusal::new(ErrorKind::NotWaiting, e.to_string());
    let approvals = ctx.hub.approvals();
    let ask = approvals
        .get(id)
        .ok_or(crate::hub::approvals::NotOpen(id))
        .map_err(not_waiting)?;
    if answer != Answer::Always {
        let approved = approvals.answer(id, answer).map_err(not_waiting)?;
        return Ok(ControlResponse::Approved(ApproveReport {
            approved,
            policy_written: false,
        }));
    }
    let written = write_allow(ctx, &ask.server, &ask.tool).await;
    let approved = approvals.answer(id, answer).map_err(not_waiting)?;
    match written {
        Ok(()) => Ok(ControlResponse::Approved(ApproveReport {
            approved,
            policy_written: true,
        })),
        Err(why) => Err(Refusal::new(
            ErrorKind::PolicyNotSaved,
            format!(
                "the call was allowed once, but \"allow\" could not be written into the config: {why}"
            ),
        )),
    }
}

/// Writes `toolPolicy` `allow` for `tool` of `server` into the config file and reloads it.
async fn write_allow(ctx: &ControlContext, server: &str, tool: &str) -> Result<(), String> {
    let path = ctx
        .config_path
        .as_deref()
        .ok_or("this companion has no config file")?;
    let config = crate::manage::edit::update_file(path, |doc| {
        crate::manage::edit::set_tool_policy(doc, server, tool, Some(crate::config::Policy::Allow))
    })
    .map_err(|e| e.to_string())?;
    ctx.hub.reload(&config).await;
    tracing::info!(
        server,
        tool,
        "the person always allows this tool: toolPolicy \"allow\" written"
    );
    Ok(())
}
