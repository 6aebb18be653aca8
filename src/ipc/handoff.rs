//! Unix: `mcp-companion bridge` hands the agent's stdin and stdout to the companion instead of
//! copying them, so an agent that spawns the bridge talks to the companion with no third
//! process on the path (DESIGN §10).
//!
//! The exchange on a freshly connected agent socket, bytes only, no JSON:
//!
//! 1. bridge → companion: [`OFFER`] with two descriptors attached (`SCM_RIGHTS`): its stdin,
//!    then its stdout. Offered only when both are pipes or sockets ([`can_hand_over`]); a
//!    terminal or a file stays with the copying bridge.
//! 2. companion → bridge: [`ACK`] once it serves the two descriptors as a session. The bridge
//!    then closes its own copies (points fd 0 and 1 at `/dev/null`), so the agent sees its
//!    server's end of file exactly when the companion closes them. Anything else instead of
//!    [`ACK`] (a refusal line when the companion is at its connection limit, or an error line
//!    from a companion that does not know the offer) means the descriptors were not taken: the
//!    bridge copies as before, those bytes first.
//! 3. companion → bridge, when the session is over: [`ENDED_AFTER_INPUT`] when the agent's input
//!    had ended (the bridge exits 0), [`CLOSED`] when the companion ended it while the agent was
//!    still writing (it is stopping). End of file without a byte: the companion died. The open
//!    connection is the "session alive" signal both ways: when it closes on the bridge's side
//!    (the agent killed the bridge) the companion ends the session.
//!
//! The socket only accepts peers of our own UID ([`super::socket`]); [`first`] checks the peer's
//! credentials again before it keeps any descriptor, takes exactly two, marks them
//! close-on-exec as they arrive (the companion's servers must never inherit the agent's pipes),
//! and closes descriptors that come with anything but [`OFFER`]. (macOS has no
//! `MSG_CMSG_CLOEXEC`: there the flag is set right after `recvmsg`, which leaves a window in
//! which a server started at that instant could inherit them.) Later reads on the connection
//! are plain reads, which discard any descriptors sent after the offer.

use std::io;
use std::io::{IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, ready};

use rustix::net::{
    RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, ReturnFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags, recvmsg, sendmsg,
};
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, Interest, ReadBuf};
use tokio::net::UnixStream;

/// The bridge's first message, sent with its stdin and stdout attached. It starts with a NUL
/// byte, which no JSON text does, so it cannot be mistaken for an agent's first line.
pub const OFFER: &[u8] = b"\0mcp-companion stdio handoff 1\n";
/// The companion took the descriptors and serves them (ASCII ACK; never the start of JSON).
pub const ACK: u8 = 0x06;
/// The session ended after the agent's input had ended.
pub const ENDED_AFTER_INPUT: u8 = b'0';
/// The companion ended the session while the agent's input was still open.
pub const CLOSED: u8 = b'1';

/// How descriptors are received: close-on-exec from the start where the OS can.
#[cfg(not(target_vendor = "apple"))]
const RECV_FLAGS: RecvFlags = RecvFlags::CMSG_CLOEXEC;
#[cfg(target_vendor = "apple")]
const RECV_FLAGS: RecvFlags = RecvFlags::empty();

/// How the offer is sent: without SIGPIPE where the OS has a flag for it. macOS has no
/// `MSG_NOSIGNAL`; there the process's ignored SIGPIPE (Rust's default) turns a gone companion
/// into an `EPIPE` error instead.
#[cfg(not(target_vendor = "apple"))]
const SEND_FLAGS: SendFlags = SendFlags::NOSIGNAL;
#[cfg(target_vendor = "apple")]
const SEND_FLAGS: SendFlags = SendFlags::empty();

/// Whether this process's stdin and stdout are both pipes or sockets, the descriptors another
/// process can serve with readiness polling (a terminal or a regular file cannot be).
pub fn can_hand_over() -> bool {
    let pollable = |fd: BorrowedFd<'_>| {
        rustix::fs::fstat(fd).is_ok_and(|st| {
            matches!(
                rustix::fs::FileType::from_raw_mode(st.st_mode),
                rustix::fs::FileType::Fifo | rustix::fs::FileType::Socket
            )
        })
    };
    pollable(io::stdin().as_fd()) && pollable(io::stdout().as_fd())
}

/// Sends [`OFFER`] with this process's stdin and stdout attached.
///
/// # Errors
/// What `sendmsg` said (the companion went away).
pub async fn offer(stream: &UnixStream) -> io::Result<()> {
    let (stdin, stdout) = (io::stdin(), io::stdout());
    let fds = [stdin.as_fd(), stdout.as_fd()];
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(2))];
    let mut sent = 0;
    while sent < OFFER.len() {
        sent += stream
            .async_io(Interest::WRITABLE, || {
                let mut control = SendAncillaryBuffer::new(&mut space);
                // The descriptors go with the first byte only.
                if sent == 0 {
                    control.push(SendAncillaryMessage::ScmRights(&fds));
                }
                sendmsg(
                    stream,
                    &[IoSlice::new(&OFFER[sent..])],
                    &mut control,
                    SEND_FLAGS,
                )
                .map_err(io::Error::from)
            })
            .await?;
    }
    Ok(())
}

/// The companion's answer to [`offer`].
#[derive(Debug)]
pub enum Reply {
    /// It serves the descriptors; the bytes after [`ACK`] (perhaps the end status already).
    Taken(Vec<u8>),
    /// It did not take them; what it sent instead (empty: it closed the connection).
    Declined(Vec<u8>),
}

/// Reads the companion's answer to [`offer`].
///
/// # Errors
/// What reading the socket said.
pub async fn reply(stream: &mut UnixStream) -> io::Result<Reply> {
    let mut buf = vec![0u8; 4096];
    let n = stream.read(&mut buf).await?;
    buf.truncate(n);
    if buf.first() == Some(&ACK) {
        buf.remove(0);
        Ok(Reply::Taken(buf))
    } else {
        Ok(Reply::Declined(buf))
    }
}

/// Points this process's stdin and stdout at `/dev/null`, closing its copies of the agent's
/// pipes: from now on only the companion holds them.
///
/// # Errors
/// What opening `/dev/null` or `dup2` said.
pub fn release_stdio() -> io::Result<()> {
    let null = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")?;
    rustix::stdio::dup2_stdin(&null)?;
    rustix::stdio::dup2_stdout(&null)?;
    Ok(())
}

/// Waits for the session's end status after [`Reply::Taken`] (`seen`: bytes already read);
/// `None` when the connection closed without one (the companion died).
pub async fn session_end(stream: &mut UnixStream, seen: Vec<u8>) -> Option<u8> {
    if let Some(&status) = seen.first() {
        return Some(status);
    }
    let mut byte = [0u8; 1];
    match stream.read(&mut byte).await {
        Ok(1) => Some(byte[0]),
        _ => None,
    }
}

/// What an agent connection opened with.
#[derive(Debug)]
pub enum First {
    /// A bridge handed over its stdio.
    Handoff(Handed),
    /// An ordinary client: the bytes read so far (empty at end of file), to be read again.
    Bytes(Vec<u8>),
}

/// Reads the first bytes of an accepted connection, taking the descriptors of an [`OFFER`].
///
/// # Errors
/// What reading said; [`io::ErrorKind::PermissionDenied`] when descriptors came from a peer of
/// another UID; [`io::ErrorKind::InvalidData`] when they came with anything but [`OFFER`], or
/// not exactly two (all of them are closed).
pub async fn first(stream: &UnixStream) -> io::Result<First> {
    let mut buf = vec![0u8; 4096];
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(4))];
    let (n, fds, truncated) = stream
        .async_io(Interest::READABLE, || {
            let mut control = RecvAncillaryBuffer::new(&mut space);
            let got = recvmsg(
                stream,
                &mut [IoSliceMut::new(&mut buf)],
                &mut control,
                RECV_FLAGS,
            )?;
            let mut fds: Vec<OwnedFd> = Vec::new();
            for message in control.drain() {
                if let RecvAncillaryMessage::ScmRights(rights) = message {
                    fds.extend(rights);
                }
            }
            // macOS has no MSG_CMSG_CLOEXEC: the flag is set right after instead.
            #[cfg(target_vendor = "apple")]
            for fd in &fds {
                rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::CLOEXEC)?;
            }
            Ok((got.bytes, fds, got.flags.contains(ReturnFlags::CTRUNC)))
        })
        .await?;
    buf.truncate(n);
    if fds.is_empty() && !truncated {
        return Ok(First::Bytes(buf));
    }
    let me = rustix::process::geteuid().as_raw();
    match stream.peer_cred() {
        Ok(cred) if cred.uid() == me => {}
        _ => {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                "descriptors from a peer of another user",
            ));
        }
    }
    if !OFFER.starts_with(&buf) || buf.is_empty() || fds.len() != 2 || truncated {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "descriptors sent without the bridge's offer",
        ));
    }
    // The rest of the offer, when it came in pieces.
    let mut rest = vec![0u8; OFFER.len() - buf.len()];
    while !rest.is_empty() {
        let n = read_some(stream, &mut rest).await?;
        if n == 0 || !OFFER[buf.len()..].starts_with(&rest[..n]) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the bridge's offer was cut short",
            ));
        }
        buf.extend_from_slice(&rest[..n]);
        rest.truncate(OFFER.len() - buf.len());
    }
    let mut fds = fds.into_iter();
    let (Some(input), Some(output)) = (fds.next(), fds.next()) else {
        return Err(io::Error::from(io::ErrorKind::InvalidData));
    };
    Ok(First::Handoff(Handed::new(input, output)?))
}

/// Tells the bridge the descriptors are taken ([`ACK`]).
///
/// # Errors
/// What writing said (the bridge is gone).
pub async fn ack(stream: &UnixStream) -> io::Result<()> {
    write_byte(stream, ACK).await
}

/// Tells the bridge how the session ended ([`ENDED_AFTER_INPUT`] or [`CLOSED`]); a bridge that
/// is gone is not waited for.
pub async fn finish(stream: &UnixStream, input_ended: bool) {
    let status = if input_ended {
        ENDED_AFTER_INPUT
    } else {
        CLOSED
    };
    if let Err(e) = write_byte(stream, status).await {
        tracing::debug!(error = %e, "the bridge left before the session's end status");
    }
}

/// Returns when the bridge closed its end of the connection (it was killed or exited); it sends
/// nothing after the offer, so any readable byte counts the same.
pub async fn bridge_gone(stream: &UnixStream) {
    let mut byte = [0u8; 1];
    let _ = read_some(stream, &mut byte).await;
}

/// One read on a shared connection: the bytes read, 0 at end of file.
async fn read_some(stream: &UnixStream, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        stream.readable().await?;
        match stream.try_read(buf) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            r => return r,
        }
    }
}

/// Writes one byte on a shared connection.
async fn write_byte(stream: &UnixStream, byte: u8) -> io::Result<()> {
    loop {
        stream.writable().await?;
        match stream.try_write(&[byte]) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(_) => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
    }
}

/// The agent's stdin and stdout as handed over, non-blocking and polled by the runtime.
#[derive(Debug)]
pub struct Handed {
    /// The agent's stdin: read from.
    pub input: FdReader,
    /// The agent's stdout: written to.
    pub output: FdWriter,
}

impl Handed {
    fn new(input: OwnedFd, output: OwnedFd) -> io::Result<Self> {
        let pollable = |fd: OwnedFd| {
            rustix::io::ioctl_fionbio(&fd, true)?;
            // SAFETY: the `OwnedFd` keeps its descriptor open, unchanged, until the `AsyncFd`
            // that owns it is dropped.
            unsafe { AsyncFd::register(fd) }.map_err(io::Error::from)
        };
        Ok(Handed {
            input: FdReader {
                fd: pollable(input)?,
                eof: Arc::default(),
            },
            output: FdWriter {
                fd: pollable(output)?,
            },
        })
    }
}

/// A handed-over stdin; remembers whether it reached end of file.
#[derive(Debug)]
pub struct FdReader {
    fd: AsyncFd<OwnedFd>,
    eof: Arc<AtomicBool>,
}

impl FdReader {
    /// Becomes true when a read returns end of file.
    pub fn eof(&self) -> Arc<AtomicBool> {
        self.eof.clone()
    }
}

impl AsyncRead for FdReader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            let mut guard = ready!(this.fd.poll_read_ready(cx))?;
            let unfilled = buf.initialize_unfilled();
            match guard.try_io(|fd| rustix::io::read(fd, &mut *unfilled).map_err(io::Error::from)) {
                Ok(Ok(n)) => {
                    if n == 0 {
                        this.eof.store(true, Ordering::SeqCst);
                    }
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(e)) => return Poll::Ready(Err(e)),
                Err(_would_block) => {}
            }
        }
    }
}

/// A handed-over stdout.
#[derive(Debug)]
pub struct FdWriter {
    fd: AsyncFd<OwnedFd>,
}

impl AsFd for FdWriter {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.get_ref().as_fd()
    }
}

impl AsyncWrite for FdWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            let mut guard = ready!(self.fd.poll_write_ready(cx))?;
            match guard.try_io(|fd| rustix::io::write(fd, buf).map_err(io::Error::from)) {
                Ok(r) => return Poll::Ready(r),
                Err(_would_block) => {}
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    /// A pipe has no half-close: the agent sees end of file when the descriptor is dropped.
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
