//! Which process a pid is: its user and executable, and (Linux) its parent — what `agents`
//! shows of the process at the other end of an agent connection. The pid itself comes from
//! the kernel (`SO_PEERCRED` / `LOCAL_PEERPID`, or the named pipe's client process id; see
//! [`crate::ipc::peer`]); everything here is read from the OS, never from what the process says.

use std::path::PathBuf;

/// One local process, as `agents` shows it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ProcessIdentity {
    /// Its process id.
    pub pid: u32,
    /// Its user id (Unix; absent on Windows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<u32>,
    /// Its executable (Linux: `/proc/PID/exe`; Windows: the process image name); absent when
    /// the OS would not say (the process has gone, or this platform has no lookup here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exe: Option<PathBuf>,
}

impl ProcessIdentity {
    /// The process `pid` (run by `uid`, when known), with its executable looked up now.
    pub fn of(pid: u32, uid: Option<u32>) -> ProcessIdentity {
        ProcessIdentity {
            pid,
            uid,
            exe: executable(pid),
        }
    }
}

/// The executable of process `pid`, or `None` when it cannot be read.
#[cfg(target_os = "linux")]
pub fn executable(pid: u32) -> Option<PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/exe")).ok()
}

/// The executable of process `pid`, or `None` when it cannot be read.
#[cfg(windows)]
pub fn executable(pid: u32) -> Option<PathBuf> {
    use windows::Win32::Foundation::CloseHandle;
    use windows::Win32::System::Threading::{
        OpenProcess, PROCESS_NAME_WIN32, PROCESS_QUERY_LIMITED_INFORMATION,
        QueryFullProcessImageNameW,
    };
    // SAFETY: a query-only handle, closed below; the buffer outlives the call and `len` is
    // its length in UTF-16 units.
    unsafe {
        let handle = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, false, pid).ok()?;
        let mut buf = [0u16; 1024];
        let mut len = buf.len() as u32;
        let got = QueryFullProcessImageNameW(
            handle,
            PROCESS_NAME_WIN32,
            windows::core::PWSTR(buf.as_mut_ptr()),
            &mut len,
        );
        let _ = CloseHandle(handle);
        got.ok()?;
        let len = usize::try_from(len).ok()?.min(buf.len());
        Some(PathBuf::from(String::from_utf16_lossy(&buf[..len])))
    }
}

/// The executable of process `pid`: not looked up on this platform.
#[cfg(not(any(target_os = "linux", windows)))]
pub fn executable(_pid: u32) -> Option<PathBuf> {
    None
}

/// The parent of process `pid` (Linux: field 4 of `/proc/PID/stat`), or `None` when it cannot
/// be read or this platform has no lookup here.
pub fn parent(pid: u32) -> Option<u32> {
    #[cfg(target_os = "linux")]
    {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        parent_in_stat(&stat)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        None
    }
}

/// The parent pid in a `/proc/PID/stat` line: `pid (comm) state ppid …`, where `comm` may hold
/// spaces and parentheses, so the fields are counted after its last `)`.
#[cfg_attr(
    not(target_os = "linux"),
    allow(dead_code, reason = "read on Linux only")
)]
fn parent_in_stat(stat: &str) -> Option<u32> {
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(1)?.parse().ok()
}

/// Whether process `pid` runs the same executable as this one and has `bridge` among its
/// arguments (Linux: `/proc/PID/cmdline`): a copying `mcp-companion bridge`, whose agent
/// is its parent.
pub fn is_our_bridge(pid: u32) -> bool {
    #[cfg(target_os = "linux")]
    {
        let ours = std::env::current_exe().ok();
        if ours.is_none() || executable(pid) != ours {
            return false;
        }
        std::fs::read(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|cmd| cmd.split(|b| *b == 0).skip(1).any(|a| a == b"bridge"))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parent_is_read_after_the_last_parenthesis_of_the_command_name() {
        assert_eq!(parent_in_stat("42 (bash) S 7 42 42 0"), Some(7));
        assert_eq!(parent_in_stat("42 (a) b) (c) R 99 1 1"), Some(99));
        assert_eq!(parent_in_stat("42 (x y) S"), None);
        assert_eq!(parent_in_stat("garbage"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_has_its_executable_and_parent() {
        let me = std::process::id();
        let id = ProcessIdentity::of(me, None);
        assert_eq!(id.exe, std::env::current_exe().ok());
        assert_eq!(parent(me), Some(std::os::unix::process::parent_id()));
        assert!(!is_our_bridge(me), "a test binary is no bridge");
    }
}
