//! A minimal PNG encoder for the demo server's `image` tool and `pixel` resource.
//!
//! The demo server only needs small, valid images, so this writes RGBA (colour type 6, 8 bits
//! per channel) with a zlib stream made of *stored* (uncompressed) deflate blocks. That keeps
//! the encoder to a CRC-32 and an Adler-32 instead of a compression dependency; the price is
//! that the output is as large as the raw pixels, which is irrelevant at demo sizes.

/// The eight bytes every PNG file starts with.
pub const PNG_SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];

/// Largest payload of one stored deflate block (RFC 1951 §3.2.4: LEN is 16 bits).
const MAX_STORED_BLOCK: usize = 0xffff;

/// Encodes a `width` × `height` gradient as an RGBA PNG.
///
/// Red grows left to right, green top to bottom, blue is constant and alpha is opaque, so a
/// viewer shows something recognisable. A zero dimension yields a zero-pixel image, which PNG
/// decoders reject; callers validate sizes first.
pub fn gradient_rgba(width: u32, height: u32) -> Vec<u8> {
    let mut pixels = Vec::with_capacity(width as usize * height as usize * 4);
    for y in 0..height {
        for x in 0..width {
            pixels.push(scale(x, width));
            pixels.push(scale(y, height));
            pixels.push(0x80);
            pixels.push(0xff);
        }
    }
    encode_rgba(width, height, &pixels)
}

/// Maps `pos` in `0..len` onto `0..=255`.
fn scale(pos: u32, len: u32) -> u8 {
    if len <= 1 {
        return 0;
    }
    let value = u64::from(pos) * 255 / u64::from(len - 1);
    u8::try_from(value).unwrap_or(u8::MAX)
}

/// Encodes raw RGBA pixels (row-major, 4 bytes per pixel) as a PNG file.
///
/// `pixels` must hold exactly `width * height * 4` bytes; missing bytes are written as zero
/// and extra bytes are ignored, so a short buffer still produces a well-formed file.
pub fn encode_rgba(width: u32, height: u32, pixels: &[u8]) -> Vec<u8> {
    let row_len = width as usize * 4;
    // Each scanline is prefixed with filter type 0 (None).
    let mut raw = Vec::with_capacity((row_len + 1) * height as usize);
    for y in 0..height as usize {
        raw.push(0);
        let start = y * row_len;
        let row = pixels.get(start..start + row_len).unwrap_or(&[]);
        raw.extend_from_slice(row);
        raw.resize(raw.len() + (row_len - row.len()), 0);
    }

    let mut ihdr = Vec::with_capacity(13);
    ihdr.extend_from_slice(&width.to_be_bytes());
    ihdr.extend_from_slice(&height.to_be_bytes());
    // bit depth 8, colour type 6 (RGBA), compression 0, filter 0, interlace 0
    ihdr.extend_from_slice(&[8, 6, 0, 0, 0]);

    let mut out = Vec::with_capacity(raw.len() + raw.len() / MAX_STORED_BLOCK * 5 + 64);
    out.extend_from_slice(&PNG_SIGNATURE);
    write_chunk(&mut out, b"IHDR", &ihdr);
    write_chunk(&mut out, b"IDAT", &zlib_stored(&raw));
    write_chunk(&mut out, b"IEND", &[]);
    out
}

/// Appends one chunk: length, type, data, CRC-32 over type and data.
fn write_chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    // PNG chunk lengths are 31-bit; demo images never come close.
    let len = u32::try_from(data.len()).unwrap_or(u32::MAX);
    out.extend_from_slice(&len.to_be_bytes());
    let crc_start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32(&out[crc_start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// Wraps `data` in a zlib stream of stored deflate blocks (RFC 1950 + RFC 1951 §3.2.4).
fn zlib_stored(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + data.len() / MAX_STORED_BLOCK * 5 + 11);
    // CMF 0x78 (deflate, 32 KiB window), FLG 0x01 (no dict, fastest; 0x7801 % 31 == 0)
    out.extend_from_slice(&[0x78, 0x01]);
    let mut blocks = data.chunks(MAX_STORED_BLOCK).peekable();
    if blocks.peek().is_none() {
        out.extend_from_slice(&[0x01, 0x00, 0x00, 0xff, 0xff]);
    }
    while let Some(block) = blocks.next() {
        let is_final = u8::from(blocks.peek().is_none());
        // chunks() never yields more than MAX_STORED_BLOCK bytes, which fits in u16.
        let len = u16::try_from(block.len()).unwrap_or(u16::MAX);
        out.push(is_final);
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(block);
    }
    out.extend_from_slice(&adler32(data).to_be_bytes());
    out
}

/// CRC-32 (ISO-HDLC, the one PNG and zlib use), bitwise; fast enough for demo images.
fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xedb8_8320 & mask);
        }
    }
    !crc
}

/// Adler-32 checksum that ends a zlib stream.
fn adler32(data: &[u8]) -> u32 {
    const MOD: u32 = 65_521;
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in data {
        a = (a + u32::from(byte)) % MOD;
        b = (b + a) % MOD;
    }
    (b << 16) | a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksums_match_known_vectors() {
        let cases: &[(&[u8], u32, u32)] = &[
            (b"", 0x0000_0000, 0x0000_0001),
            (b"123456789", 0xcbf4_3926, 0x091e_01de),
            (b"Wikipedia", 0xadaa_c02e, 0x11e6_0398),
        ];
        for (input, crc, adler) in cases {
            assert_eq!(crc32(input), *crc, "crc32 of {input:?}");
            assert_eq!(adler32(input), *adler, "adler32 of {input:?}");
        }
    }

    #[test]
    fn png_starts_with_signature_and_ihdr_and_ends_with_iend() {
        for (w, h) in [(1, 1), (8, 8), (3, 5), (200, 100)] {
            let png = gradient_rgba(w, h);
            assert_eq!(png[..8], PNG_SIGNATURE);
            assert_eq!(&png[12..16], b"IHDR");
            assert_eq!(png[16..20], w.to_be_bytes());
            assert_eq!(png[20..24], h.to_be_bytes());
            assert_eq!(&png[png.len() - 8..png.len() - 4], b"IEND");
        }
    }

    #[test]
    fn stored_zlib_stream_round_trips_across_block_boundaries() {
        for len in [
            0usize,
            1,
            MAX_STORED_BLOCK,
            MAX_STORED_BLOCK + 1,
            3 * MAX_STORED_BLOCK,
        ] {
            let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            let z = zlib_stored(&data);
            let mut pos = 2;
            let mut back = Vec::new();
            loop {
                let last = z[pos] & 1 == 1;
                let n = usize::from(u16::from_le_bytes([z[pos + 1], z[pos + 2]]));
                let nn = u16::from_le_bytes([z[pos + 3], z[pos + 4]]);
                assert_eq!(!nn as usize, n);
                back.extend_from_slice(&z[pos + 5..pos + 5 + n]);
                pos += 5 + n;
                if last {
                    break;
                }
            }
            assert_eq!(back, data);
            assert_eq!(z[pos..], adler32(&data).to_be_bytes());
        }
    }
}
