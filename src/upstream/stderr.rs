//! Per-server stderr capture: every line a child writes to stderr goes to `tracing` (attributed
//! to the server's span) and into a bounded ring buffer that `status`, `logs` and the desktop
//! window read (DESIGN §7).
//!
//! Draining never stops while the pipe is open, so a chatty server can never block on a full
//! stderr pipe; and a line is cut while it is read, so a server that writes without newlines
//! costs [`MAX_LINE_BYTES`], not what it wrote.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncRead, BufReader};
use tokio::sync::watch;
use tracing::Instrument;

use crate::io::{LineReader, Overflow, Read};

/// Lines kept per server.
pub const LOG_CAPACITY: usize = 1000;
/// Longest line kept, in bytes; longer lines are cut (at a char boundary) and marked with `…`,
/// and the rest of such a line is read and dropped.
pub const MAX_LINE_BYTES: usize = 8 * 1024;

/// A cheap, cloneable handle on one server's last [`LOG_CAPACITY`] stderr lines.
#[derive(Clone, Debug)]
pub struct LogRing {
    inner: Arc<Mutex<Ring>>,
    /// The count of lines ever pushed, for followers to wait on ([`LogRing::subscribe`]).
    pushed: Arc<watch::Sender<u64>>,
    /// How many drains ([`spawn_drain`]) still read into this ring ([`LogRing::drained`]).
    drains: Arc<watch::Sender<usize>>,
}

impl Default for LogRing {
    fn default() -> LogRing {
        LogRing {
            inner: Arc::default(),
            pushed: Arc::new(watch::Sender::new(0)),
            drains: Arc::new(watch::Sender::new(0)),
        }
    }
}

/// Counts one drain for as long as it lives, however its task ends.
struct Draining(Arc<watch::Sender<usize>>);

impl Draining {
    fn new(drains: &Arc<watch::Sender<usize>>) -> Draining {
        drains.send_modify(|n| *n += 1);
        Draining(drains.clone())
    }
}

impl Drop for Draining {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

#[derive(Debug, Default)]
struct Ring {
    lines: VecDeque<String>,
    /// Total lines ever pushed; lets followers ask for "everything after n".
    pushed: u64,
}

impl LogRing {
    /// An empty ring.
    pub fn new() -> LogRing {
        LogRing::default()
    }

    /// Appends one line, dropping the oldest beyond [`LOG_CAPACITY`].
    pub fn push(&self, line: String) {
        let mut ring = self.lock();
        if ring.lines.len() == LOG_CAPACITY {
            ring.lines.pop_front();
        }
        ring.lines.push_back(line);
        ring.pushed += 1;
        let pushed = ring.pushed;
        drop(ring);
        self.pushed.send_replace(pushed);
    }

    /// Waits until every drain into this ring has read its pipe to the end — an exited
    /// process's last lines are in the ring then — or `within` has passed (a process that left
    /// a descendant holding its stderr open never ends its drain). Returns whether they did.
    pub async fn drained(&self, within: std::time::Duration) -> bool {
        let mut drains = self.drains.subscribe();
        tokio::time::timeout(within, drains.wait_for(|n| *n == 0))
            .await
            .is_ok_and(|r| r.is_ok())
    }

    /// A receiver that is marked changed whenever lines are pushed (its value: how many were
    /// ever pushed, as [`LogRing::mark`]). Followers wait on it instead of polling.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.pushed.subscribe()
    }

    /// The last `n` lines, oldest first.
    pub fn tail(&self, n: usize) -> Vec<String> {
        let ring = self.lock();
        let skip = ring.lines.len().saturating_sub(n);
        ring.lines.iter().skip(skip).cloned().collect()
    }

    /// The last `n` lines of the current process: those after the last
    /// [`super::process_marker`], oldest first (the marker itself and earlier processes'
    /// lines are not quoted in its exit reason).
    pub fn tail_of_last_process(&self, n: usize) -> Vec<String> {
        let ring = self.lock();
        let start = ring
            .lines
            .iter()
            .rposition(|l| super::is_process_marker(l))
            .map_or(0, |at| at + 1);
        let skip = start.max(ring.lines.len().saturating_sub(n));
        ring.lines.iter().skip(skip).cloned().collect()
    }

    /// Lines pushed after the first `seen` ones (as far as still held), and the new total.
    pub fn since(&self, seen: u64) -> (Vec<String>, u64) {
        let ring = self.lock();
        let held_from = ring.pushed - ring.lines.len() as u64;
        let skip = seen.saturating_sub(held_from) as usize;
        (ring.lines.iter().skip(skip).cloned().collect(), ring.pushed)
    }

    /// A position in the stream of lines: how many were ever pushed.
    pub fn mark(&self) -> u64 {
        self.lock().pushed
    }

    /// The last `n` lines pushed after `mark` (as far as still held), oldest first: the lines of
    /// one start attempt, without those of earlier attempts.
    pub fn tail_since(&self, mark: u64, n: usize) -> Vec<String> {
        let (lines, _) = self.since(mark);
        let skip = lines.len().saturating_sub(n);
        lines.into_iter().skip(skip).collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Ring> {
        // A panic while holding this lock cannot leave the ring inconsistent (push is two
        // infallible steps), so a poisoned lock is still safe to use.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Spawns the task that drains `stderr` line by line into `ring` and `tracing` until end of
/// file. The task runs inside `span` so every line names its server.
pub fn spawn_drain<R>(stderr: R, ring: LogRing, span: tracing::Span) -> tokio::task::JoinHandle<()>
where
    R: AsyncRead + Send + Unpin + 'static,
{
    let draining = Draining::new(&ring.drains);
    tokio::spawn(
        async move {
            let _draining = draining;
            let mut reader = LineReader::new(BufReader::new(stderr), MAX_LINE_BYTES, Overflow::Cut);
            loop {
                let cut = match reader.next().await {
                    Ok(Read::Eof) => break,
                    Ok(Read::Line | Read::Last) => false,
                    Ok(Read::TooLong) => true,
                    // Neither pieces (`Overflow::Cut`) nor stalls (no deadline) come here.
                    Ok(Read::Piece | Read::Stalled) => continue,
                    Err(e) => {
                        tracing::debug!(error = %e, "stderr read failed");
                        break;
                    }
                };
                // A server echoing its environment must not put its API key into `logs` or
                // the errors that quote stderr.
                let line = crate::net::scrub_known(&clean_line(reader.line(), cut));
                tracing::info!(target: "mcp_companion::server_stderr", "{line}");
                ring.push(line);
            }
        }
        .instrument(span),
    )
}

/// Lossy UTF-8, trailing CR/LF removed, cut at [`MAX_LINE_BYTES`]; marked with `…` when cut
/// here or already `cut` by the reader.
fn clean_line(raw: &[u8], cut: bool) -> String {
    let trimmed = raw
        .strip_suffix(b"\n")
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .unwrap_or(raw);
    let mut line = String::from_utf8_lossy(trimmed).into_owned();
    if line.len() > MAX_LINE_BYTES {
        let mut at = MAX_LINE_BYTES;
        while !line.is_char_boundary(at) {
            at -= 1;
        }
        line.truncate(at);
        line.push('…');
    } else if cut {
        line.push('…');
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn drained_waits_for_the_last_line_of_a_closed_pipe() {
        use tokio::io::AsyncWriteExt;
        let ring = LogRing::new();
        assert!(
            ring.drained(std::time::Duration::ZERO).await,
            "no drain yet"
        );
        let (mut writer, reader) = tokio::io::duplex(64);
        let _drain = spawn_drain(reader, ring.clone(), tracing::Span::none());
        writer.write_all(b"last words\n").await.unwrap();
        assert!(
            !ring.drained(std::time::Duration::from_millis(50)).await,
            "the pipe is still open"
        );
        drop(writer);
        assert!(ring.drained(std::time::Duration::from_secs(10)).await);
        assert_eq!(ring.tail(1), vec!["last words".to_owned()]);
    }

    #[test]
    fn ring_keeps_the_last_capacity_lines() {
        let ring = LogRing::new();
        for i in 0..(LOG_CAPACITY + 5) {
            ring.push(format!("line {i}"));
        }
        let all = ring.tail(usize::MAX);
        assert_eq!(all.len(), LOG_CAPACITY);
        assert_eq!(all[0], "line 5");
        assert_eq!(
            ring.tail(2),
            vec![
                format!("line {}", LOG_CAPACITY + 3),
                format!("line {}", LOG_CAPACITY + 4)
            ]
        );
    }

    #[test]
    fn since_returns_only_new_lines() {
        let ring = LogRing::new();
        ring.push("a".into());
        let (_, seen) = ring.since(0);
        ring.push("b".into());
        ring.push("c".into());
        let (new, total) = ring.since(seen);
        assert_eq!(new, vec!["b", "c"]);
        assert_eq!(total, 3);
    }

    #[test]
    fn the_last_process_tail_skips_its_marker_and_earlier_processes() {
        let ring = LogRing::new();
        ring.push("old".into());
        ring.push(crate::upstream::process_marker(Some(7)));
        assert!(ring.tail_of_last_process(3).is_empty());
        ring.push("a".into());
        ring.push("b".into());
        assert_eq!(ring.tail_of_last_process(3), vec!["a", "b"]);
        assert_eq!(ring.tail_of_last_process(1), vec!["b"]);
        ring.push(crate::upstream::process_marker(None));
        ring.push("c".into());
        assert_eq!(ring.tail_of_last_process(3), vec!["c"]);
    }

    #[test]
    fn tail_since_skips_earlier_attempts() {
        let ring = LogRing::new();
        ring.push("attempt 1: boom".into());
        let mark = ring.mark();
        ring.push("attempt 2: boom".into());
        ring.push("attempt 2: bye".into());
        assert_eq!(
            ring.tail_since(mark, 5),
            vec!["attempt 2: boom", "attempt 2: bye"]
        );
        assert_eq!(ring.tail_since(mark, 1), vec!["attempt 2: bye"]);
    }

    #[test]
    fn lines_are_cleaned() {
        assert_eq!(clean_line(b"hello\r\n", false), "hello");
        assert_eq!(clean_line(b"no newline", false), "no newline");
        assert_eq!(clean_line(b"bad \xff byte\n", false), "bad \u{fffd} byte");
        let long = vec![b'x'; MAX_LINE_BYTES + 10];
        assert_eq!(
            clean_line(&long, false).len(),
            MAX_LINE_BYTES + '…'.len_utf8()
        );
        assert_eq!(clean_line(b"head", true), "head…");
    }

    #[tokio::test]
    async fn drain_reads_every_line_until_eof() {
        let ring = LogRing::new();
        let data: &[u8] = b"one\ntwo\nthree";
        spawn_drain(data, ring.clone(), tracing::Span::none())
            .await
            .expect("drain task");
        assert_eq!(ring.tail(10), vec!["one", "two", "three"]);
    }

    #[tokio::test]
    async fn a_line_too_long_is_kept_cut_and_marked_and_the_next_one_whole() {
        let ring = LogRing::new();
        let mut data = vec![b'y'; MAX_LINE_BYTES * 4];
        data.extend_from_slice(b"\nnext\n");
        spawn_drain(
            std::io::Cursor::new(data),
            ring.clone(),
            tracing::Span::none(),
        )
        .await
        .expect("drain task");
        let lines = ring.tail(10);
        assert_eq!(lines.len(), 2, "{}", lines.len());
        assert_eq!(lines[0], format!("{}…", "y".repeat(MAX_LINE_BYTES)));
        assert_eq!(lines[1], "next");
    }
}
