//! Reading a `.mcpb` file: the bytes, the optional signature block at its end, the zip
//! archive's entries (checked before anything is written), and unpacking.
//!
//! Checked for every entry, from the central directory and then by decompressing it once
//! into nothing ([`Archive::open`]): a safe relative name ([`super::paths::relative`]), no
//! symbolic link or other special file, not encrypted, stored or deflated, at most
//! [`Limits::file_bytes`] and a compression ratio of at most [`Limits::ratio`], the sum at
//! most [`Limits::total_bytes`], at most [`Limits::entries`] entries, no name twice (exactly or
//! once normalised), no file that is also another entry's parent directory, and the
//! bytes it really inflates to equal to what its header declares (a lying header is refused).
//! Only then does [`Archive::unpack`] create the directory.

use std::collections::BTreeSet;
use std::io::{Cursor, Read, Write};
use std::path::Path;
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use super::BundleError;
use super::paths;
use super::signature::{self, Signer};

/// Bounds on what a bundle may hold.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// The `.mcpb` file itself, in bytes.
    pub archive_bytes: u64,
    /// One unpacked file, in bytes.
    pub file_bytes: u64,
    /// All unpacked files together, in bytes.
    pub total_bytes: u64,
    /// Entries (files and directories).
    pub entries: usize,
    /// Unpacked size ÷ compressed size of one entry larger than [`Limits::RATIO_FLOOR`].
    pub ratio: u64,
}

impl Limits {
    /// Entries smaller than this (bytes) are not held to the ratio: small text compresses well.
    pub const RATIO_FLOOR: u64 = 1 << 20;
}

impl Default for Limits {
    /// 256 MiB archive, 256 MiB per file, 1 GiB in all, 50 000 entries, ratio 200 (a Node
    /// bundle's `node_modules` holds thousands of files; text deflates about 3 to 10 times).
    fn default() -> Limits {
        Limits {
            archive_bytes: 256 << 20,
            file_bytes: 256 << 20,
            total_bytes: 1 << 30,
            entries: 50_000,
            ratio: 200,
        }
    }
}

/// The marker that starts the signature block `mcpb sign` appends after the zip data.
const SIG_HEADER: &[u8] = b"MCPB_SIG_V1";
/// The marker that ends it.
const SIG_FOOTER: &[u8] = b"MCPB_SIG_END";

/// A bundle read and checked, nothing written yet.
pub struct Archive {
    bytes: Vec<u8>,
    /// Where the zip data ends (before a signature block).
    zip_len: usize,
    /// SHA-256 of the whole file, lower-case hex.
    pub sha256: String,
    /// The signer, when a signature block is appended (it verified: a bundle whose signature
    /// does not is refused).
    pub signature: Option<Signer>,
    /// Every file entry's safe relative name.
    pub files: BTreeSet<String>,
    /// The bytes of `manifest.json`.
    pub manifest: Vec<u8>,
    /// Unpacked bytes in all.
    pub total_bytes: u64,
}

fn archive_error(reason: impl std::fmt::Display) -> BundleError {
    BundleError::Archive {
        reason: reason.to_string(),
    }
}

fn entry_error(name: &str, reason: impl std::fmt::Display) -> BundleError {
    BundleError::Entry {
        name: super::manifest::quote(name),
        reason: reason.to_string(),
    }
}

/// Unix file type bits of a zip entry's mode.
const S_IFMT: u32 = 0o170_000;
const S_IFREG: u32 = 0o100_000;
const S_IFDIR: u32 = 0o040_000;

impl Archive {
    /// Reads `path` and checks every entry (see the module doc).
    ///
    /// # Errors
    /// [`BundleError::Io`], [`BundleError::TooLarge`], [`BundleError::Archive`],
    /// [`BundleError::Entry`].
    pub fn open(path: &Path, limits: &Limits) -> Result<Archive, BundleError> {
        let io = |e: std::io::Error| BundleError::Io {
            path: path.display().to_string(),
            reason: e.to_string(),
        };
        let file = std::fs::File::open(path).map_err(io)?;
        let meta = file.metadata().map_err(io)?;
        if !meta.is_file() {
            return Err(archive_error(format!("{} is not a file", path.display())));
        }
        if meta.len() > limits.archive_bytes {
            return Err(BundleError::TooLarge {
                what: "the bundle file".into(),
                size: meta.len(),
                limit: limits.archive_bytes,
            });
        }
        let mut bytes = Vec::new();
        file.take(limits.archive_bytes + 1)
            .read_to_end(&mut bytes)
            .map_err(io)?;
        Self::from_bytes(bytes, limits)
    }

    /// [`Archive::open`] on bytes already read.
    ///
    /// # Errors
    /// As [`Archive::open`].
    pub fn from_bytes(bytes: Vec<u8>, limits: &Limits) -> Result<Archive, BundleError> {
        if bytes.len() as u64 > limits.archive_bytes {
            return Err(BundleError::TooLarge {
                what: "the bundle file".into(),
                size: bytes.len() as u64,
                limit: limits.archive_bytes,
            });
        }
        let sha256 = hex(&Sha256::digest(&bytes));
        let (zip_len, signature) = match signature_block(&bytes)? {
            Some((header, block)) => {
                let signer = signature::verify(&bytes[block], &bytes[..header], SystemTime::now())
                    .map_err(|reason| BundleError::Signature { reason })?;
                (header, Some(signer))
            }
            None => (bytes.len(), None),
        };
        let mut archive = Archive {
            signature,
            bytes,
            zip_len,
            sha256,
            files: BTreeSet::new(),
            manifest: Vec::new(),
            total_bytes: 0,
        };
        archive.check(limits)?;
        Ok(archive)
    }

    fn zip(&self) -> Result<zip::ZipArchive<Cursor<&[u8]>>, BundleError> {
        zip::ZipArchive::new(Cursor::new(&self.bytes[..self.zip_len]))
            .map_err(|e| archive_error(format!("not a zip archive: {e}")))
    }

    fn check(&mut self, limits: &Limits) -> Result<(), BundleError> {
        let mut zip = self.zip()?;
        // Bytes before the archive (another file, a signed bundle with a zip appended) would be
        // outside what a signature covers and what a viewer of the file shows first.
        if zip.offset() != 0 {
            return Err(archive_error(format!(
                "{} bytes come before the zip archive (a file with a zip appended to it?)",
                zip.offset()
            )));
        }
        // The reader keeps one entry per exact name (the last copy): an exact duplicate is
        // visible only here, and would let a viewer that reads the first copy show other code.
        if zip.has_duplicate_names() {
            return Err(archive_error(
                "it holds the same path twice (ambiguous: which copy is the bundle?)",
            ));
        }
        if zip.len() > limits.entries {
            return Err(BundleError::TooLarge {
                what: "the number of entries".into(),
                size: zip.len() as u64,
                limit: limits.entries as u64,
            });
        }
        let mut seen = BTreeSet::new();
        let mut files = BTreeSet::new();
        let mut total: u64 = 0;
        let mut manifest = None;
        for i in 0..zip.len() {
            let raw = zip.by_index_raw(i).map_err(archive_error)?;
            let name = std::str::from_utf8(raw.name_raw())
                .map_err(|_| {
                    entry_error(
                        &String::from_utf8_lossy(raw.name_raw()),
                        "the name is not UTF-8",
                    )
                })?
                .to_owned();
            let parts = paths::relative(&name).map_err(|r| entry_error(&name, r))?;
            let clean = parts.join("/");
            if !seen.insert(clean.clone()) {
                return Err(entry_error(&name, "the archive holds this path twice"));
            }
            let kind = raw.unix_mode().map(|m| m & S_IFMT).filter(|k| *k != 0);
            if raw.is_symlink() || kind.is_some_and(|k| k != S_IFREG && k != S_IFDIR) {
                return Err(entry_error(
                    &name,
                    "a symbolic link or special file (only files and directories are unpacked)",
                ));
            }
            if raw.encrypted() {
                return Err(entry_error(&name, "encrypted"));
            }
            if raw.is_dir() {
                continue;
            }
            let size = raw.size();
            if size > limits.file_bytes {
                return Err(BundleError::TooLarge {
                    what: format!("entry \"{}\"", super::manifest::quote(&name)),
                    size,
                    limit: limits.file_bytes,
                });
            }
            if size > Limits::RATIO_FLOOR && size / raw.compressed_size().max(1) > limits.ratio {
                return Err(entry_error(
                    &name,
                    format!(
                        "{size} bytes compressed into {} (more than {}:1, a zip bomb?)",
                        raw.compressed_size(),
                        limits.ratio
                    ),
                ));
            }
            total = total.saturating_add(size);
            if total > limits.total_bytes {
                return Err(BundleError::TooLarge {
                    what: "the unpacked bundle".into(),
                    size: total,
                    limit: limits.total_bytes,
                });
            }
            drop(raw);
            // Inflate it once into nothing: the real size must be the declared one.
            let mut file = zip.by_index(i).map_err(|e| entry_error(&name, e))?;
            let keep = clean == "manifest.json";
            let mut sink = Counted {
                count: 0,
                keep: keep.then(Vec::new),
            };
            std::io::copy(&mut (&mut file).take(size + 1), &mut sink)
                .map_err(|e| entry_error(&name, e))?;
            if sink.count != size {
                return Err(entry_error(
                    &name,
                    format!(
                        "it inflates to {}{} bytes, its header says {size}",
                        sink.count,
                        if sink.count > size { "+" } else { "" }
                    ),
                ));
            }
            if keep {
                manifest = sink.keep;
            }
            files.insert(clean);
        }
        drop(zip);
        // A file that is also a parent (`a` and `a/b`) cannot be unpacked: refused here, so a
        // dry run says what the install will do.
        for path in &seen {
            let mut parent = path.as_str();
            while let Some((up, _)) = parent.rsplit_once('/') {
                if files.contains(up) {
                    return Err(entry_error(
                        path,
                        format!(
                            "\"{}\" is a file in the archive, not a directory",
                            super::manifest::quote(up)
                        ),
                    ));
                }
                parent = up;
            }
        }
        self.files = files;
        self.total_bytes = total;
        self.manifest =
            manifest.ok_or_else(|| archive_error("it has no manifest.json at its top level"))?;
        Ok(())
    }

    /// Unpacks every entry into `dir`, which must not exist yet (it is created, parents too).
    /// Files are `0644`, or `0755` when the archive marks them executable (no setuid, no
    /// group or world write). On any error `dir` is removed again.
    ///
    /// # Errors
    /// [`BundleError::Io`] naming the path.
    pub fn unpack(&self, dir: &Path) -> Result<(), BundleError> {
        let result = self.unpack_into(dir);
        if result.is_err() {
            let _ = std::fs::remove_dir_all(dir);
        }
        result
    }

    fn unpack_into(&self, dir: &Path) -> Result<(), BundleError> {
        let io = |p: &Path, e: std::io::Error| BundleError::Io {
            path: p.display().to_string(),
            reason: e.to_string(),
        };
        // The bundles' home (and the data dir above it, when new) is the person's alone, like
        // the config and state dirs; what is unpacked inside keeps the archive's modes.
        let mut private = std::fs::DirBuilder::new();
        private.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut private, 0o700);
        if let Some(parent) = dir.parent() {
            private.create(parent).map_err(|e| io(parent, e))?;
        }
        std::fs::create_dir(dir).map_err(|e| io(dir, e))?;
        let mut zip = self.zip()?;
        for i in 0..zip.len() {
            let mut file = zip.by_index(i).map_err(archive_error)?;
            let name = String::from_utf8_lossy(file.name_raw()).into_owned();
            let target = paths::inside(dir, &name).map_err(|r| entry_error(&name, r))?;
            if file.is_dir() {
                std::fs::create_dir_all(&target).map_err(|e| io(&target, e))?;
                continue;
            }
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
            }
            let executable = file.unix_mode().is_some_and(|m| m & 0o111 != 0);
            let mut out = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&target)
                .map_err(|e| io(&target, e))?;
            let size = file.size();
            std::io::copy(&mut (&mut file).take(size), &mut out).map_err(|e| io(&target, e))?;
            out.flush().map_err(|e| io(&target, e))?;
            set_mode(&target, executable).map_err(|e| io(&target, e))?;
        }
        Ok(())
    }
}

/// Makes `path` executable by its owner and readable (`0755`); for the binary a `binary`
/// bundle runs, whatever mode the archive gave it.
///
/// # Errors
/// What the file system said.
pub fn set_mode(path: &Path, executable: bool) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = if executable { 0o755 } else { 0o644 };
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
    }
    #[cfg(not(unix))]
    {
        let _ = (path, executable);
        Ok(())
    }
}

/// Counts bytes written, keeping them when asked.
struct Counted {
    count: u64,
    keep: Option<Vec<u8>>,
}

impl Write for Counted {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.count += buf.len() as u64;
        if let Some(k) = &mut self.keep {
            if k.len() + buf.len() > super::MANIFEST_MAX_BYTES {
                return Err(std::io::Error::other(format!(
                    "manifest.json is larger than {} bytes",
                    super::MANIFEST_MAX_BYTES
                )));
            }
            k.extend_from_slice(buf);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Where the signature block `MCPB_SIG_V1 <u32 LE length> <PKCS#7 DER> MCPB_SIG_END` starts
/// and where its DER lies, when the file ends with one (the layout `mcpb sign` writes and
/// `mcpb verify` reads). `None` when the file holds no `MCPB_SIG_V1`, or ends with
/// `MCPB_SIG_END` (a zip comment can) with no `MCPB_SIG_V1` before it.
///
/// # Errors
/// [`BundleError::Signature`] when both markers are there but the length between them does
/// not add up, or `MCPB_SIG_V1` is there without `MCPB_SIG_END` at the end: a block that was
/// cut, changed or followed by other bytes.
pub(crate) fn signature_block(
    bytes: &[u8],
) -> Result<Option<(usize, std::ops::Range<usize>)>, BundleError> {
    let Some(footer) = bytes.len().checked_sub(SIG_FOOTER.len()) else {
        return Ok(None);
    };
    if &bytes[footer..] != SIG_FOOTER {
        // A header with no footer after it: a block cut short or with bytes added after it,
        // not an unsigned bundle.
        if memchr::memmem::rfind(bytes, SIG_HEADER).is_some() {
            return Err(BundleError::Signature {
                reason: "the file holds a signature block (MCPB_SIG_V1) but does not end with MCPB_SIG_END: \
                         the block was cut or bytes were added after it"
                    .into(),
            });
        }
        return Ok(None);
    }
    let Some(header) = memchr::memmem::rfind(&bytes[..footer], SIG_HEADER) else {
        return Ok(None);
    };
    let len_at = header + SIG_HEADER.len();
    let len = bytes
        .get(len_at..len_at + 4)
        .and_then(|b| b.try_into().ok())
        .map(|b| u32::from_le_bytes(b) as usize);
    match len {
        Some(len) if len_at + 4 + len == footer => Ok(Some((header, len_at + 4..footer))),
        _ => Err(BundleError::Signature {
            reason: format!(
                "the signature block's length does not match its markers ({} bytes between them)",
                footer.saturating_sub(len_at + 4)
            ),
        }),
    }
}

pub(super) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
#[path = "archive_tests.rs"]
pub(crate) mod tests;
