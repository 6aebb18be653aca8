//! Windows: the access control list of the companion's named pipes (DESIGN §10).
//!
//! The problem: a named pipe created with default security grants read access to Everyone and
//! the anonymous account, so other users of the machine could open it. The strategy: create every
//! pipe instance with an explicit security descriptor, `D:P(A;;GA;;;OW)(A;;GA;;;SY)` — protected
//! from inheritance, full access for the pipe's owner (the user running the companion) and for
//! LocalSystem, nobody else. Remote clients are refused separately (`reject_remote_clients`).
//!
//! Compile-checked on Linux with the `x86_64-pc-windows-gnu` target; not yet run on Windows.

use std::io;

use windows::Win32::Foundation::{HLOCAL, LocalFree};
use windows::Win32::Security::Authorization::{
    ConvertStringSecurityDescriptorToSecurityDescriptorW, SDDL_REVISION_1,
};
use windows::Win32::Security::{PSECURITY_DESCRIPTOR, SECURITY_ATTRIBUTES};
use windows::core::w;

/// Owner and LocalSystem only, inheritance blocked.
const PIPE_SDDL_DESCRIPTION: &str = "D:P(A;;GA;;;OW)(A;;GA;;;SY)";

/// A security descriptor (and the attributes pointing at it) for one `CreateNamedPipe` call.
pub struct PipeSecurity {
    descriptor: PSECURITY_DESCRIPTOR,
    attributes: SECURITY_ATTRIBUTES,
}

// SAFETY: the descriptor is an immutable, heap-allocated blob owned by this value; nothing else
// holds the pointer, so moving it to another thread is sound.
unsafe impl Send for PipeSecurity {}

impl PipeSecurity {
    /// Builds the descriptor of the module docs.
    ///
    /// # Errors
    /// The OS error when the SDDL string cannot be converted.
    pub fn owner_only() -> io::Result<PipeSecurity> {
        let mut descriptor = PSECURITY_DESCRIPTOR::default();
        // SAFETY: the SDDL literal is a valid NUL-terminated wide string; `descriptor` receives a
        // LocalAlloc'd buffer that `Drop` frees.
        unsafe {
            ConvertStringSecurityDescriptorToSecurityDescriptorW(
                w!("D:P(A;;GA;;;OW)(A;;GA;;;SY)"),
                SDDL_REVISION_1,
                &mut descriptor,
                None,
            )
        }
        .map_err(|e| {
            io::Error::other(format!(
                "cannot build the pipe ACL {PIPE_SDDL_DESCRIPTION}: {e}"
            ))
        })?;
        let attributes = SECURITY_ATTRIBUTES {
            nLength: std::mem::size_of::<SECURITY_ATTRIBUTES>() as u32,
            lpSecurityDescriptor: descriptor.0,
            bInheritHandle: false.into(),
        };
        Ok(PipeSecurity {
            descriptor,
            attributes,
        })
    }

    /// The `SECURITY_ATTRIBUTES` pointer for `ServerOptions::create_with_security_attributes_raw`,
    /// valid while `self` lives.
    pub fn as_raw(&mut self) -> *mut std::ffi::c_void {
        (&mut self.attributes as *mut SECURITY_ATTRIBUTES).cast()
    }
}

impl Drop for PipeSecurity {
    fn drop(&mut self) {
        // SAFETY: the descriptor was allocated by ConvertStringSecurityDescriptorToSecurityDescriptorW
        // with LocalAlloc and is freed exactly once, here.
        unsafe {
            LocalFree(Some(HLOCAL(self.descriptor.0)));
        }
    }
}
