//! [`LineReader`]: newline-delimited input read with its length limit enforced while reading,
//! the one line reader for everything that comes from outside the process — an agent's
//! messages, a stdio server's stdout and stderr, control requests and answers, the bridge.
//!
//! Memory stays bounded whatever the peer sends: the reader never holds more than the limit
//! (plus the buffered reader's own buffer), so a peer that writes a gigabyte without a newline
//! costs what the limit allows, not a gigabyte. What happens to the over-long line is the
//! caller's choice ([`Overflow`]):
//!
//! | [`Overflow`] | the caller sees | the rest of the line | used by |
//! |---|---|---|---|
//! | `Skip` | [`Read::TooLong`] with nothing held | skipped through its newline | agent endpoint, stdio stdout, control API |
//! | `Cut` | [`Read::TooLong`] holding the first `max` bytes | skipped through its newline | stderr capture (the line is logged cut and marked) |
//! | `Pass` | [`Read::TooLong`] holding the first bytes, then [`Read::Piece`]s | handed on a buffer at a time | the bridge (which copies bytes unchanged) |
//!
//! Decision: our own reader rather than `tokio_util::codec::LinesCodec::new_with_max_length`
//! (or `AnyDelimiterCodec`) in a `FramedRead`. Reasons: a `FramedRead` stream yields `None`
//! after a decode error (tokio-rs/tokio#3976), so the line after an over-long one would read as
//! end of input unless every caller re-polls; `LinesCodec` yields `String`s while our callers
//! need the bytes (a line that is not UTF-8 gets its own answer, stderr is decoded lossily);
//! neither keeps the head of a cut line (stderr) nor hands an over-long line on in pieces
//! (bridge); and the agent endpoint's deadline runs from a line's first byte, which only the
//! reader sees. The rejected alternative would have needed a wrapper doing all of that around
//! the codec, which is about as long as this file.

use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncBufReadExt};
use tokio::time::Instant;

/// A buffer larger than this is given back once its line has been taken, so one large line
/// does not keep its memory for the small lines that follow. In bytes.
const KEEP_CAPACITY: usize = 256 * 1024;

/// What to do with a line longer than the limit (the module doc has the table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overflow {
    /// Report it once ([`Read::TooLong`], nothing held) and skip it through its newline.
    Skip,
    /// Report it once ([`Read::TooLong`]) holding its first `max` bytes, and skip the rest.
    Cut,
    /// Report it ([`Read::TooLong`]) holding the first bytes, then hand on the rest as
    /// [`Read::Piece`]s of at most one buffer each, the last one ending with the newline.
    Pass,
}

/// What one [`LineReader::next`] read; [`LineReader::line`] holds the bytes it names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Read {
    /// A whole line within the limit, its `\n` included.
    Line,
    /// The input ended inside a line: its bytes (no `\n`), within the limit.
    Last,
    /// A line over the limit began; what is held depends on the [`Overflow`].
    TooLong,
    /// More of an over-long line ([`Overflow::Pass`] only); it ends the line when it ends
    /// with `\n`.
    Piece,
    /// End of input (after any [`Read::Last`]).
    Eof,
    /// A line was begun and its newline had not come within the line deadline
    /// ([`LineReader::with_line_deadline`]); what came of it is held.
    Stalled,
}

/// Reads `R` one line at a time, never holding more than `max` bytes of a line (newline
/// excluded) plus `R`'s buffer.
///
/// Cancel-safe: bytes move from `R`'s buffer into the line and are consumed together, so a
/// `next` dropped mid-line loses nothing and the following `next` goes on with that line.
#[derive(Debug)]
pub struct LineReader<R> {
    read: R,
    /// The line being read (or what [`LineReader::next`] last returned).
    line: Vec<u8>,
    /// Longest line accepted, newline excluded, in bytes.
    max: usize,
    overflow: Overflow,
    /// Inside an over-long line that is being skipped or passed on.
    overlong: bool,
    /// `line` holds what the last `next` returned; cleared when the next one starts.
    returned: bool,
    /// How long a line may take from its first byte to its newline.
    line_deadline: Option<Duration>,
    /// When the line being read (or skipped) began.
    line_started: Option<Instant>,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    /// A reader of lines up to `max` bytes (newline excluded) from `read`; `overflow` says
    /// what becomes of longer ones.
    pub fn new(read: R, max: usize, overflow: Overflow) -> Self {
        LineReader {
            read,
            line: Vec::new(),
            max,
            overflow,
            overlong: false,
            returned: false,
            line_deadline: None,
            line_started: None,
        }
    }

    /// Reports [`Read::Stalled`] when a line's newline has not come `deadline` after its first
    /// byte (a line being skipped counts too).
    #[must_use]
    pub fn with_line_deadline(mut self, deadline: Duration) -> Self {
        self.line_deadline = Some(deadline);
        self
    }

    /// The bytes of what the last [`LineReader::next`] returned ([`Read`] says which).
    pub fn line(&self) -> &[u8] {
        &self.line
    }

    /// The bytes of what the last [`LineReader::next`] returned, moved out.
    pub fn take_line(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.line)
    }

    /// The limit, in bytes.
    pub fn max(&self) -> usize {
        self.max
    }

    /// The reader underneath, e.g. to see what it has buffered.
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.read
    }

    /// Reads until a line (or a piece of one, or the end) is ready; [`LineReader::line`] then
    /// holds its bytes.
    ///
    /// # Errors
    /// The I/O error of the reader underneath; the line being read is kept, so a caller that
    /// goes on reads on from where the error struck.
    pub async fn next(&mut self) -> std::io::Result<Read> {
        if self.returned {
            self.returned = false;
            if self.line.capacity() > KEEP_CAPACITY {
                self.line = Vec::new();
            } else {
                self.line.clear();
            }
        }
        let read = self.fill().await?;
        self.returned = true;
        Ok(read)
    }

    async fn fill(&mut self) -> std::io::Result<Read> {
        loop {
            let deadline = self
                .line_deadline
                .zip(self.line_started)
                .map(|(d, started)| started + d);
            let available = match deadline {
                Some(at) => match tokio::time::timeout_at(at, self.read.fill_buf()).await {
                    Ok(read) => read?,
                    Err(_) => return Ok(Read::Stalled),
                },
                None => self.read.fill_buf().await?,
            };
            if available.is_empty() {
                self.line_started = None;
                let ended_inside = !self.overlong && !self.line.is_empty();
                self.overlong = false;
                return Ok(if ended_inside { Read::Last } else { Read::Eof });
            }
            if self.line_started.is_none() {
                self.line_started = Some(Instant::now());
            }
            let newline = memchr::memchr(b'\n', available);
            let take = newline.map_or(available.len(), |i| i + 1);
            let outcome = if self.overlong {
                if newline.is_some() {
                    self.overlong = false;
                }
                match self.overflow {
                    Overflow::Pass => {
                        self.line.extend_from_slice(&available[..take]);
                        Some(Read::Piece)
                    }
                    Overflow::Skip | Overflow::Cut => None,
                }
            } else if self.line.len() + newline.unwrap_or(take) > self.max {
                // Over the limit, counted without the newline: a line that has more than `max`
                // bytes and no newline yet cannot end within the limit either.
                self.overlong = newline.is_none();
                match self.overflow {
                    Overflow::Skip => self.line = Vec::new(),
                    Overflow::Cut => {
                        let room = self.max - self.line.len();
                        self.line.extend_from_slice(&available[..room]);
                    }
                    Overflow::Pass => self.line.extend_from_slice(&available[..take]),
                }
                Some(Read::TooLong)
            } else {
                let spare = self.line.capacity() - self.line.len();
                if spare < take {
                    // Grow by a quarter of what is held (or one read), so a large line costs
                    // about 1.25 times its size rather than the up-to-2 of doubling.
                    let grow = take.max(self.line.len() / 4);
                    let room = (self.max + 1).saturating_sub(self.line.len());
                    self.line.reserve_exact(grow.min(room).max(take));
                }
                self.line.extend_from_slice(&available[..take]);
                newline.map(|_| Read::Line)
            };
            self.read.consume(take);
            if newline.is_some() {
                self.line_started = None;
            }
            if let Some(outcome) = outcome {
                return Ok(outcome);
            }
        }
    }
}

#[cfg(test)]
mod tests;
