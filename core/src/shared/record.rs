//! The recording format's bones, shared by the client's flight recorder
//! and the server's room recorder: the header, a byte writer and a reader
//! that never panics, and the state hash.
//!
//! A recording is a header followed by records, each a tag byte and its
//! fields. Integers are LEB128 varints (signed ones zigzag-coded), floats
//! their little-endian bits, byte strings a varint length and the bytes.
//! The layout of every record is in `docs/RECORDING.md`.
//!
//! The header: the magic `SKREC`, a kind byte (`C` a client, `R` a room),
//! the format version (u16 little-endian), the protocol version (varint),
//! the build (a string) and the configuration (a byte string: a client's
//! in binary, a room's as JSON).
//! A reader refuses another kind, format or protocol, with a message that
//! says which, before it reads a record.

use std::time::Duration;

use crate::shared::protocol::PROTOCOL_VERSION;
use crate::shared::varint::{self, VarintError};

/// The first five bytes of every recording.
pub const MAGIC: &[u8; 5] = b"SKREC";

/// The version of the record layout; bumped by any change to it.
pub const FORMAT_VERSION: u16 = 3;

/// The oldest layout this build still reads: format 1 is format 2 without
/// a room's end record; format 2 is format 3 without a joiner's datagram
/// bit (its own echoes).
pub const OLDEST_FORMAT: u16 = 1;

/// The build that wrote a recording: the crate's version.
pub const BUILD: &str = concat!("skirmish-core ", env!("CARGO_PKG_VERSION"));

/// Which side made a recording.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A client's flight recorder.
    Client,
    /// A server room's recorder.
    Room,
}

impl Kind {
    fn byte(self) -> u8 {
        match self {
            Kind::Client => b'C',
            Kind::Room => b'R',
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Client => "a client recording",
            Kind::Room => "a room recording",
        }
    }
}

/// Why a recording cannot be read. Every message says where and what.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    /// Not a recording at all.
    #[error("not a Skirmish recording (it does not start with SKREC)")]
    NotARecording,
    /// A recording of the other side.
    #[error("this is {found}, not {expected}")]
    WrongKind {
        /// What the file is.
        found: &'static str,
        /// What was asked for.
        expected: &'static str,
    },
    /// Written by a build with another format or protocol.
    #[error(
        "recorded by {build} with format {format} and protocol {protocol}; \
         this build reads formats {OLDEST_FORMAT} to {FORMAT_VERSION} and protocol {PROTOCOL_VERSION} \
         only (replay it with the build that made it)"
    )]
    Version {
        /// The recording's format version.
        format: u16,
        /// The recording's protocol version.
        protocol: u32,
        /// The build that made it.
        build: String,
    },
    /// The bytes end or go wrong inside a header or record.
    #[error("damaged at byte {offset}: {what}")]
    Damaged {
        /// Where reading stopped.
        offset: usize,
        /// What was wrong.
        what: String,
    },
}

/// A recording's header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The build that made it.
    pub build: String,
    /// The configuration the recorded side started with (a client's in
    /// binary, a room's as JSON).
    pub config: Vec<u8>,
}

/// Appends the fields of a recording to a buffer.
#[derive(Clone, Debug, Default)]
pub struct Writer {
    /// The bytes written so far.
    pub bytes: Vec<u8>,
}

impl Writer {
    /// A writer holding the header of a `kind` recording with `config`.
    pub fn with_header(kind: Kind, config: &[u8]) -> Writer {
        let mut w = Writer::default();
        w.bytes.extend_from_slice(MAGIC);
        w.bytes.push(kind.byte());
        w.bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        w.varint(u64::from(PROTOCOL_VERSION));
        w.text(BUILD);
        w.blob(config);
        w
    }

    /// One byte.
    pub fn u8(&mut self, v: u8) {
        self.bytes.push(v);
    }

    /// An unsigned integer, LEB128.
    pub fn varint(&mut self, v: u64) {
        varint::write(v, &mut self.bytes);
    }

    /// A signed integer, zigzag then LEB128.
    pub fn signed(&mut self, v: i64) {
        self.varint(((v << 1) ^ (v >> 63)) as u64);
    }

    /// A float, its bits little-endian.
    pub fn f32(&mut self, v: f32) {
        self.bytes.extend_from_slice(&v.to_bits().to_le_bytes());
    }

    /// A double, its bits little-endian.
    pub fn f64(&mut self, v: f64) {
        self.bytes.extend_from_slice(&v.to_bits().to_le_bytes());
    }

    /// A `u64`, little-endian (hashes).
    pub fn u64(&mut self, v: u64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    /// A byte string: its length, then the bytes.
    pub fn blob(&mut self, v: &[u8]) {
        self.varint(v.len() as u64);
        self.bytes.extend_from_slice(v);
    }

    /// A string, as a byte string.
    pub fn text(&mut self, v: &str) {
        self.blob(v.as_bytes());
    }
}

/// Reads the fields of a recording; every read that runs past the end or
/// finds nonsense is a [`FormatError::Damaged`] naming the byte.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

/// What a [`FormatError::Damaged`] says when the bytes stop inside a record:
/// a file cut short (a crash, a kill), not one with wrong bytes.
pub const CUT_SHORT: &str = "the recording ends inside a record";

impl FormatError {
    /// Whether the bytes stopped inside a record (a file cut short): what
    /// came before it is whole.
    pub fn is_cut_short(&self) -> bool {
        matches!(self, FormatError::Damaged { what, .. } if what == CUT_SHORT)
    }
}

impl<'a> Reader<'a> {
    /// Reads the header of a `kind` recording and returns it with a reader
    /// at the first record.
    ///
    /// # Errors
    /// Not a recording, another kind, format or protocol, or damaged.
    pub fn open(bytes: &'a [u8], kind: Kind) -> Result<(Header, Reader<'a>), FormatError> {
        if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
            return Err(FormatError::NotARecording);
        }
        let mut r = Reader {
            bytes,
            at: MAGIC.len(),
        };
        let found = match r.u8()? {
            b'C' => Kind::Client,
            b'R' => Kind::Room,
            other => return Err(r.damaged(format!("unknown recording kind {other:#04x}"))),
        };
        let format = u16::from_le_bytes([r.u8()?, r.u8()?]);
        let protocol = r.varint()?;
        let build = r.text()?.to_string();
        let protocol = u32::try_from(protocol).unwrap_or(u32::MAX);
        if !(OLDEST_FORMAT..=FORMAT_VERSION).contains(&format) || protocol != PROTOCOL_VERSION {
            return Err(FormatError::Version {
                format,
                protocol,
                build,
            });
        }
        if found != kind {
            return Err(FormatError::WrongKind {
                found: found.name(),
                expected: kind.name(),
            });
        }
        let config = r.blob()?.to_vec();
        Ok((Header { build, config }, r))
    }

    /// A reader of bare fields (no header): a header's configuration.
    pub fn fields(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes, at: 0 }
    }

    /// The next record, read by `read`, with the offset it starts at;
    /// `None` at the end or once a read failed (`failed` remembers it).
    pub fn next_record<T>(
        &mut self,
        failed: &mut bool,
        read: impl FnOnce(&mut Reader<'a>) -> Result<T, FormatError>,
    ) -> Option<Result<(usize, T), FormatError>> {
        if *failed || self.is_empty() {
            return None;
        }
        let at = self.at;
        let record = read(self);
        *failed = record.is_err();
        Some(record.map(|r| (at, r)))
    }

    /// Where the next read starts.
    pub fn offset(&self) -> usize {
        self.at
    }

    /// Whether every byte was read.
    pub fn is_empty(&self) -> bool {
        self.at >= self.bytes.len()
    }

    /// A [`FormatError::Damaged`] at the current byte.
    pub fn damaged(&self, what: impl Into<String>) -> FormatError {
        FormatError::Damaged {
            offset: self.at,
            what: what.into(),
        }
    }

    /// One byte.
    ///
    /// # Errors
    /// At the end.
    pub fn u8(&mut self) -> Result<u8, FormatError> {
        let v = *self
            .bytes
            .get(self.at)
            .ok_or_else(|| self.damaged(CUT_SHORT))?;
        self.at += 1;
        Ok(v)
    }

    /// An unsigned LEB128 integer of at most 64 bits.
    ///
    /// # Errors
    /// At the end, or longer than 64 bits.
    pub fn varint(&mut self) -> Result<u64, FormatError> {
        let read = varint::read(|| self.u8().ok());
        read.map_err(|e| match e {
            VarintError::End => self.damaged(CUT_SHORT),
            VarintError::TooLong => self.damaged("an integer longer than 64 bits"),
        })
    }

    /// A zigzag-coded signed integer.
    ///
    /// # Errors
    /// As [`Reader::varint`].
    pub fn signed(&mut self) -> Result<i64, FormatError> {
        let v = self.varint()?;
        Ok(((v >> 1) as i64) ^ -((v & 1) as i64))
    }

    /// A float.
    ///
    /// # Errors
    /// At the end.
    pub fn f32(&mut self) -> Result<f32, FormatError> {
        let b = self.take(4)?;
        Ok(f32::from_bits(u32::from_le_bytes([b[0], b[1], b[2], b[3]])))
    }

    /// A double.
    ///
    /// # Errors
    /// At the end.
    pub fn f64(&mut self) -> Result<f64, FormatError> {
        self.u64().map(f64::from_bits)
    }

    /// A little-endian `u64`.
    ///
    /// # Errors
    /// At the end.
    pub fn u64(&mut self) -> Result<u64, FormatError> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    /// A byte string.
    ///
    /// # Errors
    /// At the end, or a length past the end.
    pub fn blob(&mut self) -> Result<&'a [u8], FormatError> {
        let len = self.varint()?;
        let len = usize::try_from(len).map_err(|_| self.damaged("a length past the end"))?;
        self.take(len)
    }

    /// A UTF-8 string.
    ///
    /// # Errors
    /// As [`Reader::blob`], or not UTF-8.
    pub fn text(&mut self) -> Result<&'a str, FormatError> {
        let start = self.at;
        let bytes = self.blob()?;
        std::str::from_utf8(bytes).map_err(|_| FormatError::Damaged {
            offset: start,
            what: "a string that is not UTF-8".to_string(),
        })
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], FormatError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| self.damaged(CUT_SHORT))?;
        let b = &self.bytes[self.at..end];
        self.at = end;
        Ok(b)
    }
}

/// A time as nanoseconds since the previous one, zigzag-coded (times may
/// go backwards: a shell's clock is whatever it says).
#[derive(Clone, Copy, Debug, Default)]
pub struct TimeCoder {
    last: u64,
}

impl TimeCoder {
    /// Writes `t`.
    pub fn write(&mut self, w: &mut Writer, t: Duration) {
        let ns = u64::try_from(t.as_nanos()).unwrap_or(u64::MAX);
        w.signed(ns.wrapping_sub(self.last) as i64);
        self.last = ns;
    }

    /// Reads a time.
    ///
    /// # Errors
    /// As [`Reader::signed`].
    pub fn read(&mut self, r: &mut Reader<'_>) -> Result<Duration, FormatError> {
        let delta = r.signed()?;
        self.last = self.last.wrapping_add(delta as u64);
        Ok(Duration::from_nanos(self.last))
    }
}

/// A running 64-bit hash of what a side did: fast, the same on every
/// target, and not for security.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StateHash(pub u64);

impl Default for StateHash {
    fn default() -> Self {
        StateHash(0xcbf2_9ce4_8422_2325)
    }
}

impl StateHash {
    /// Folds in one word.
    pub fn word(&mut self, v: u64) {
        self.0 = (self.0 ^ v)
            .wrapping_mul(0x0000_0100_0000_01b3)
            .rotate_left(23)
            .wrapping_add(0x9e37_79b9_7f4a_7c15);
    }

    /// Folds in a float's bits.
    pub fn f32(&mut self, v: f32) {
        self.word(u64::from(v.to_bits()));
    }

    /// Folds in bytes, then their length: 32 bytes at a time in four
    /// independent lanes (the room hashes every frame it sends, so this is
    /// on the server's tick), then eight at a time.
    pub fn bytes(&mut self, b: &[u8]) {
        let word = |c: &[u8], i: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&c[i * 8..i * 8 + 8]);
            u64::from_le_bytes(a)
        };
        let mut wide = b.chunks_exact(32);
        if b.len() >= 32 {
            let h = self.0;
            let mut lanes = [h, !h, h.rotate_left(17), h.rotate_left(41)];
            for c in &mut wide {
                for (i, lane) in lanes.iter_mut().enumerate() {
                    *lane = (*lane ^ word(c, i))
                        .wrapping_mul(0x0000_0100_0000_01b3)
                        .rotate_left(23);
                }
            }
            for lane in lanes {
                self.word(lane);
            }
        }
        let mut chunks = wide.remainder().chunks_exact(8);
        for c in &mut chunks {
            self.word(word(c, 0));
        }
        let mut a = [0u8; 8];
        a[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
        self.word(u64::from_le_bytes(a));
        self.word(b.len() as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip() {
        let mut w = Writer::with_header(Kind::Client, b"{}");
        w.varint(u64::MAX);
        w.signed(-5);
        w.f32(-0.0);
        w.u64(7);
        w.text("héllo");
        let mut times = TimeCoder::default();
        times.write(&mut w, Duration::from_millis(20));
        times.write(&mut w, Duration::from_millis(10));
        let (header, mut r) = Reader::open(&w.bytes, Kind::Client).expect("header");
        assert_eq!(header.config, b"{}");
        assert_eq!(header.build, BUILD);
        assert_eq!(r.varint(), Ok(u64::MAX));
        assert_eq!(r.signed(), Ok(-5));
        assert_eq!(r.f32().map(f32::to_bits), Ok((-0.0f32).to_bits()));
        assert_eq!(r.u64(), Ok(7));
        assert_eq!(r.text(), Ok("héllo"));
        let mut times = TimeCoder::default();
        assert_eq!(times.read(&mut r), Ok(Duration::from_millis(20)));
        assert_eq!(times.read(&mut r), Ok(Duration::from_millis(10)));
        assert!(r.is_empty());
        assert!(matches!(r.u8(), Err(FormatError::Damaged { .. })));
    }

    #[test]
    fn another_kind_or_version_is_refused_by_name() {
        let w = Writer::with_header(Kind::Room, b"{}");
        let err = Reader::open(&w.bytes, Kind::Client)
            .map(|_| ())
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "this is a room recording, not a client recording"
        );
        let mut old = w.bytes.clone();
        old[6] = 0;
        old[7] = 0;
        let err = Reader::open(&old, Kind::Room).map(|_| ()).unwrap_err();
        assert!(err.to_string().contains("format 0"), "{err}");
        assert_eq!(
            Reader::open(b"PK\x03\x04", Kind::Room).map(|_| ()),
            Err(FormatError::NotARecording)
        );
    }

    #[test]
    fn every_byte_counts_in_the_hash() {
        // 110 bytes: three 32-byte blocks, one 8-byte word and a 6-byte tail.
        let bytes: Vec<u8> = (0..110u8).collect();
        let of = |b: &[u8]| {
            let mut h = StateHash::default();
            h.bytes(b);
            h.0
        };
        let base = of(&bytes);
        for i in 0..bytes.len() {
            let mut changed = bytes.clone();
            changed[i] ^= 1;
            assert_ne!(of(&changed), base, "byte {i}");
        }
        assert_ne!(of(&bytes[..109]), base);
    }

    #[test]
    fn an_overlong_integer_is_damage() {
        let mut w = Writer::with_header(Kind::Client, b"");
        w.bytes.extend_from_slice(&[0xff; 11]);
        let (_, mut r) = Reader::open(&w.bytes, Kind::Client).expect("header");
        assert!(matches!(r.varint(), Err(FormatError::Damaged { .. })));
    }
}
