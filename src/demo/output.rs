//! Line-ordered output shared by the MCP transport and the `garbage` test tool.
//!
//! Problem: the `garbage` tool must put a non-JSON line on stdout *between* JSON-RPC messages.
//! rmcp's transport writes a message with as many `poll_write` calls as the sink needs, so a
//! second writer sharing stdout could land in the middle of a message.
//!
//! Strategy: one task owns the real writer and writes whole lines it receives on a channel,
//! flushing after each. The transport gets a [`LineWriter`] (an `AsyncWrite`) that cuts its
//! byte stream into complete lines before sending them; the tool gets a [`RawLines`] handle
//! that sends its line on the same channel. Lines therefore never interleave, and a line the
//! tool sends before returning reaches the peer before the tool's response.
//!
//! Rejected: a mutex around stdout shared with the tool, because the transport would have to
//! hold it across a whole message, which `AsyncWrite` cannot express.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::PollSender;

/// How many whole lines may wait for the writer task before writers are held back.
const LINE_QUEUE: usize = 64;

/// A cheap handle that writes raw lines between the transport's messages.
#[derive(Clone, Debug)]
pub struct RawLines {
    tx: mpsc::Sender<Vec<u8>>,
}

impl RawLines {
    /// Queues `line` (a newline is appended) after everything written so far.
    ///
    /// # Errors
    ///
    /// `BrokenPipe` when the writer task has stopped (the output was closed or failed).
    pub async fn write_line(&self, line: &str) -> io::Result<()> {
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        self.tx.send(bytes).await.map_err(|_| closed())
    }
}

/// The transport's side: an `AsyncWrite` that forwards only complete lines.
///
/// Bytes after the last newline wait in `partial`; on shutdown they are sent as a final
/// (unterminated) line so nothing is lost.
#[derive(Debug)]
pub struct LineWriter {
    tx: PollSender<Vec<u8>>,
    partial: Vec<u8>,
    ready: VecDeque<Vec<u8>>,
}

impl LineWriter {
    /// Sends queued complete lines until the channel is full or the queue is empty.
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while let Some(line) = self.ready.pop_front() {
            match self.tx.poll_reserve(cx) {
                Poll::Ready(Ok(())) => self.tx.send_item(line).map_err(|_| closed())?,
                Poll::Ready(Err(_)) => return Poll::Ready(Err(closed())),
                Poll::Pending => {
                    self.ready.push_front(line);
                    return Poll::Pending;
                }
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for LineWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        // Back-pressure: accept new bytes only once earlier lines have left.
        ready!(this.poll_drain(cx))?;
        let mut rest = buf;
        while let Some(pos) = rest.iter().position(|b| *b == b'\n') {
            let (line, tail) = rest.split_at(pos + 1);
            let mut whole = std::mem::take(&mut this.partial);
            whole.extend_from_slice(line);
            this.ready.push_back(whole);
            rest = tail;
        }
        this.partial.extend_from_slice(rest);
        // The bytes are accepted either way; a full channel is retried on the next call.
        if let Poll::Ready(Err(e)) = this.poll_drain(cx) {
            return Poll::Ready(Err(e));
        }
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().poll_drain(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if !this.partial.is_empty() {
            let tail = std::mem::take(&mut this.partial);
            this.ready.push_back(tail);
        }
        ready!(this.poll_drain(cx))?;
        this.tx.close();
        Poll::Ready(Ok(()))
    }
}

/// Starts the task that owns `out` and returns the transport writer, the raw-line handle and
/// the task, which ends once every [`LineWriter`] and [`RawLines`] is gone (or on a write
/// error, which it returns).
pub fn spawn_line_output<W>(mut out: W) -> (LineWriter, RawLines, JoinHandle<io::Result<()>>)
where
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, mut rx) = mpsc::channel::<Vec<u8>>(LINE_QUEUE);
    let task = tokio::spawn(async move {
        while let Some(line) = rx.recv().await {
            out.write_all(&line).await?;
            out.flush().await?;
        }
        out.shutdown().await
    });
    let writer = LineWriter {
        tx: PollSender::new(tx.clone()),
        partial: Vec::new(),
        ready: VecDeque::new(),
    };
    (writer, RawLines { tx }, task)
}

fn closed() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "demo output writer has stopped")
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn raw_line_never_splits_a_message_written_in_pieces() {
        let (ours, mut theirs) = tokio::io::duplex(1 << 16);
        let (mut writer, raw, task) = spawn_line_output(ours);

        writer.write_all(b"{\"first\":").await.unwrap();
        raw.write_line("this line is not json-rpc").await.unwrap();
        writer.write_all(b"1}\n{\"second\":2}\npart").await.unwrap();
        writer.flush().await.unwrap();
        writer.shutdown().await.unwrap();
        drop((writer, raw));
        task.await.unwrap().unwrap();

        let mut got = String::new();
        theirs.read_to_string(&mut got).await.unwrap();
        assert_eq!(
            got,
            "this line is not json-rpc\n{\"first\":1}\n{\"second\":2}\npart"
        );
    }

    #[tokio::test]
    async fn writer_reports_broken_pipe_after_output_task_stops() {
        let (ours, theirs) = tokio::io::duplex(16);
        drop(theirs);
        let (mut writer, raw, task) = spawn_line_output(ours);
        raw.write_line("x").await.unwrap();
        assert!(task.await.unwrap().is_err());
        let err = writer.write_all(b"y\n").await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
        assert_eq!(
            raw.write_line("z").await.unwrap_err().kind(),
            io::ErrorKind::BrokenPipe
        );
    }
}
