//! The PNG images of the demo server's `image` tool and `pixel` resource: a recognisable
//! gradient, encoded by the `png` crate as RGBA (colour type 6, 8 bits per channel).

/// The eight bytes every PNG file starts with (what the tests check images by).
#[cfg(test)]
pub const PNG_SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];

/// Encodes a `width` × `height` gradient as an RGBA PNG.
///
/// Red grows left to right, green top to bottom, blue is constant and alpha is opaque, so a
/// viewer shows something recognisable. A zero dimension yields an empty vector (PNG has no
/// zero-pixel images); callers validate sizes first.
pub fn gradient_rgba(width: u32, height: u32) -> Vec<u8> {
    let mut pixels = Vec::with_capacity(width as usize * height as usize * 4);
    for y in 0..height {
        for x in 0..width {
            pixels.extend_from_slice(&[scale(x, width), scale(y, height), 0x80, 0xff]);
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
/// and extra bytes are ignored, so a short buffer still produces a well-formed file. A zero
/// dimension (or an image too large to encode) yields an empty vector.
pub fn encode_rgba(width: u32, height: u32, pixels: &[u8]) -> Vec<u8> {
    let size = width as usize * height as usize * 4;
    let mut data = pixels.get(..size).unwrap_or(pixels).to_vec();
    data.resize(size, 0);
    let mut out = Vec::new();
    let mut encoder = ::png::Encoder::new(&mut out, width, height);
    encoder.set_color(::png::ColorType::Rgba);
    encoder.set_depth(::png::BitDepth::Eight);
    let written = encoder
        .write_header()
        .and_then(|mut writer| writer.write_image_data(&data));
    if let Err(e) = written {
        tracing::warn!(error = %e, width, height, "cannot encode the demo image");
        return Vec::new();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
        let mut reader = ::png::Decoder::new(std::io::Cursor::new(bytes))
            .read_info()
            .unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!(info.color_type, ::png::ColorType::Rgba);
        buf.truncate(info.buffer_size());
        (info.width, info.height, buf)
    }

    #[test]
    fn gradients_decode_to_their_size_and_corner_colours() {
        for (w, h) in [(1, 1), (8, 8), (3, 5), (200, 100)] {
            let png = gradient_rgba(w, h);
            assert_eq!(png[..8], PNG_SIGNATURE);
            let (dw, dh, pixels) = decode(&png);
            assert_eq!((dw, dh), (w, h));
            assert_eq!(pixels[..4], [0, 0, 0x80, 0xff], "top left");
            let full = |side: u32| if side > 1 { 0xff } else { 0 };
            let last = pixels.len() - 4;
            assert_eq!(
                pixels[last..],
                [full(w), full(h), 0x80, 0xff],
                "bottom right"
            );
        }
    }

    #[test]
    fn short_pixel_buffers_are_padded_and_zero_sizes_give_nothing() {
        let (w, h, pixels) = decode(&encode_rgba(2, 2, &[1, 2, 3, 4]));
        assert_eq!((w, h), (2, 2));
        assert_eq!(pixels, [1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert!(encode_rgba(0, 5, &[]).is_empty());
    }
}
