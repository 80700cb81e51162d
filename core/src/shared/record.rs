//! The recording format's bones, shared by the client's flight recorder
//! and the server's room recorder: the header, reading it through the one
//! byte reader ([`crate::shared::bytes`]), and the state hash.
//!
//! A recording is a header followed by records, each a tag byte and its
//! fields. Integers are LEB128 varints (signed ones zigzag-coded), floats
//! their little-endian bits, byte strings a varint length and the bytes.
//! The layout of every record is in `docs/RECORDING.md`.
//!
//! The header: the magic `SKREC`, a kind byte (`C` a client, `R` a room),
//! the format version (u16 little-endian), the protocol version (varint),
//! the build (a string), the game's name (a string) and version (varint;
//! from format 4) and the configuration (a byte string: a client's in
//! binary, a room's as JSON); from format 6 the CRC-32C of all that.
//! A reader refuses another kind, format, protocol or game, with a message
//! that says which, before it reads a record.
//!
//! From format 6 the records come in checksummed chunks
//! ([`chunks`](self::chunks)): a changed byte anywhere is refused as
//! [`FormatError::Damaged`], naming the header or the chunk it is in.

use std::time::Duration;

use checksum::crc32c;

use crate::shared::bytes::ReadError;
use crate::shared::protocol::{GameId, PROTOCOL_VERSION};

mod checksum;
mod chunks;

use self::chunks::{check_header, HeaderCheck};
pub use self::chunks::{
    reseal_recording, RecordWriter, Records, CLIENT_CHUNK, FIRST_CHECKED_FORMAT,
};

/// The first five bytes of every recording.
pub const MAGIC: &[u8; 5] = b"SKREC";

/// The version of the record layout; bumped by any change to it.
/// Format 6: the header's checksum and the records in checksummed chunks.
/// Format 7: the header holds the game's wire shape after its version.
pub const FORMAT_VERSION: u16 = 7;

/// The first format whose header holds the game's wire shape
/// ([`crate::protocol::shape`]); an older recording's game is checked by
/// name and version only.
pub const FIRST_SHAPED_FORMAT: u16 = 7;

/// The oldest layout whose header this build reads: format 4, the first
/// whose header names its game (a format-4 recording is refused by its
/// game's name and version: its inputs are in its game's old layout).
/// Formats 1 to 3 named no game and are refused by their format: replay
/// them with the build that made them.
pub const OLDEST_FORMAT: u16 = 4;

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
    /// A recording of another game, or of another version of it.
    #[error(
        "this is a recording of {}; this build plays {} only",
        .found.told(.expected),
        .expected.told(.found)
    )]
    Game {
        /// The recording's game.
        found: GameId,
        /// This build's game.
        expected: GameId,
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
    /// The format it is written in.
    pub format: u16,
    /// The build that made it.
    pub build: String,
    /// The game recorded.
    pub game: GameId,
    /// The configuration the recorded side started with (a client's in
    /// binary, a room's as JSON).
    pub config: Vec<u8>,
    /// The byte the configuration starts at.
    pub config_at: usize,
}

pub use crate::shared::bytes::{Reader, Writer};

impl Writer {
    /// A writer holding the header of a `kind` recording of `game` with
    /// `config`, and its checksum. Records follow in chunks: see
    /// [`RecordWriter`].
    pub fn with_header(kind: Kind, game: &GameId, config: &[u8]) -> Writer {
        let mut w = Writer::default();
        w.bytes.extend_from_slice(MAGIC);
        w.u8(kind.byte());
        w.u16(FORMAT_VERSION);
        w.varint(u64::from(PROTOCOL_VERSION));
        w.text(BUILD);
        w.text(&game.name);
        w.varint(u64::from(game.version));
        w.u32(game.shape.unwrap_or(0));
        w.byte_string(config);
        let crc = crc32c(&w.bytes);
        w.u32(crc);
        w
    }
}

/// What a [`FormatError::Damaged`] says when the bytes stop inside a record:
/// a file cut short (a crash, a kill), not one with wrong bytes.
pub const CUT_SHORT: &str = "the recording ends inside a record";

impl From<ReadError> for FormatError {
    fn from(e: ReadError) -> FormatError {
        let (offset, what) = match e {
            ReadError::End { at } => (at, CUT_SHORT),
            ReadError::TooLong { at } => (at, "an integer longer than 64 bits"),
            other => (other.at(), other.what()),
        };
        FormatError::Damaged {
            offset,
            what: what.to_string(),
        }
    }
}

impl FormatError {
    /// Whether the bytes stopped inside a record (a file cut short): what
    /// came before it is whole.
    pub fn is_cut_short(&self) -> bool {
        matches!(self, FormatError::Damaged { what, .. } if what == CUT_SHORT)
    }
}

impl<'a> Reader<'a> {
    /// Reads the header of a `kind` recording and returns it with its
    /// records. From format 6 the header's checksum is checked first, so
    /// a changed byte in it is damage, not another kind, game or version.
    ///
    /// # Errors
    /// Not a recording, another kind, format or protocol, or damaged.
    pub fn open(
        bytes: &'a [u8],
        kind: Kind,
        expected: &GameId,
    ) -> Result<(Header, Records<'a>), FormatError> {
        if bytes.len() < MAGIC.len() {
            return Err(FormatError::NotARecording);
        }
        let check = check_header(bytes)?;
        if &bytes[..MAGIC.len()] != MAGIC {
            return Err(FormatError::NotARecording);
        }
        let mut r = Reader::at(bytes, MAGIC.len());
        let found = match r.u8()? {
            b'C' => Kind::Client,
            b'R' => Kind::Room,
            other => return Err(r.damaged(format!("unknown recording kind {other:#04x}"))),
        };
        let format = r.u16()?;
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
        // Read only once the format is known to be one this build reads.
        let name = r.text()?.to_string();
        let version = r.varint32()?;
        // From format 7 the game's wire shape follows (0: not said).
        let shape = if format >= FIRST_SHAPED_FORMAT {
            Some(r.u32()?).filter(|&s| s != 0)
        } else {
            None
        };
        let game = GameId {
            name,
            version,
            shape,
        };
        if !game.matches(expected) {
            return Err(FormatError::Game {
                found: game,
                expected: expected.clone(),
            });
        }
        if found != kind {
            return Err(FormatError::WrongKind {
                found: found.name(),
                expected: kind.name(),
            });
        }
        let config = r.byte_string()?;
        let config_at = r.offset() - config.len();
        let records = match check {
            HeaderCheck::Whole(start) => Records::chunked(bytes, start),
            HeaderCheck::Unchecked => Records::straight(r),
        };
        Ok((
            Header {
                format,
                build,
                game,
                config: config.to_vec(),
                config_at,
            },
            records,
        ))
    }

    /// A [`FormatError::Damaged`] at the current byte.
    pub fn damaged(&self, what: impl Into<String>) -> FormatError {
        FormatError::Damaged {
            offset: self.offset(),
            what: what.into(),
        }
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

    /// A game's identity, as its recordings carry it.
    fn ships_2() -> GameId {
        GameId {
            name: "ships".to_string(),
            version: 2,
            shape: Some(0x5bad_f00d),
        }
    }

    /// A reader at the first byte after `w`'s header (its checksum).
    fn past_header<'a>(bytes: &'a [u8], header: &Header) -> Reader<'a> {
        Reader::at(bytes, header.config_at + header.config.len() + 4)
    }

    #[test]
    fn fields_round_trip() {
        let mut w = Writer::with_header(Kind::Client, &ships_2(), b"{}");
        w.varint(u64::MAX);
        w.signed(-5);
        w.f32(-0.0);
        w.u64(7);
        w.text("héllo");
        let mut times = TimeCoder::default();
        times.write(&mut w, Duration::from_millis(20));
        times.write(&mut w, Duration::from_millis(10));
        let (header, _) = Reader::open(&w.bytes, Kind::Client, &ships_2()).expect("header");
        assert_eq!(header.config, b"{}");
        assert_eq!(header.build, BUILD);
        assert_eq!(header.format, FORMAT_VERSION);
        let mut r = past_header(&w.bytes, &header);
        assert_eq!(r.varint(), Ok(u64::MAX));
        assert_eq!(r.signed(), Ok(-5));
        assert_eq!(r.f32().map(f32::to_bits), Ok((-0.0f32).to_bits()));
        assert_eq!(r.u64(), Ok(7));
        assert_eq!(r.text(), Ok("héllo"));
        let mut times = TimeCoder::default();
        assert_eq!(times.read(&mut r), Ok(Duration::from_millis(20)));
        assert_eq!(times.read(&mut r), Ok(Duration::from_millis(10)));
        assert!(r.is_empty());
        let cut = FormatError::from(r.u8().unwrap_err());
        assert!(cut.is_cut_short(), "{cut}");
    }

    #[test]
    fn another_kind_or_version_is_refused_by_name() {
        let w = Writer::with_header(Kind::Room, &ships_2(), b"{}");
        let err = Reader::open(&w.bytes, Kind::Client, &ships_2())
            .map(|_| ())
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "this is a room recording, not a client recording"
        );
        // A format-3 header (no checksum: it named no game): refused by
        // its format, never guessed.
        let mut old = w.bytes[..w.bytes.len() - 4].to_vec();
        old[6] = 3;
        let err = Reader::open(&old, Kind::Room, &ships_2())
            .map(|_| ())
            .unwrap_err();
        assert!(
            matches!(err, FormatError::Version { format: 3, .. }),
            "{err}"
        );
        // Format 6's own format changed in place: its checksum tells.
        let mut changed = w.bytes.clone();
        changed[6] = 0;
        let err = Reader::open(&changed, Kind::Room, &ships_2())
            .map(|_| ())
            .unwrap_err();
        assert!(
            matches!(&err, FormatError::Damaged { offset: 6, what } if what.contains("format 0")),
            "{err}"
        );
        assert_eq!(
            Reader::open(b"PK\x03\x04", Kind::Room, &ships_2()).map(|_| ()),
            Err(FormatError::NotARecording)
        );
        let (header, _) = Reader::open(&w.bytes, Kind::Room, &ships_2()).expect("ours");
        assert_eq!(header.game, ships_2());
        let mut other = Writer::default();
        other.bytes.extend_from_slice(&w.bytes[..8]);
        other.varint(u64::from(PROTOCOL_VERSION));
        other.text(BUILD);
        other.text("boats");
        other.varint(1);
        other.u32(0); // no shape said
        other.byte_string(b"{}");
        other.u32(crc32c(&other.bytes));
        let err = Reader::open(&other.bytes, Kind::Room, &ships_2())
            .map(|_| ())
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "this is a recording of boats 1; this build plays ships 2 only"
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
        let mut w = Writer::with_header(Kind::Client, &ships_2(), b"");
        w.bytes.extend_from_slice(&[0xff; 11]);
        let (header, _) = Reader::open(&w.bytes, Kind::Client, &ships_2()).expect("header");
        let err = FormatError::from(past_header(&w.bytes, &header).varint().unwrap_err());
        assert!(
            matches!(&err, FormatError::Damaged { what, .. } if what.contains("64 bits")),
            "{err}"
        );
    }
}
