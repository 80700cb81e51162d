//! A recording's checksums (format 6 on): the header ends with the
//! CRC-32C of its bytes, and the records come in chunks, each its length
//! (u32 little-endian), the CRC-32C of those four bytes, the records, and
//! their CRC-32C. A reader checks a chunk whole before it reads a record
//! of it, so a changed byte is refused, named by the chunk it is in, and
//! never replayed. A chunk that runs past the end of the file is a file
//! cut short (a crash mid-write): the length's own check tells that from
//! a changed length.
//!
//! Writers seal a chunk where a reader would like to stop: a room after
//! each tick (and whenever the shell takes the bytes), a page after the
//! frame that brings its chunk to [`CLIENT_CHUNK`] bytes. Between two
//! records the bytes are always a whole recording: the open chunk's
//! length and checksums are rewritten with each record, so a page can
//! save its recording at any moment.
//!
//! CRC-32C finds every change of up to 32 bits in a row, so every
//! single changed byte; it is a check against damage, not a signature.

use super::checksum::{crc32c, crc32c_append};

use super::{FormatError, Kind, Writer, CUT_SHORT, FIRST_SHAPED_FORMAT, FORMAT_VERSION, MAGIC};
use crate::shared::bytes::{ReadError, Reader};
use crate::shared::protocol::GameId;

/// The first format whose header and records carry checksums.
pub const FIRST_CHECKED_FORMAT: u16 = 6;

/// A page's recorder seals its chunk after the frame that brings it to
/// this many bytes: 12 bytes of checks per 4 KiB (0.3 %), about a second
/// of a 16-player room.
pub const CLIENT_CHUNK: usize = 4096;

/// A chunk's length and the length's checksum.
const HEAD: usize = 8;
/// A chunk's checksum, after its records.
const TAIL: usize = 4;
/// A chunk is sealed once its records reach this, whatever its writer
/// does: its length always fits its four bytes.
const MOST_CHUNK: usize = 1 << 24;

/// A recording being written: its header, then records in checksummed
/// chunks. The bytes are a whole recording after every record.
#[derive(Clone, Debug)]
pub struct RecordWriter {
    w: Writer,
    /// The chunk records go to, once one is open.
    open: Option<OpenChunk>,
}

/// Where the open chunk starts, and the CRC-32C of its records so far.
#[derive(Clone, Copy, Debug)]
struct OpenChunk {
    at: usize,
    crc: u32,
}

impl RecordWriter {
    /// A writer holding the header of a `kind` recording of `game` with
    /// `config`.
    pub fn new(kind: Kind, game: &GameId, config: &[u8]) -> RecordWriter {
        RecordWriter {
            w: Writer::with_header(kind, game, config),
            open: None,
        }
    }

    /// The recording so far (since the last [`RecordWriter::take`]).
    pub fn bytes(&self) -> &[u8] {
        &self.w.bytes
    }

    /// How many bytes it holds.
    pub fn len(&self) -> usize {
        self.w.bytes.len()
    }

    /// Whether it holds no byte (everything was taken).
    pub fn is_empty(&self) -> bool {
        self.w.bytes.is_empty()
    }

    /// The bytes of records in the open chunk.
    pub fn open_len(&self) -> usize {
        self.open
            .map_or(0, |c| self.w.bytes.len() - c.at - HEAD - TAIL)
    }

    /// Room for more bytes before the buffer grows again.
    pub fn spare(&self) -> usize {
        self.w.bytes.capacity() - self.w.bytes.len()
    }

    /// Grows the buffer by exactly `more` bytes of room.
    pub fn reserve_exact(&mut self, more: usize) {
        self.w.bytes.reserve_exact(more);
    }

    /// Appends one record, written by `write`, to the open chunk (opening
    /// one if none is), and brings the chunk's length and checksums up to
    /// date.
    pub fn record(&mut self, write: impl FnOnce(&mut Writer)) {
        let bytes = &mut self.w.bytes;
        let chunk = if let Some(chunk) = self.open {
            bytes.truncate(bytes.len() - TAIL);
            chunk
        } else {
            let at = bytes.len();
            bytes.extend_from_slice(&[0; HEAD]);
            OpenChunk { at, crc: 0 }
        };
        let start = self.w.bytes.len();
        write(&mut self.w);
        let bytes = &mut self.w.bytes;
        let crc = crc32c_append(chunk.crc, &bytes[start..]);
        bytes.extend_from_slice(&crc.to_le_bytes());
        let body = bytes.len() - chunk.at - HEAD - TAIL;
        let len = (body as u32).to_le_bytes();
        bytes[chunk.at..chunk.at + 4].copy_from_slice(&len);
        bytes[chunk.at + 4..chunk.at + HEAD].copy_from_slice(&crc32c(&len).to_le_bytes());
        self.open = Some(OpenChunk { crc, ..chunk });
        if body >= MOST_CHUNK {
            self.seal();
        }
    }

    /// Ends the open chunk: the next record starts another.
    pub fn seal(&mut self) {
        self.open = None;
    }

    /// Moves the bytes so far to the end of `into` (the open chunk
    /// sealed): the next record starts a chunk.
    pub fn take(&mut self, into: &mut Vec<u8>) {
        self.seal();
        into.append(&mut self.w.bytes);
    }
}

/// Where a header laid out as format 6 writes it ends (where its checksum
/// starts), and the checksum; no value is read, only lengths.
fn header_frame(bytes: &[u8], shaped: bool) -> Result<(usize, u32), ReadError> {
    // Past the magic, the kind and the format.
    let mut r = Reader::at(bytes, MAGIC.len() + 3);
    r.varint()?;
    r.byte_string()?;
    r.byte_string()?;
    r.varint()?;
    if shaped {
        r.u32()?;
    }
    r.byte_string()?;
    let end = r.offset();
    Ok((end, r.u32()?))
}

/// The CRC-32C of a header up to `end` as this build writes it: with the
/// magic and this build's format in place of what the file says.
fn header_crc_as_written(bytes: &[u8], end: usize) -> u32 {
    let crc = crc32c(MAGIC);
    let crc = crc32c_append(crc, &bytes[MAGIC.len()..=MAGIC.len()]);
    let crc = crc32c_append(crc, &FORMAT_VERSION.to_le_bytes());
    crc32c_append(crc, &bytes[MAGIC.len() + 3..end])
}

/// What a header's checksum says.
pub(super) enum HeaderCheck {
    /// A checked format, whole: its records start at this byte.
    Whole(usize),
    /// An older format (or a newer, or not a recording): no checksum to
    /// check, the header is read as before.
    Unchecked,
}

/// Checks the header's checksum, before any of its values is believed.
///
/// A header whose checksum holds once the magic and the format are put
/// back as this build writes them is a header of this format with one of
/// those changed: damaged, not another format or not a recording.
///
/// # Errors
/// [`FormatError::Damaged`] at byte 0 (byte 6 for a changed format).
pub(super) fn check_header(bytes: &[u8]) -> Result<HeaderCheck, FormatError> {
    let magic = bytes.starts_with(MAGIC);
    let format = bytes.get(6..8).map(|f| u16::from_le_bytes([f[0], f[1]]));
    let checked =
        magic && format.is_some_and(|f| (FIRST_CHECKED_FORMAT..=FORMAT_VERSION).contains(&f));
    let damaged = |offset, what: String| FormatError::Damaged { offset, what };
    // The layout of the format the file says when this build reads it,
    // else this build's own (whose format may be the damaged byte).
    let shaped = !checked || format.is_some_and(|f| f >= FIRST_SHAPED_FORMAT);
    match header_frame(bytes, shaped) {
        Ok((end, crc)) if checked && crc32c(&bytes[..end]) == crc => {
            Ok(HeaderCheck::Whole(end + 4))
        }
        Ok((end, crc)) if !checked && header_crc_as_written(bytes, end) == crc => Err(if magic {
            damaged(
                6,
                format!(
                    "the header fails its checksum: it says format {}, where its checksum holds for format {FORMAT_VERSION}",
                    format.unwrap_or_default()
                ),
            )
        } else {
            damaged(
                0,
                "the header fails its checksum: it does not start with SKREC, where its checksum holds for SKREC"
                    .to_string(),
            )
        }),
        Ok(_) if checked => Err(damaged(0, "the header fails its checksum".to_string())),
        Err(e) if checked => Err(damaged(
            0,
            format!(
                "the header is cut short or a length in it is damaged (it runs past byte {})",
                e.at()
            ),
        )),
        _ => Ok(HeaderCheck::Unchecked),
    }
}

/// The records of a recording after its header: read straight (formats 4
/// and 5), or a chunk at a time, each checked whole before a record of it
/// is read (format 6 on).
#[derive(Clone, Debug)]
pub struct Records<'a> {
    bytes: &'a [u8],
    /// The records of the chunk being read (all of them before format 6).
    r: Reader<'a>,
    /// Where the next chunk starts (format 6 on).
    next: Option<usize>,
    failed: bool,
}

impl<'a> Records<'a> {
    /// The records of an older format, from where `r` stands.
    pub(super) fn straight(r: Reader<'a>) -> Records<'a> {
        Records {
            bytes: &[],
            r,
            next: None,
            failed: false,
        }
    }

    /// The chunks of a checked format, from byte `start` of `bytes`.
    pub(super) fn chunked(bytes: &'a [u8], start: usize) -> Records<'a> {
        Records {
            bytes,
            r: Reader::at(&bytes[..start.min(bytes.len())], start),
            next: Some(start),
            failed: false,
        }
    }

    /// Where the next record starts (or the chunk it is in, when the
    /// chunk being read is done): where a file cut short stops being
    /// whole.
    pub fn offset(&self) -> usize {
        match self.next {
            Some(next) if self.r.is_empty() => next,
            _ => self.r.offset(),
        }
    }

    /// The next record, read by `read`, with the offset it starts at;
    /// `None` at the end or once a read failed. `unit` says what the next
    /// chunk holds (say "the calls after tick 57"), for a chunk that fails
    /// its checksum.
    pub fn next_record<T>(
        &mut self,
        unit: impl Fn() -> String,
        read: impl FnOnce(&mut Reader<'a>) -> Result<T, FormatError>,
    ) -> Option<Result<(usize, T), FormatError>> {
        if self.failed {
            return None;
        }
        if let Err(e) = self.fill(&unit) {
            self.failed = true;
            return Some(Err(e));
        }
        if self.r.is_empty() {
            return None;
        }
        let at = self.r.offset();
        let record = read(&mut self.r).map_err(|e| {
            // A chunk was whole: running out inside it is not a cut.
            if self.next.is_some() && e.is_cut_short() {
                FormatError::Damaged {
                    offset: at,
                    what: "a record that runs past the end of its chunk".to_string(),
                }
            } else {
                e
            }
        });
        self.failed = record.is_err();
        Some(record.map(|r| (at, r)))
    }

    /// Once the chunk being read is done, moves to the next one that has
    /// records, checked whole.
    fn fill(&mut self, unit: &impl Fn() -> String) -> Result<(), FormatError> {
        let Some(mut at) = self.next else {
            return Ok(());
        };
        while self.r.is_empty() && at < self.bytes.len() {
            let (start, end) = check_chunk(self.bytes, at, unit)?;
            self.r = Reader::at(&self.bytes[..end], start);
            at = end + TAIL;
            self.next = Some(at);
        }
        Ok(())
    }
}

/// Checks the chunk at `at`: where its records start and end.
fn check_chunk(
    bytes: &[u8],
    at: usize,
    unit: &impl Fn() -> String,
) -> Result<(usize, usize), FormatError> {
    let cut = || FormatError::Damaged {
        offset: at,
        what: CUT_SHORT.to_string(),
    };
    let head = bytes.get(at..at + HEAD).ok_or_else(cut)?;
    let len = [head[0], head[1], head[2], head[3]];
    let check = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
    if crc32c(&len) != check {
        return Err(FormatError::Damaged {
            offset: at,
            what: format!("the length of the chunk of {} fails its checksum", unit()),
        });
    }
    let len = u32::from_le_bytes(len) as usize;
    let start = at + HEAD;
    let end = start.checked_add(len).ok_or_else(cut)?;
    let body = bytes.get(start..end).ok_or_else(cut)?;
    let tail = bytes.get(end..end + TAIL).ok_or_else(cut)?;
    if crc32c(body).to_le_bytes() != tail {
        return Err(FormatError::Damaged {
            offset: at,
            what: format!(
                "the chunk of {} ({len} bytes of records from byte {start}) fails its checksum",
                unit()
            ),
        });
    }
    Ok((start, end))
}

/// Recomputes every checksum of a recording of a checked format in
/// place: the header's and each chunk's.
///
/// For tests and tools that change a recording on purpose, say a byte of
/// a received frame to see where the replay tells: a reader refuses any
/// changed byte otherwise. Lengths are not changed, so a change must keep
/// every length as it was.
///
/// # Errors
/// Not a recording of a checked format, or chunks whose lengths do not
/// end where the file does.
pub fn reseal_recording(bytes: &mut [u8]) -> Result<(), FormatError> {
    let format = bytes.get(6..8).map(|f| u16::from_le_bytes([f[0], f[1]]));
    if !bytes.starts_with(MAGIC) || format.is_none_or(|f| f < FIRST_CHECKED_FORMAT) {
        return Err(FormatError::NotARecording);
    }
    let shaped = format.is_some_and(|f| f >= FIRST_SHAPED_FORMAT);
    let (end, _) = header_frame(bytes, shaped)?;
    let crc = crc32c(&bytes[..end]);
    bytes[end..end + 4].copy_from_slice(&crc.to_le_bytes());
    let mut at = end + 4;
    while at < bytes.len() {
        let cut = FormatError::Damaged {
            offset: at,
            what: CUT_SHORT.to_string(),
        };
        let head = bytes.get(at..at + HEAD).ok_or(cut.clone())?;
        let len = [head[0], head[1], head[2], head[3]];
        bytes[at + 4..at + HEAD].copy_from_slice(&crc32c(&len).to_le_bytes());
        let start = at + HEAD;
        let end = start
            .checked_add(u32::from_le_bytes(len) as usize)
            .filter(|end| end.saturating_add(TAIL) <= bytes.len())
            .ok_or(cut)?;
        let crc = crc32c(&bytes[start..end]);
        bytes[end..end + TAIL].copy_from_slice(&crc.to_le_bytes());
        at = end + TAIL;
    }
    Ok(())
}
