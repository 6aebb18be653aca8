//! Writing one frame to the server's stdin while its caller may give up: a server that stops
//! reading its input fills the pipe, and the write (and every write queued behind it on the
//! lane's one writer lock) then waits until the server reads again. A caller must still be
//! answered at its `toolTimeout` deadline, so [`write_until`] gives up when `stop` fires:
//!
//! | `stop` fires | what happens to the frame | what the server sees |
//! |---|---|---|
//! | before the lock is had, or before its first byte is written | dropped | nothing: the request was never sent |
//! | after some of its bytes are written | the rest is written by a spawned task that keeps the lock | the whole request, later |
//!
//! A frame is never cut short: a half-written line would run into the next frame and spoil
//! both. `AsyncWriteExt::write` is cancel-safe (a dropped write wrote nothing), so the count
//! of bytes written is exact.

use std::future::Future;
use std::sync::Arc;

use tokio::io::AsyncWriteExt;

use super::{FastLane, LaneEnd, NoAnswer, Ticket, Writer};

/// The lane's one writer; `None` once our side closed the session.
pub(super) type SharedWriter = Arc<tokio::sync::Mutex<Option<Writer>>>;

/// How a write that could be given up ended ([`write_until`]).
pub(super) enum Written<T> {
    /// The whole frame was written and flushed.
    Whole,
    /// The write failed, or the session is closed: the server cannot have read the whole frame.
    Failed(std::io::Error),
    /// `stop` fired first with `why`. `begun`: some of the frame was written, and the rest
    /// will be (the server will read the whole frame); otherwise none of it ever will be.
    Stopped { begun: bool, why: T },
}

/// One step of the write loop.
enum Step<T> {
    /// `Some(n)`: `n` bytes written; `None`: the frame is flushed.
    Wrote(std::io::Result<Option<usize>>),
    Stop(T),
}

/// Writes `frame` (one whole line) to `writer` under its lock, then flushes, unless `stop`
/// fires first (see the module doc).
pub(super) async fn write_until<T>(
    writer: &SharedWriter,
    frame: &[u8],
    stop: impl Future<Output = T>,
) -> Written<T> {
    tokio::pin!(stop);
    let mut guard = tokio::select! {
        biased;
        guard = writer.clone().lock_owned() => guard,
        why = &mut stop => return Written::Stopped { begun: false, why },
    };
    let mut at = 0;
    loop {
        let step = {
            let Some(w) = guard.as_mut() else {
                return Written::Failed(closed());
            };
            tokio::select! {
                biased;
                wrote = async {
                    if at < frame.len() {
                        w.write(&frame[at..]).await.map(Some)
                    } else {
                        w.flush().await.map(|()| None)
                    }
                } => Step::Wrote(wrote),
                why = &mut stop => Step::Stop(why),
            }
        };
        match step {
            Step::Wrote(Ok(Some(0))) => {
                return Written::Failed(std::io::ErrorKind::WriteZero.into());
            }
            Step::Wrote(Ok(Some(n))) => at += n,
            Step::Wrote(Ok(None)) => return Written::Whole,
            Step::Wrote(Err(e)) => return Written::Failed(e),
            Step::Stop(why) if at == 0 => return Written::Stopped { begun: false, why },
            Step::Stop(why) => {
                let rest = frame[at..].to_vec();
                tokio::spawn(async move {
                    let mut guard = guard;
                    if let Some(w) = guard.as_mut() {
                        let finished = match w.write_all(&rest).await {
                            Ok(()) => w.flush().await,
                            Err(e) => Err(e),
                        };
                        if let Err(e) = finished {
                            tracing::debug!(error = %e, "could not finish writing a request");
                        }
                    }
                });
                return Written::Stopped { begun: true, why };
            }
        }
    }
}

/// Why [`Ticket::send_until`] did not write its request whole.
#[derive(Debug)]
pub enum Unsent<T> {
    /// The write failed or the session is closed: the server cannot have read the whole
    /// request.
    Failed(std::io::Error),
    /// The send was given up: the ticket's timeout passed or the lane ended
    /// ([`Interrupted::NoAnswer`]), or the caller's `stop` fired ([`Interrupted::By`]).
    /// `begun`: part of the request was written and the rest is being written (the server
    /// will read it whole, so it may run); otherwise the server never gets it.
    Stopped {
        /// Whether any byte of the request was written.
        begun: bool,
        /// What stopped the send.
        why: Interrupted<T>,
    },
}

/// What gave up a send ([`Unsent::Stopped`]).
#[derive(Debug, PartialEq, Eq)]
pub enum Interrupted<T> {
    /// The ticket's own end: its timeout, or the lane's end.
    NoAnswer(NoAnswer),
    /// The caller's `stop`.
    By(T),
}

impl Ticket {
    /// Writes `frame` as [`Self::send`] does, but gives up when the ticket's timeout passes,
    /// the lane ends or `stop` fires, whichever comes first: the write to a server that stops
    /// reading its input waits as long as the server does (`write.rs`), and the caller must
    /// still be answered by its deadline. A frame given up after its first byte is still
    /// written whole, later. No timer of its own: the timeout is the lane's sweeper's.
    ///
    /// # Errors
    /// [`Unsent`]: why the request was not written whole, and whether the server will get it.
    pub async fn send_until<T>(
        &mut self,
        frame: &[u8],
        stop: impl Future<Output = T>,
    ) -> Result<(), Unsent<T>> {
        let Ticket {
            lane,
            answer,
            early,
            ..
        } = &mut *self;
        let ended = || NoAnswer::Ended(lane.ended().unwrap_or(LaneEnd::Closed));
        let stop = async move {
            tokio::pin!(stop);
            loop {
                if early.is_some() {
                    // An answer before the request is whole: the deadline no longer matters.
                    return Interrupted::By(stop.await);
                }
                tokio::select! {
                    biased;
                    why = &mut stop => return Interrupted::By(why),
                    got = &mut *answer => match got {
                        Ok(Some(line)) => *early = Some(line),
                        Ok(None) => return Interrupted::NoAnswer(NoAnswer::TimedOut),
                        Err(_) => return Interrupted::NoAnswer(ended()),
                    },
                }
            }
        };
        match write_until(&lane.shared.writer, frame, stop).await {
            Written::Whole => Ok(()),
            Written::Failed(e) => Err(Unsent::Failed(e)),
            Written::Stopped { begun, why } => Err(Unsent::Stopped { begun, why }),
        }
    }
}

impl FastLane {
    /// Writes rmcp's request `id` as one frame, unless [`Self::withdraw`] stops it before its
    /// first byte ([`write_until`]).
    ///
    /// # Errors
    /// The write failed, or the request was withdrawn.
    pub(super) async fn write_request(
        &self,
        id: rmcp::model::RequestId,
        frame: &[u8],
    ) -> std::io::Result<()> {
        let writing = self.shared.queued.enter(id.clone());
        let written = write_until(&self.shared.writer, frame, writing.stop.cancelled()).await;
        self.shared.queued.leave(&id);
        let begun = !matches!(written, Written::Stopped { begun: false, .. });
        let _ = writing.begun.send(begun);
        match written {
            Written::Whole | Written::Stopped { begun: true, .. } => Ok(()),
            Written::Failed(e) => Err(e),
            Written::Stopped { begun: false, .. } => Err(std::io::Error::other(
                "withdrawn before it was written: the server is not reading its input",
            )),
        }
    }
}

/// The error of a write to a lane whose session our side closed.
pub(super) fn closed() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::NotConnected, "the session is closed")
}
