//! The process at the other end of an accepted agent connection, as the kernel reports it:
//! `SO_PEERCRED` (Linux) / `LOCAL_PEERPID` and `getpeereid` (macOS) on the Unix socket, the named pipe's client
//! process id (`GetNamedPipeClientProcessId`) on Windows. Its user and executable are then read
//! from the OS ([`crate::process::identity`]); nothing is taken from what the peer says.

use crate::ipc::socket::ServerStream;
use crate::process::identity::ProcessIdentity;

/// The peer process of `stream`, or `None` when the OS does not give its pid (tokio reads it
/// with `SO_PEERCRED` on Linux and `LOCAL_PEERPID` on macOS).
#[cfg(unix)]
pub fn peer_of(stream: &ServerStream) -> Option<ProcessIdentity> {
    let cred = stream.peer_cred().ok()?;
    let pid = u32::try_from(cred.pid()?).ok()?;
    Some(ProcessIdentity::of(pid, Some(cred.uid())))
}

/// The peer process of `stream`: the pipe's client process id.
#[cfg(windows)]
pub fn peer_of(stream: &ServerStream) -> Option<ProcessIdentity> {
    use std::os::windows::io::AsRawHandle;
    use windows::Win32::Foundation::HANDLE;
    use windows::Win32::System::Pipes::GetNamedPipeClientProcessId;
    let mut pid = 0u32;
    // SAFETY: the handle is the open pipe instance `stream` owns for the whole call.
    unsafe { GetNamedPipeClientProcessId(HANDLE(stream.as_raw_handle()), &mut pid) }.ok()?;
    Some(ProcessIdentity::of(pid, None))
}
