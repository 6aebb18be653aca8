//! The person's answers over the control API: `approvals` with `watch` attaches the connection
//! as an approver ([`crate::hub::Approvals`]) and streams every ask and its end; `approve`
//! answers one ask, and for `always` writes `allow` for the tool into the config file
//! ([`crate::manage::approval`]).

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

/// Answers ask `id` ([`crate::manage::approval::answer`]: `always` also writes the policy).
pub(super) async fn approve(
    ctx: &ControlContext,
    id: u64,
    answer: Answer,
) -> Result<ControlResponse, Refusal> {
    use crate::manage::approval::{self, AnswerError};
    match approval::answer(&ctx.hub, ctx.config_path.as_deref(), id, answer).await {
        Ok(approved) => Ok(ControlResponse::Approved(ApproveReport {
            approved,
            policy_written: answer == Answer::Always,
        })),
        Err(e @ AnswerError::NotOpen(_)) => Err(Refusal::new(ErrorKind::NotWaiting, e.to_string())),
        Err(e @ AnswerError::NotSaved(_)) => {
            Err(Refusal::new(ErrorKind::PolicyNotSaved, e.to_string()))
        }
    }
}
