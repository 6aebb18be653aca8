use super::*;
use zip::write::SimpleFileOptions;

/// A zip of `files` (name, bytes), deflated.
pub(crate) fn zip_of(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let opts = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in files {
        w.start_file(*name, opts).unwrap();
        w.write_all(bytes).unwrap();
    }
    w.finish().unwrap().into_inner()
}

const MANIFEST: &[u8] = br#"{"manifest_version":"0.3"}"#;

fn refused(bytes: Vec<u8>, limits: &Limits) -> String {
    match Archive::from_bytes(bytes, limits) {
        Ok(_) => panic!("accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_plain_bundle_is_read_and_unpacked_with_its_files_only() {
    let bytes = zip_of(&[
        ("manifest.json", MANIFEST),
        ("server/index.js", b"console.log(1)"),
        ("./server//lib/a.js", b"x"),
    ]);
    let a = Archive::from_bytes(bytes, &Limits::default()).unwrap();
    assert!(a.signature.is_none());
    assert_eq!(a.manifest, MANIFEST);
    assert_eq!(
        a.files.iter().map(String::as_str).collect::<Vec<_>>(),
        ["manifest.json", "server/index.js", "server/lib/a.js"]
    );
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("b");
    a.unpack(&dir).unwrap();
    assert_eq!(
        std::fs::read(dir.join("server/index.js")).unwrap(),
        b"console.log(1)"
    );
    // A second unpack into the same directory is refused, not merged.
    assert!(a.unpack(&dir).is_err());
    assert!(!dir.exists(), "a failed unpack removes its directory");
}

#[test]
fn traversal_absolute_names_links_and_duplicates_are_refused() {
    let l = Limits::default();
    for (name, want) in [
        ("../evil.js", "\"..\" component"),
        ("server/../../evil.js", "\"..\" component"),
        ("/etc/evil.js", "an absolute path"),
        ("C:/evil.js", "a drive letter"),
        ("..\\evil.js", "Windows separators"),
    ] {
        let e = refused(zip_of(&[("manifest.json", MANIFEST), (name, b"x")]), &l);
        assert!(e.contains(want), "{name}: {e}");
    }
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    w.start_file("manifest.json", SimpleFileOptions::default())
        .unwrap();
    w.write_all(MANIFEST).unwrap();
    w.add_symlink("server/link", "/etc/passwd", SimpleFileOptions::default())
        .unwrap();
    let e = refused(w.finish().unwrap().into_inner(), &l);
    assert!(e.contains("symbolic link"), "{e}");
    let e = refused(
        zip_of(&[("manifest.json", MANIFEST), ("a/b", b"1"), ("a//b", b"2")]),
        &l,
    );
    assert!(e.contains("holds this path twice"), "{e}");
    let e = refused(zip_of(&[("server/x.js", b"1")]), &l);
    assert!(e.contains("no manifest.json"), "{e}");
    let e = refused(b"not a zip at all".to_vec(), &l);
    assert!(e.contains("not a zip archive"), "{e}");
}

#[test]
fn sizes_counts_and_ratios_have_limits() {
    let small = Limits {
        archive_bytes: 1 << 20,
        file_bytes: 100,
        total_bytes: 150,
        entries: 3,
        ratio: 200,
    };
    let e = refused(
        zip_of(&[("manifest.json", MANIFEST), ("big", &[b'x'; 101])]),
        &small,
    );
    assert!(
        e.contains("entry \"big\" is too large: 101, the limit is 100"),
        "{e}"
    );
    let e = refused(
        zip_of(&[
            ("manifest.json", MANIFEST),
            ("a", &[b'x'; 80]),
            ("b", &[b'x'; 80]),
        ]),
        &small,
    );
    assert!(e.contains("the unpacked bundle is too large"), "{e}");
    let e = refused(
        zip_of(&[
            ("manifest.json", MANIFEST),
            ("a", b""),
            ("b", b""),
            ("c", b""),
        ]),
        &small,
    );
    assert!(e.contains("the number of entries is too large: 4"), "{e}");
    let e = refused(
        zip_of(&[("manifest.json", MANIFEST)]),
        &Limits {
            archive_bytes: 10,
            ..Limits::default()
        },
    );
    assert!(e.contains("the bundle file is too large"), "{e}");
    // 4 MiB of zeros deflate to a few KiB: a zip bomb's ratio.
    let zeros = vec![0u8; 4 << 20];
    let e = refused(
        zip_of(&[("manifest.json", MANIFEST), ("zeros", &zeros)]),
        &Limits::default(),
    );
    assert!(e.contains("a zip bomb?"), "{e}");
}

#[test]
fn a_header_that_understates_the_size_is_refused() {
    let mut bytes = zip_of(&[("manifest.json", MANIFEST), ("data", &[b'y'; 64])]);
    // Patch the declared uncompressed size of "data" (local header and central directory) to 8.
    for sig in [&b"PK\x03\x04"[..], &b"PK\x01\x02"[..]] {
        let mut at = 0;
        while let Some(i) = memchr::memmem::find(&bytes[at..], sig) {
            let start = at + i;
            let (name_len_at, size_at) = if sig[2] == 3 {
                (start + 26, start + 22)
            } else {
                (start + 28, start + 24)
            };
            let name_len = u16::from_le_bytes([bytes[name_len_at], bytes[name_len_at + 1]]);
            let name_at = if sig[2] == 3 { start + 30 } else { start + 46 };
            if &bytes[name_at..name_at + name_len as usize] == b"data" {
                bytes[size_at..size_at + 4].copy_from_slice(&8u32.to_le_bytes());
            }
            at = start + 4;
        }
    }
    let e = refused(bytes, &Limits::default());
    assert!(e.contains("\"data\""), "{e}");
}

#[test]
fn a_signature_block_is_found_checked_and_cut_off() {
    let zip = zip_of(&[("manifest.json", MANIFEST)]);
    let block = |der: &[u8], len: u32| {
        let mut signed = zip.clone();
        signed.extend_from_slice(SIG_HEADER);
        signed.extend_from_slice(&len.to_le_bytes());
        signed.extend_from_slice(der);
        signed.extend_from_slice(SIG_FOOTER);
        signed
    };
    let der = b"\x30\x03\x02\x01\x01";
    let signed = block(der, der.len() as u32);
    assert_eq!(
        signature_block(&signed).unwrap(),
        Some((
            zip.len(),
            zip.len() + SIG_HEADER.len() + 4..signed.len() - SIG_FOOTER.len()
        ))
    );
    // A block that is not a signature is refused, not ignored.
    let e = refused(signed.clone(), &Limits::default());
    assert!(e.contains("signature does not verify"), "{e}");
    // Markers whose length does not add up: a cut or changed block, refused.
    let e = refused(block(b"", 99), &Limits::default());
    assert!(e.contains("length does not match its markers"), "{e}");
    // A block cut short (its footer gone) or followed by other bytes is refused, not taken
    // as an unsigned bundle.
    let mut cut = block(b"", 0);
    cut.truncate(cut.len() - 3);
    let e = refused(cut, &Limits::default());
    assert!(e.contains("does not end with MCPB_SIG_END"), "{e}");
    let mut trailing = block(b"", 0);
    trailing.extend_from_slice(b"GARBAGE");
    let e = refused(trailing, &Limits::default());
    assert!(e.contains("does not end with MCPB_SIG_END"), "{e}");
    // A zip appended to another file (here a signed bundle) is refused: what it installs is
    // not what the file's first bytes, or its signature, are about.
    let mut appended = signed.clone();
    appended.extend_from_slice(&zip);
    assert!(refused(appended, &Limits::default()).contains("does not end with MCPB_SIG_END"));
    let mut prefixed = b"not a zip".to_vec();
    prefixed.extend_from_slice(&zip);
    let e = refused(prefixed, &Limits::default());
    assert!(e.contains("9 bytes come before the zip archive"), "{e}");
    // The footer alone (e.g. a zip comment) is no signature block.
    let mut odd = zip;
    odd.extend_from_slice(SIG_FOOTER);
    assert_eq!(signature_block(&odd).unwrap(), None);
}

#[test]
fn a_bundle_signed_by_mcpb_sign_is_read_with_its_signer() {
    let bytes = include_bytes!("../../../tests/fixtures/mcpb/ca-signed.mcpb").to_vec();
    let a = Archive::from_bytes(bytes, &Limits::default()).unwrap();
    let s = a.signature.unwrap();
    assert_eq!(s.subject, "O=MCP Companion tests,CN=Test Publisher");
    assert!(a.files.contains("index.js"));
}

#[test]
fn an_exact_duplicate_and_a_file_under_a_file_are_refused() {
    let l = Limits::default();
    // The writer refuses a name twice: write `server/index.jX`, then rename it in both its
    // local header and the central directory (the name is outside the CRC).
    let mut bytes = zip_of(&[
        ("manifest.json", MANIFEST),
        ("server/index.js", b"first"),
        ("server/index.jX", b"second"),
    ]);
    let from = b"server/index.jX";
    let mut renamed = 0;
    let mut i = 0;
    while let Some(at) = bytes[i..].windows(from.len()).position(|w| w == from) {
        bytes[i + at + from.len() - 1] = b's';
        renamed += 1;
        i += at + from.len();
    }
    assert_eq!(renamed, 2);
    let e = refused(bytes, &l);
    assert!(e.contains("the same path twice"), "{e}");
    let e = refused(
        zip_of(&[
            ("manifest.json", MANIFEST),
            ("a", b"file"),
            ("a/b", b"nested"),
        ]),
        &l,
    );
    assert!(e.contains("is a file in the archive"), "{e}");
    let e = refused(
        zip_of(&[("manifest.json", MANIFEST), ("a/b/c", b"1"), ("a", b"file")]),
        &l,
    );
    assert!(e.contains("is a file in the archive"), "{e}");
}

/// The directories `unpack` creates above the bundle (the bundles' home, the data dir when new)
/// are the person's alone.
#[cfg(unix)]
#[test]
fn the_parents_unpack_creates_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let a =
        Archive::from_bytes(zip_of(&[("manifest.json", MANIFEST)]), &Limits::default()).unwrap();
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("data").join("bundles");
    a.unpack(&home.join("b")).unwrap();
    for dir in [root.path().join("data"), home] {
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{}", dir.display());
    }
}
