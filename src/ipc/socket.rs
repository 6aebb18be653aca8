//! The local socket the endpoint and the control API listen on (DESIGN §10).
//!
//! Unix: a filesystem socket (never the Linux abstract namespace, which has no permissions) in a
//! directory of mode 0700, the socket itself 0600, and every accepted peer's UID checked against
//! ours (`SO_PEERCRED` / `getpeereid`). Windows: a named pipe that rejects remote clients.
//!
//! The directory is checked with `lstat` and opened with `O_NOFOLLOW` before anything is changed
//! ([`prepare_socket_dir`]): a symbolic link there (to another user's directory, or to a shared
//! sticky one like `/tmp`) is refused; the companion's own directory has its mode tightened with
//! `fchmod` on the opened directory itself, while a directory the person chose with `--socket`
//! is never changed ([`super::paths::SocketDir`]); a stale path is removed only when it is a
//! socket.
//!
//! | side | Unix | Windows |
//! |---|---|---|
//! | [`LocalListener::bind`] / [`LocalListener::accept`] | `UnixListener` + peer UID check | `NamedPipeServer` instances |
//! | [`connect`] | `UnixStream` | `NamedPipeClient` |

use std::io;
use std::path::{Path, PathBuf};

/// Errors setting up the local endpoint.
#[derive(Debug, thiserror::Error)]
pub enum SocketError {
    /// The socket directory could not be created or secured.
    #[error("cannot prepare socket directory {path}: {source}")]
    Directory {
        /// The directory.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: io::Error,
    },
    /// The socket directory exists but belongs to someone else or is open to others.
    #[error(
        "socket directory {path} is not private to this user (owner uid {owner}, mode {mode:04o})"
    )]
    NotPrivate {
        /// The directory.
        path: PathBuf,
        /// Its owner.
        owner: u32,
        /// Its permission bits.
        mode: u32,
    },
    /// A socket directory the person chose lets other users replace the files in it (group or
    /// other write permission without the sticky bit); it is not changed, only refused.
    #[error(
        "socket directory {path} (mode {mode:04o}) lets other users replace the sockets in it; \
         choose a directory only you can write to (or a sticky one such as /tmp)"
    )]
    SharedDirectory {
        /// The directory.
        path: PathBuf,
        /// Its permission bits, sticky bit included.
        mode: u32,
    },
    /// The path is too long for a Unix socket address (about 107 bytes).
    #[error("socket path {path} is {len} bytes; Unix sockets allow at most {max}")]
    PathTooLong {
        /// The path.
        path: PathBuf,
        /// Its length in bytes.
        len: usize,
        /// The limit in bytes.
        max: usize,
    },
    /// The socket directory is a symbolic link: following it could chmod, lock or listen in a
    /// directory someone else controls, so it is refused before anything is changed.
    #[error("socket directory {path} is a symbolic link; refusing to use it (remove the link)")]
    Symlink {
        /// The directory (the link itself).
        path: PathBuf,
    },
    /// Something other than a directory sits where the socket directory should be.
    #[error("socket directory {path} exists but is not a directory")]
    NotADirectory {
        /// The path.
        path: PathBuf,
    },
    /// A file that is not a socket sits at the socket path; it is never deleted.
    #[error("{path} exists and is not a socket; refusing to replace it (move it away)")]
    NotASocket {
        /// The socket path.
        path: PathBuf,
    },
    /// Binding the socket failed.
    #[error("cannot listen on {path}: {source}")]
    Bind {
        /// The socket path or pipe name.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: io::Error,
    },
}

#[cfg(unix)]
pub use super::private_dir::{prepare_private_dir, prepare_socket_dir};
#[cfg(unix)]
pub use unix::{ClientStream, LocalListener, ServerStream, connect};
#[cfg(windows)]
pub use windows::{ClientStream, LocalListener, ServerStream, connect};

/// Whether something answers on `path` right now.
pub async fn is_listening(path: &Path) -> bool {
    connect(path).await.is_ok()
}

#[cfg(unix)]
mod unix {
    use super::super::paths::SocketDir;
    use super::super::private_dir::{prepare_socket_dir, remove_stale_socket};
    use super::SocketError;
    use std::io;
    use std::os::unix::fs::PermissionsExt;
    use std::path::{Path, PathBuf};

    /// Longest socket path `sockaddr_un` holds, minus the terminating NUL.
    const MAX_PATH_BYTES: usize = 107;

    /// A stream accepted by the listener.
    pub type ServerStream = tokio::net::UnixStream;
    /// A stream opened by [`connect`].
    pub type ClientStream = tokio::net::UnixStream;

    /// A listening Unix socket that accepts only peers running as the current user.
    ///
    /// Dropping it removes the socket file.
    #[derive(Debug)]
    pub struct LocalListener {
        inner: tokio::net::UnixListener,
        path: PathBuf,
    }

    impl LocalListener {
        /// Prepares the directory as `socket_dir` says ([`prepare_socket_dir`]), removes a stale
        /// socket file, binds, and sets mode 0600.
        ///
        /// The caller must already hold the single-instance lock: a live socket at `path` is
        /// replaced.
        ///
        /// # Errors
        /// [`SocketError`] naming the path when the directory is not private or binding fails.
        pub fn bind(path: &Path, socket_dir: SocketDir) -> Result<LocalListener, SocketError> {
            let len = path.as_os_str().len();
            if len > MAX_PATH_BYTES {
                return Err(SocketError::PathTooLong {
                    path: path.to_path_buf(),
                    len,
                    max: MAX_PATH_BYTES,
                });
            }
            if let Some(dir) = path.parent() {
                prepare_socket_dir(dir, socket_dir)?;
            }
            remove_stale_socket(path)?;
            let bind_err = |source| SocketError::Bind {
                path: path.to_path_buf(),
                source,
            };
            let inner = tokio::net::UnixListener::bind(path).map_err(bind_err)?;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
                .map_err(bind_err)?;
            Ok(LocalListener {
                inner,
                path: path.to_path_buf(),
            })
        }

        /// Waits for the next connection from a process of the same user.
        ///
        /// Connections from other UIDs are closed at once and logged; they never see a byte.
        pub async fn accept(&self) -> io::Result<ServerStream> {
            let me = rustix::process::geteuid().as_raw();
            loop {
                let (stream, _) = self.inner.accept().await?;
                match stream.peer_cred() {
                    Ok(cred) if cred.uid() == me => return Ok(stream),
                    Ok(cred) => {
                        tracing::warn!(
                            peer_uid = cred.uid(),
                            "refused a connection from another user"
                        );
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "refused a connection: peer credentials unavailable")
                    }
                }
            }
        }

        /// The socket path.
        pub fn path(&self) -> &Path {
            &self.path
        }
    }

    impl Drop for LocalListener {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.path);
        }
    }

    /// Connects to the socket at `path`.
    pub async fn connect(path: &Path) -> io::Result<ClientStream> {
        tokio::net::UnixStream::connect(path).await
    }
}

#[cfg(windows)]
mod windows {
    use super::SocketError;
    use std::io;
    use std::path::{Path, PathBuf};
    use tokio::net::windows::named_pipe::{ClientOptions, NamedPipeServer, ServerOptions};

    /// A stream accepted by the listener.
    pub type ServerStream = NamedPipeServer;
    /// A stream opened by [`connect`].
    pub type ClientStream = tokio::net::windows::named_pipe::NamedPipeClient;

    /// A named pipe endpoint; one server instance waits for the next client at all times.
    #[derive(Debug)]
    pub struct LocalListener {
        path: PathBuf,
        next: tokio::sync::Mutex<NamedPipeServer>,
    }

    impl LocalListener {
        /// Creates the first pipe instance, usable by the current user only; fails if another
        /// process already owns the name. Pipes have no directory: `_socket_dir` is unused.
        pub fn bind(
            path: &Path,
            _socket_dir: super::super::paths::SocketDir,
        ) -> Result<LocalListener, SocketError> {
            let server = create(path, true).map_err(|source| SocketError::Bind {
                path: path.to_path_buf(),
                source,
            })?;
            Ok(LocalListener {
                path: path.to_path_buf(),
                next: tokio::sync::Mutex::new(server),
            })
        }

        /// Waits for the next client and leaves a fresh instance listening.
        pub async fn accept(&self) -> io::Result<ServerStream> {
            let mut next = self.next.lock().await;
            next.connect().await?;
            let fresh = create(&self.path, false)?;
            Ok(std::mem::replace(&mut *next, fresh))
        }

        /// The pipe name.
        pub fn path(&self) -> &Path {
            &self.path
        }
    }

    /// Connects to the pipe at `path`.
    pub async fn connect(path: &Path) -> io::Result<ClientStream> {
        ClientOptions::new().open(path)
    }

    /// One pipe instance with the owner-only ACL of [`super::super::pipe_acl`].
    fn create(path: &Path, first: bool) -> io::Result<NamedPipeServer> {
        let mut security = super::super::pipe_acl::PipeSecurity::owner_only()?;
        // SAFETY: the attributes and the descriptor they point to outlive the call.
        unsafe {
            ServerOptions::new()
                .first_pipe_instance(first)
                .reject_remote_clients(true)
                .create_with_security_attributes_raw(path, security.as_raw())
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::ipc::paths::SocketDir;
    use std::os::unix::fs::PermissionsExt;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn socket_is_private_and_accepts_our_own_user() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("run/mcp.sock");
        let listener = LocalListener::bind(&path, SocketDir::Own).expect("bind");
        let dir_mode = std::fs::metadata(tmp.path().join("run"))
            .expect("dir")
            .permissions()
            .mode();
        let sock_mode = std::fs::metadata(&path).expect("sock").permissions().mode();
        assert_eq!(dir_mode & 0o777, 0o700);
        assert_eq!(sock_mode & 0o777, 0o600);

        let client = tokio::spawn({
            let path = path.clone();
            async move {
                let mut c = connect(&path).await.expect("connect");
                c.write_all(b"ping\n").await.expect("write");
            }
        });
        let mut s = listener.accept().await.expect("accept");
        let mut buf = [0u8; 5];
        s.read_exact(&mut buf).await.expect("read");
        assert_eq!(&buf, b"ping\n");
        client.await.expect("client task");

        drop(listener);
        assert!(!path.exists(), "socket file removed on drop");
        assert!(!is_listening(&path).await);
    }

    #[test]
    fn overlong_path_is_a_clear_error() {
        let long = PathBuf::from(format!("/tmp/{}/mcp.sock", "x".repeat(120)));
        let err = LocalListener::bind(&long, SocketDir::Own).expect_err("too long");
        assert!(
            err.to_string().contains("Unix sockets allow at most 107"),
            "{err}"
        );
    }
}
