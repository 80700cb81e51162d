//! Bytes in and out, once for every binary encoding (inputs, snapshots,
//! deltas, recordings): a [`Writer`] that appends fields and a [`Reader`]
//! that reads them back and never panics. Integers are fixed-width
//! little-endian or LEB128 varints ([`crate::shared::varint`], signed ones
//! zigzag-coded), floats their little-endian bits, byte strings a varint
//! length and the bytes.
//!
//! Every read past the end, every varint past 64 bits and every string that
//! is not UTF-8 is a [`ReadError`] naming the byte it was found at; each
//! format turns it into its own error (a [`ProtocolError`] for the network,
//! a recording's `FormatError`) with `?`.

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::shared::protocol::{ErrorCode, ProtocolError};
use crate::shared::varint::{self, VarintError};

/// Why a field could not be read, and at which byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadError {
    /// The bytes end inside the field.
    End {
        /// Where reading stopped.
        at: usize,
    },
    /// A varint whose bits go past 64.
    TooLong {
        /// Where reading stopped.
        at: usize,
    },
    /// A string that is not UTF-8.
    NotUtf8 {
        /// Where the string starts.
        at: usize,
    },
    /// Bytes that read but mean nothing (an unknown code, a flag out of
    /// range).
    Invalid {
        /// Where reading stopped.
        at: usize,
        /// What was wrong.
        what: &'static str,
    },
}

impl ReadError {
    /// What went wrong, for a person.
    pub fn what(&self) -> &'static str {
        match self {
            ReadError::End { .. } => "frame too short",
            ReadError::TooLong { .. } => "a varint longer than 64 bits",
            ReadError::NotUtf8 { .. } => "a string that is not UTF-8",
            ReadError::Invalid { what, .. } => what,
        }
    }

    /// The byte it was found at.
    pub fn at(&self) -> usize {
        match self {
            ReadError::End { at }
            | ReadError::TooLong { at }
            | ReadError::NotUtf8 { at }
            | ReadError::Invalid { at, .. } => *at,
        }
    }
}

/// A value with a binary form: written with a [`Writer`], read back with a
/// [`Reader`] to the same value (floats bit for bit).
///
/// By default the form is the one its serde description gives
/// ([`Writer::described`]): a type that derives `Serialize` and
/// `Deserialize` for its JSON writes `impl Codec for X {}` and has both. A
/// type whose JSON needs what that form cannot carry (a tagged enum, a
/// skipped field), or that wants fewer bytes, writes both methods.
pub trait Codec: Serialize + DeserializeOwned {
    /// Appends the value.
    fn write(&self, w: &mut Writer) {
        w.described(self);
    }

    /// Reads a value written by [`Codec::write`].
    ///
    /// # Errors
    /// Bytes that end early or do not form a value.
    fn read(r: &mut Reader<'_>) -> Result<Self, ReadError> {
        r.described()
    }
}

impl From<ReadError> for ProtocolError {
    fn from(e: ReadError) -> ProtocolError {
        ProtocolError::new(ErrorCode::BadMessage, e.what())
    }
}

/// Zigzag: small negative and positive numbers both small.
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// The inverse of [`zigzag`].
pub fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// Appends fields to a buffer.
#[derive(Clone, Debug, Default)]
pub struct Writer {
    /// The bytes written so far.
    pub bytes: Vec<u8>,
}

impl Writer {
    /// One byte.
    pub fn u8(&mut self, v: u8) {
        self.bytes.push(v);
    }

    /// A `u16`, little-endian.
    pub fn u16(&mut self, v: u16) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    /// A `u32`, little-endian.
    pub fn u32(&mut self, v: u32) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    /// A `u64`, little-endian (hashes).
    pub fn u64(&mut self, v: u64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    /// An unsigned integer, LEB128.
    pub fn varint(&mut self, v: u64) {
        varint::write(v, &mut self.bytes);
    }

    /// A signed integer, zigzag then LEB128.
    pub fn signed(&mut self, v: i64) {
        self.varint(zigzag(v));
    }

    /// A float, its bits little-endian.
    pub fn f32(&mut self, v: f32) {
        self.u32(v.to_bits());
    }

    /// A double, its bits little-endian.
    pub fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }

    /// A byte string: its length, then the bytes.
    pub fn byte_string(&mut self, v: &[u8]) {
        self.varint(v.len() as u64);
        self.bytes.extend_from_slice(v);
    }

    /// A string, as a byte string.
    pub fn text(&mut self, v: &str) {
        self.byte_string(v.as_bytes());
    }
}

/// Reads fields front to back; a read that fails leaves the reader where
/// the field started (a varint: where its bytes ran out).
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the first of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes, at: 0 }
    }

    /// A reader at byte `at` of `bytes`.
    pub fn at(bytes: &'a [u8], at: usize) -> Reader<'a> {
        Reader { bytes, at }
    }

    /// Where the next read starts.
    pub fn offset(&self) -> usize {
        self.at
    }

    /// How many bytes are left.
    pub fn remaining(&self) -> usize {
        self.bytes.len().saturating_sub(self.at)
    }

    /// The bytes not read yet.
    pub fn rest(&self) -> &'a [u8] {
        self.bytes.get(self.at..).unwrap_or(&[])
    }

    /// Moves past `n` bytes read elsewhere (at most those left).
    pub fn skip(&mut self, n: usize) {
        self.at = self.at.saturating_add(n.min(self.remaining()));
    }

    /// Whether every byte was read.
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The next `n` bytes.
    ///
    /// # Errors
    /// [`ReadError::End`] when fewer are left.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], ReadError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len())
            .ok_or(ReadError::End { at: self.at })?;
        let b = &self.bytes[self.at..end];
        self.at = end;
        Ok(b)
    }

    /// The next `N` bytes as an array.
    ///
    /// # Errors
    /// [`ReadError::End`] when fewer are left.
    pub fn array<const N: usize>(&mut self) -> Result<[u8; N], ReadError> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    /// One byte.
    ///
    /// # Errors
    /// At the end.
    pub fn u8(&mut self) -> Result<u8, ReadError> {
        Ok(self.array::<1>()?[0])
    }

    /// A little-endian `u16`.
    ///
    /// # Errors
    /// At the end.
    pub fn u16(&mut self) -> Result<u16, ReadError> {
        self.array().map(u16::from_le_bytes)
    }

    /// A little-endian `u32`.
    ///
    /// # Errors
    /// At the end.
    pub fn u32(&mut self) -> Result<u32, ReadError> {
        self.array().map(u32::from_le_bytes)
    }

    /// A little-endian `u64`.
    ///
    /// # Errors
    /// At the end.
    pub fn u64(&mut self) -> Result<u64, ReadError> {
        self.array().map(u64::from_le_bytes)
    }

    /// A float from its little-endian bits.
    ///
    /// # Errors
    /// At the end.
    pub fn f32(&mut self) -> Result<f32, ReadError> {
        self.u32().map(f32::from_bits)
    }

    /// A double from its little-endian bits.
    ///
    /// # Errors
    /// At the end.
    pub fn f64(&mut self) -> Result<f64, ReadError> {
        self.u64().map(f64::from_bits)
    }

    /// An unsigned LEB128 integer of at most 64 bits.
    ///
    /// # Errors
    /// At the end, or [`ReadError::TooLong`].
    pub fn varint(&mut self) -> Result<u64, ReadError> {
        varint::read(|| self.u8().ok()).map_err(|e| match e {
            VarintError::End => ReadError::End { at: self.at },
            VarintError::TooLong => ReadError::TooLong { at: self.at },
        })
    }

    /// A zigzag-coded signed integer.
    ///
    /// # Errors
    /// As [`Reader::varint`].
    pub fn signed(&mut self) -> Result<i64, ReadError> {
        self.varint().map(unzigzag)
    }

    /// A byte string.
    ///
    /// # Errors
    /// At the end, or a length past the end.
    pub fn byte_string(&mut self) -> Result<&'a [u8], ReadError> {
        let len = self.varint()?;
        let len = usize::try_from(len).map_err(|_| ReadError::End { at: self.at })?;
        self.take(len)
    }

    /// A UTF-8 string.
    ///
    /// # Errors
    /// As [`Reader::byte_string`], or [`ReadError::NotUtf8`].
    pub fn text(&mut self) -> Result<&'a str, ReadError> {
        let start = self.at;
        let bytes = self.byte_string()?;
        std::str::from_utf8(bytes).map_err(|_| ReadError::NotUtf8 { at: start })
    }

    /// A byte that must be 0 or 1.
    ///
    /// # Errors
    /// At the end, or [`ReadError::Invalid`] for any other byte.
    pub fn bool(&mut self) -> Result<bool, ReadError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(ReadError::Invalid {
                at: self.at - 1,
                what: "a flag that is neither 0 nor 1",
            }),
        }
    }

    /// A varint that must fit 32 bits.
    ///
    /// # Errors
    /// As [`Reader::varint`], or [`ReadError::Invalid`] past 32 bits.
    pub fn varint32(&mut self) -> Result<u32, ReadError> {
        let v = self.varint()?;
        u32::try_from(v).map_err(|_| ReadError::Invalid {
            at: self.at,
            what: "a number past 32 bits",
        })
    }

    /// A varint that must fit 16 bits.
    ///
    /// # Errors
    /// As [`Reader::varint`], or [`ReadError::Invalid`] past 16 bits.
    pub fn varint16(&mut self) -> Result<u16, ReadError> {
        let v = self.varint()?;
        u16::try_from(v).map_err(|_| ReadError::Invalid {
            at: self.at,
            what: "a number past 16 bits",
        })
    }

    /// A count of items that each take a byte at least: never more than
    /// the bytes left, so a hostile count cannot make a decoder reserve
    /// more than the frame could hold.
    ///
    /// # Errors
    /// As [`Reader::varint`]; [`ReadError::End`] when the count is larger
    /// than the bytes left.
    pub fn count(&mut self) -> Result<usize, ReadError> {
        let n = self.varint()?;
        usize::try_from(n)
            .ok()
            .filter(|n| *n <= self.remaining())
            .ok_or(ReadError::End { at: self.at })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_round_trips_and_a_short_read_names_its_byte() {
        let mut w = Writer::default();
        w.u8(7);
        w.u16(0xbeef);
        w.u32(0xdead_beef);
        w.u64(u64::MAX - 3);
        w.varint(300);
        w.signed(-5);
        w.f32(-1.5);
        w.f64(0.25);
        w.text("héllo");
        let mut r = Reader::new(&w.bytes);
        assert_eq!(r.u8(), Ok(7));
        assert_eq!(r.u16(), Ok(0xbeef));
        assert_eq!(r.u32(), Ok(0xdead_beef));
        assert_eq!(r.u64(), Ok(u64::MAX - 3));
        assert_eq!(r.varint(), Ok(300));
        assert_eq!(r.signed(), Ok(-5));
        assert_eq!(r.f32(), Ok(-1.5));
        assert_eq!(r.f64(), Ok(0.25));
        assert_eq!(r.text(), Ok("héllo"));
        assert!(r.is_empty());
        let at = r.offset();
        assert_eq!(r.u32(), Err(ReadError::End { at }));
        assert_eq!(r.offset(), at, "a failed read does not move");
    }

    #[test]
    fn hostile_lengths_counts_and_strings_are_errors() {
        let mut r = Reader::new(&[0xff, 0xff, 0xff, 0xff, 0x0f]);
        assert!(matches!(r.byte_string(), Err(ReadError::End { .. })));
        let mut r = Reader::new(&[3, 1, 2]);
        assert!(matches!(r.count(), Err(ReadError::End { .. })));
        let mut r = Reader::new(&[2, 1, 2]);
        assert_eq!(r.count(), Ok(2));
        let mut r = Reader::new(&[2, 0xc3, 0x28]);
        assert_eq!(r.text(), Err(ReadError::NotUtf8 { at: 0 }));
        let mut r = Reader::new(&[0xff; 11]);
        assert!(matches!(r.varint(), Err(ReadError::TooLong { .. })));
        for v in [0, 1, -1, i64::MIN, i64::MAX] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
    }
}
