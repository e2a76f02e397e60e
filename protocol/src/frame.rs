//! Frames and the connection that reads and writes them.
//!
//! A frame is a 4-byte big-endian length followed by that many bytes of JSON. Frames
//! larger than [`MAX_FRAME_BYTES`] are refused from the header, before any allocation.
//! [`Connection`] is the one reader and writer of frames: blocking for the std-only
//! clients (the hook shim starts without an async runtime), and, with the `tokio`
//! feature, async for the daemon's server.

use serde::Serialize;
use serde::de::DeserializeOwned;
use std::io::{self, Read, Write};

/// Hard ceiling on one frame, either direction.
pub const MAX_FRAME_BYTES: usize = 8 * 1024 * 1024;
/// The largest body the async reader keeps on the heap; a larger one gets an anonymous
/// mapping of its own (and the server charges it to its budget of large frames).
pub const SMALL_FRAME_BYTES: usize = 64 * 1024;

/// Why a frame could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The header announces more than [`MAX_FRAME_BYTES`].
    #[error("frame of {0} bytes exceeds the {MAX_FRAME_BYTES}-byte limit")]
    TooLarge(usize),
    /// The body is not the JSON message expected.
    #[error("malformed frame: {0}")]
    Malformed(#[from] serde_json::Error),
    /// The stream failed or closed mid-frame.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Check a frame header and return the body length.
fn body_len(header: [u8; 4]) -> Result<usize, FrameError> {
    let len = u32::from_be_bytes(header) as usize;
    if len > MAX_FRAME_BYTES { Err(FrameError::TooLarge(len)) } else { Ok(len) }
}

/// Encode a message as one frame (the server encodes before it writes, to hold a large
/// answer's bytes against its budget while a slow client drains them).
pub fn encode<T: Serialize>(message: &T) -> Result<Vec<u8>, FrameError> {
    let body = serde_json::to_vec(message)?;
    if body.len() > MAX_FRAME_BYTES {
        return Err(FrameError::TooLarge(body.len()));
    }
    let mut frame = Vec::with_capacity(4 + body.len());
    frame.extend_from_slice(&(body.len() as u32).to_be_bytes());
    frame.extend_from_slice(&body);
    Ok(frame)
}

/// A stream that carries frames. `receive` returns `None` on a clean close before a
/// header; a close inside a frame is an error.
pub struct Connection<S> {
    stream: S,
}

impl<S> Connection<S> {
    /// Frames over `stream`.
    pub fn new(stream: S) -> Connection<S> {
        Connection { stream }
    }

    /// The stream, for its options (timeouts, peer credentials).
    pub fn stream(&self) -> &S {
        &self.stream
    }
}

/// The body a frame holds, or `None` for a clean close (no header byte at all).
fn frame_body(header: io::Result<()>, header_bytes: [u8; 4]) -> Result<Option<usize>, FrameError> {
    match header {
        Ok(()) => Ok(Some(body_len(header_bytes)?)),
        Err(error) if error.kind() == io::ErrorKind::UnexpectedEof => Ok(None),
        Err(error) => Err(error.into()),
    }
}

impl<S: Read + Write> Connection<S> {
    /// Write one message as a frame.
    pub fn send<T: Serialize>(&mut self, message: &T) -> Result<(), FrameError> {
        self.stream.write_all(&encode(message)?)?;
        Ok(())
    }

    /// Read one frame as a message.
    pub fn receive<T: DeserializeOwned>(&mut self) -> Result<Option<T>, FrameError> {
        let mut header = [0u8; 4];
        let Some(len) = frame_body(self.stream.read_exact(&mut header), header)? else { return Ok(None) };
        let mut body = vec![0u8; len];
        self.stream.read_exact(&mut body)?;
        Ok(Some(serde_json::from_slice(&body)?))
    }
}

#[cfg(feature = "tokio")]
impl<S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin> Connection<S> {
    /// As [`Connection::send`], on an async stream.
    pub async fn send_async<T: Serialize>(&mut self, message: &T) -> Result<(), FrameError> {
        self.send_frame_async(&encode(message)?).await
    }

    /// Write one frame made by [`encode`].
    pub async fn send_frame_async(&mut self, frame: &[u8]) -> Result<(), FrameError> {
        use tokio::io::AsyncWriteExt;
        self.stream.write_all(frame).await?;
        Ok(())
    }

    /// The next frame's header, on an async stream: its body's length, checked against
    /// [`MAX_FRAME_BYTES`], or `None` on a clean close. The caller decides how long to wait
    /// and whether it can hold that many bytes before [`Connection::receive_body_async`].
    pub async fn receive_header_async(&mut self) -> Result<Option<usize>, FrameError> {
        use tokio::io::AsyncReadExt;
        let mut header = [0u8; 4];
        let read = self.stream.read_exact(&mut header).await.map(|_| ());
        frame_body(read, header)
    }

    /// A frame's body of `len` bytes, as read (so the caller can answer a malformed one).
    /// It is held in one buffer of exactly `len` bytes that never grows (the server charges
    /// a large frame's announced length to its budget; `read_to_end` reserved 32 bytes more
    /// whenever fewer were left, doubling an 8 MiB buffer just before its last bytes).
    /// Its pages are touched only as bytes arrive.
    pub async fn receive_body_async(&mut self, len: usize) -> Result<Body, FrameError> {
        use tokio::io::AsyncReadExt;
        let early = || FrameError::Io(io::Error::new(io::ErrorKind::UnexpectedEof, "the frame ended early"));
        if len <= SMALL_FRAME_BYTES {
            let mut body = Vec::with_capacity(len);
            while body.len() < len {
                // `take` keeps the read inside this frame; the spare capacity is never zero
                // here, so `read_buf` never reserves more.
                let left = (len - body.len()) as u64;
                if (&mut self.stream).take(left).read_buf(&mut body).await? == 0 {
                    return Err(early());
                }
            }
            return Ok(Body::Heap(body));
        }
        let mut body = memmap2::MmapMut::map_anon(len)?;
        let mut filled = 0;
        while filled < len {
            match self.stream.read(&mut body[filled..]).await? {
                0 => return Err(early()),
                read => filled += read,
            }
        }
        Ok(Body::Mapped(body))
    }
}

/// A frame's body as the async reader holds it.
#[cfg(feature = "tokio")]
pub enum Body {
    /// Up to [`SMALL_FRAME_BYTES`].
    Heap(Vec<u8>),
    /// A larger body, in its own mapping: unmapped when dropped, so its memory goes back
    /// to the system at once. On the heap, glibc keeps a freed buffer in the arena of the
    /// thread that allocated it; the next large frame, read on another worker thread, took
    /// fresh memory, and the daemon held up to twice its budget as frames came and went.
    Mapped(memmap2::MmapMut),
}

#[cfg(feature = "tokio")]
impl std::ops::Deref for Body {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Body::Heap(body) => body,
            Body::Mapped(body) => body,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    /// A stream reading from `input` and writing to a buffer.
    struct Pipe {
        input: Cursor<Vec<u8>>,
        output: Vec<u8>,
    }

    impl Read for Pipe {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.input.read(buf)
        }
    }

    impl Write for Pipe {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.output.write(buf)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn pipe(input: Vec<u8>) -> Connection<Pipe> {
        Connection::new(Pipe { input: Cursor::new(input), output: Vec::new() })
    }

    #[test]
    fn frames_round_trip_and_oversize_is_refused_from_the_header() {
        let mut writer = pipe(Vec::new());
        writer.send(&serde_json::json!({"x": 1})).unwrap();
        let frame = writer.stream.output.clone();
        let back: serde_json::Value = pipe(frame.clone()).receive().unwrap().unwrap();
        assert_eq!(back["x"], 1);
        let oversized = ((MAX_FRAME_BYTES as u32) + 1).to_be_bytes().to_vec();
        assert!(matches!(pipe(oversized).receive::<serde_json::Value>(), Err(FrameError::TooLarge(_))));
        assert!(matches!(pipe(frame[..6].to_vec()).receive::<serde_json::Value>(), Err(FrameError::Io(_))));
        assert!(matches!(pipe(Vec::new()).receive::<serde_json::Value>(), Ok(None)), "a clean close");
    }
}
