//! An output buffer that reaches the file at exactly the moments Java's `BufferedOutputStream`
//! (8192 bytes) under a `DataOutputStream` does.
//!
//! Why it matters: ZooKeeper 3.8's `FilePadding.padFile` decides when to preallocate from the
//! file channel's position, which counts only the bytes the buffer has passed on. To write a
//! log whose length (preallocation included) is byte-identical to ZooKeeper's, our writes must
//! reach the file in the same chunks. The rules (OpenJDK 17's `BufferedOutputStream`): a write
//! of at least the buffer's size flushes the buffer and goes straight through; a write that does
//! not fit in what is left flushes the buffer first; a single byte flushes a full buffer first.
//! `DataOutputStream.writeInt` and `writeLong` are one array write each (Debian's OpenJDK 17),
//! `writeByte` a single byte.
//!
//! Invariant: `position()` is the number of bytes handed to the file, i.e. Java's
//! `FileChannel.position()` for the same sequence of writes.

use std::fs::File;
use std::io::{self, Write};

/// `BufferedOutputStream`'s default buffer size.
pub const JAVA_BUFFER: usize = 8192;

/// A file behind a Java-shaped buffer.
#[derive(Debug)]
pub struct JavaBufferedFile {
    file: File,
    buf: Vec<u8>,
    position: u64,
}

impl JavaBufferedFile {
    /// Wraps a file opened at offset 0.
    pub fn new(file: File) -> JavaBufferedFile {
        JavaBufferedFile {
            file,
            buf: Vec::with_capacity(JAVA_BUFFER),
            position: 0,
        }
    }

    /// The bytes handed to the file so far (what Java's channel position would say).
    pub fn position(&self) -> u64 {
        self.position
    }

    /// The file, for positioned writes and syncs.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// The file, once the buffer has been flushed.
    pub fn into_file(self) -> File {
        self.file
    }

    /// `BufferedOutputStream.write(byte[], int, int)`.
    ///
    /// # Errors
    /// The file write failed; what reached the file is then unknown.
    pub fn write_array(&mut self, bytes: &[u8]) -> io::Result<()> {
        if bytes.len() >= JAVA_BUFFER {
            self.flush_buffer()?;
            return self.write_through(bytes);
        }
        if bytes.len() > JAVA_BUFFER - self.buf.len() {
            self.flush_buffer()?;
        }
        self.buf.extend_from_slice(bytes);
        Ok(())
    }

    /// `BufferedOutputStream.write(int)`.
    ///
    /// # Errors
    /// The file write failed.
    pub fn write_byte(&mut self, byte: u8) -> io::Result<()> {
        if self.buf.len() >= JAVA_BUFFER {
            self.flush_buffer()?;
        }
        self.buf.push(byte);
        Ok(())
    }

    /// `DataOutputStream.writeInt`.
    ///
    /// # Errors
    /// The file write failed.
    pub fn write_int(&mut self, v: i32) -> io::Result<()> {
        self.write_array(&v.to_be_bytes())
    }

    /// `DataOutputStream.writeLong`.
    ///
    /// # Errors
    /// The file write failed.
    pub fn write_long(&mut self, v: i64) -> io::Result<()> {
        self.write_array(&v.to_be_bytes())
    }

    /// `BufferedOutputStream.flush()`: everything buffered goes to the file (not to the disk).
    ///
    /// # Errors
    /// The file write failed.
    pub fn flush_buffer(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let buf = std::mem::take(&mut self.buf);
        let result = self.write_through(&buf);
        self.buf = buf;
        self.buf.clear();
        result
    }

    fn write_through(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.file.write_all(bytes)?;
        self.position += bytes.len() as u64;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn position_moves_only_when_java_would_flush() {
        let dir = tempfile::tempdir().unwrap();
        let file = File::create(dir.path().join("f")).unwrap();
        let mut out = JavaBufferedFile::new(file);
        out.write_array(&[1; 8000]).unwrap();
        assert_eq!(out.position(), 0);
        // 8000 + 200 does not fit: the 8000 go first.
        out.write_array(&[2; 200]).unwrap();
        assert_eq!(out.position(), 8000);
        out.write_array(&[3; 7992]).unwrap();
        assert_eq!(out.position(), 8000, "exactly full stays buffered");
        out.write_byte(4).unwrap();
        assert_eq!(
            out.position(),
            8000 + 8192,
            "a byte flushes a full buffer first"
        );
        out.write_array(&[5; 9000]).unwrap();
        assert_eq!(
            out.position(),
            8000 + 8192 + 1 + 9000,
            "a big write goes through"
        );
        out.flush_buffer().unwrap();
        assert_eq!(
            std::fs::metadata(dir.path().join("f")).unwrap().len(),
            out.position()
        );
    }
}
