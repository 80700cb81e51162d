//! The compact snapshot encoding: binary frames a client asks for with
//! `"encoding":"compact"` in `hello`.
//!
//! The recipient's **own** state travels exactly (`f32` bits), because it
//! is the reconciliation baseline and replay must be bit-exact. **Other**
//! players are only drawn, through interpolation, so they travel as the
//! game's quantised [`Fields`] (each game's quantisation and byte counts
//! are its own; `docs/PROTOCOL.md` has the first game's).
//!
//! The frame is built in two parts so the server encodes the shared part once
//! per tick: a per-recipient head ([`encode_head`]) and a tail with every
//! player ([`encode_tail_quantised`]); the frame is head followed by tail.
//!
//! ```text
//! head: u8 kind = 1, u32 server_tick, own block:
//!       u32 id, u32 ack (0 = none), u8 flags (4 timing follows, 8
//!       receipt follows, others 0),
//!       if flags & 4 (protocol 2 only): i8 input tick - server tick
//!       (-128: no sample), i16 slack_ms, u16 late, u16 repeated
//!       (`crate::shared::timing::InputTiming`),
//!       if flags & 8 (with 4): u16 newest input message, u32 the 32 before
//!       (`crate::shared::timing::Receipt`),
//!       the game's own state, exactly ([`OwnState::write`])
//! tail: u16 count, then per player in id order:
//!       u32 id, the game's fields in full ([`Fields`])
//! own echo: u8 kind = 3, u32 server_tick, own block (the snapshot's head
//!       again, nothing after it)
//! ```
//!
//! Over datagrams a lost snapshot would hold the acknowledgement of the
//! own inputs back a whole tick; the own echo ([`encode_own`]) repeats the
//! head half a tick later, so a lost snapshot costs half a tick there.
//! All integers little-endian. Decoding never panics: a short or malformed
//! frame is a [`ProtocolError`].
//!
//! Before the library was generic over the game (version 1 of its first
//! game) the own block mixed the game's flags with the library's and the
//! timing came after the state; version 2 puts the library's part first.

use crate::shared::bytes::{Reader, Writer};
use crate::shared::delta;
use crate::shared::fields::{full_bytes, Fields};
use crate::shared::game::{OwnState, Stamp};
use crate::shared::protocol::{ErrorCode, ProtocolError};
use crate::shared::state::PlayerId;
use crate::shared::tick::Tick;
use crate::shared::timing::{InputTiming, Receipt};

/// The frame kind of a compact snapshot.
pub const SNAPSHOT: u8 = 1;
/// The frame kind of an own echo: a head alone (kind, tick, own block),
/// sent again half a tick after each snapshot to a client that takes its
/// frames as datagrams ([`encode_own`]).
pub const OWN: u8 = 3;
/// Bytes of a head's library part (kind, tick, id, acknowledgement,
/// flags); the game's own state follows ([`OwnState::BYTES`]).
pub const LIBRARY_HEAD_BYTES: usize = 1 + 4 + 4 + 4 + 1;
/// Bytes of a head whose own state is an `O`, about ([`OwnState::BYTES`]).
pub const fn head_bytes<O: OwnState>() -> usize {
    LIBRARY_HEAD_BYTES + O::BYTES
}
/// Bytes of the input timing a protocol-2 head adds (and of its receipt
/// of numbered input messages, when it has one).
pub const TIMING_BYTES: usize = 1 + 2 + 2 + 2 + RECEIPT_BYTES;
/// Bytes of a receipt in a head.
const RECEIPT_BYTES: usize = 2 + 4;
const TIMING: u8 = 4;
const RECEIPT: u8 = 8;

/// The own block of a head: the recipient's id and acknowledgement, its
/// input timing when it speaks protocol 2, then its state exactly as the
/// game writes it ([`OwnState::write`]).
pub(crate) fn write_own<O: OwnState>(
    own: &O,
    timing: Option<&InputTiming>,
    server_tick: Tick,
    out: &mut Vec<u8>,
) {
    out.extend_from_slice(&own.id().0.to_le_bytes());
    out.extend_from_slice(&own.stamp().ack.map_or(0, |t| t.0).to_le_bytes());
    let receipt = timing.and_then(|t| t.received);
    out.push(
        if timing.is_some() { TIMING } else { 0 } | if receipt.is_some() { RECEIPT } else { 0 },
    );
    if let Some(t) = timing {
        let offset = t
            .tick
            .map(|tick| i64::from(tick.0) - i64::from(server_tick.0))
            .filter(|d| (-127..=127).contains(d))
            .map_or(i8::MIN, |d| d as i8);
        out.push(offset as u8);
        let slack = if offset == i8::MIN { 0 } else { t.slack_ms };
        out.extend_from_slice(&slack.to_le_bytes());
        out.extend_from_slice(&t.late.to_le_bytes());
        out.extend_from_slice(&t.repeated.to_le_bytes());
        if let Some(r) = receipt {
            out.extend_from_slice(&r.newest.to_le_bytes());
            out.extend_from_slice(&r.before.to_le_bytes());
        }
    }
    let mut w = Writer {
        bytes: std::mem::take(out),
    };
    own.write(&mut w);
    *out = w.bytes;
}

/// Reads an own block written by [`write_own`], as the state at `tick`.
pub(crate) fn read_own<O: OwnState>(
    r: &mut Reader<'_>,
    tick: Tick,
) -> Result<(O, Option<InputTiming>), ProtocolError> {
    let id = PlayerId(r.u32()?);
    let ack = r.u32()?;
    let flags = r.u8()?;
    if flags & !(TIMING | RECEIPT) != 0 {
        return Err(bad("unknown flags in an own block"));
    }
    let timing = if flags & TIMING != 0 {
        let offset = r.u8()? as i8;
        let slack_ms = r.u16()? as i16;
        let late = r.u16()?;
        let repeated = r.u16()?;
        let received = if flags & RECEIPT != 0 {
            Some(Receipt {
                newest: r.u16()?,
                before: r.u32()?,
            })
        } else {
            None
        };
        let sample = (offset != i8::MIN)
            .then(|| i64::from(tick.0) + i64::from(offset))
            .and_then(|t| u32::try_from(t).ok())
            .map(Tick);
        Some(InputTiming {
            tick: sample,
            slack_ms: if sample.is_some() { slack_ms } else { 0 },
            late,
            repeated,
            received,
        })
    } else if flags & RECEIPT != 0 {
        return Err(bad("a receipt without timing"));
    } else {
        None
    };
    let stamp = Stamp {
        tick,
        ack: (ack != 0).then_some(Tick(ack)),
    };
    let own = O::read(id, stamp, r)?;
    Ok((own, timing))
}

/// The per-recipient head: the frame kind, the tick and the recipient's own
/// state, exactly (with its input timing for a protocol-2 client).
pub fn encode_head<O: OwnState>(
    server_tick: Tick,
    own: &O,
    timing: Option<&InputTiming>,
    out: &mut Vec<u8>,
) {
    out.push(SNAPSHOT);
    out.extend_from_slice(&server_tick.0.to_le_bytes());
    write_own(own, timing, server_tick, out);
}

/// The own echo of a snapshot's head: the tick and the recipient's own
/// state and timing, exactly as the head had them, under kind [`OWN`].
pub fn encode_own<O: OwnState>(
    server_tick: Tick,
    own: &O,
    timing: Option<&InputTiming>,
    out: &mut Vec<u8>,
) {
    out.push(OWN);
    out.extend_from_slice(&server_tick.0.to_le_bytes());
    write_own(own, timing, server_tick, out);
}

/// An own echo as read: the tick, the own state exactly, its timing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OwnEcho<O> {
    /// The server tick of the snapshot it repeats.
    pub server_tick: Tick,
    /// The recipient's state, exactly.
    pub own: O,
    /// The recipient's input timing (protocol 2).
    pub timing: Option<InputTiming>,
}

/// Reads an own echo written by [`encode_own`].
///
/// # Errors
/// A frame of another kind, too short, or with trailing bytes.
pub fn decode_own<O: OwnState>(bytes: &[u8]) -> Result<OwnEcho<O>, ProtocolError> {
    let mut r = Reader::new(bytes);
    if r.u8()? != OWN {
        return Err(bad("not an own echo"));
    }
    let server_tick = Tick(r.u32()?);
    let (own, timing) = read_own(&mut r, server_tick)?;
    if r.remaining() != 0 {
        return Err(bad("bytes after an own echo"));
    }
    Ok(OwnEcho {
        server_tick,
        own,
        timing,
    })
}

/// The shared tail: every entity, already quantised, in id order.
pub fn encode_tail_quantised<F: Fields>(players: &[(PlayerId, F)], out: &mut Vec<u8>) {
    let count = players.len().min(usize::from(u16::MAX));
    out.extend_from_slice(&(count as u16).to_le_bytes());
    for (id, q) in &players[..count] {
        out.extend_from_slice(&id.0.to_le_bytes());
        delta::write_full(q, out);
    }
}

/// A binary snapshot as read: the tick, the own state exactly, and every
/// entity (the own one too) quantised, in id order.
#[derive(Clone, Debug, PartialEq)]
pub struct QuantisedFrame<F, O> {
    /// The server tick of the snapshot.
    pub server_tick: Tick,
    /// The recipient's state, exactly.
    pub own: O,
    /// Every entity the frame holds, quantised, in id order.
    pub players: Vec<(PlayerId, F)>,
    /// Players of the set left out for the byte budget (delta frames only):
    /// their values are the baseline's, not news to draw.
    pub stale: Vec<PlayerId>,
    /// The recipient's input timing (protocol 2).
    pub timing: Option<InputTiming>,
}

/// Reads a compact snapshot whose entities travel as `F`.
///
/// # Errors
/// A frame of another kind, too short, or with trailing bytes.
pub fn decode_frame<F: Fields, O: OwnState>(
    bytes: &[u8],
) -> Result<QuantisedFrame<F, O>, ProtocolError> {
    let mut r = Reader::new(bytes);
    if r.u8()? != SNAPSHOT {
        return Err(bad("not a compact snapshot"));
    }
    let server_tick = Tick(r.u32()?);
    let (own, timing) = read_own(&mut r, server_tick)?;
    let count = usize::from(r.u16()?);
    if r.remaining() != count * (4 + full_bytes::<F>()) {
        return Err(bad("the player count does not match the frame length"));
    }
    let mut players = Vec::with_capacity(count);
    for _ in 0..count {
        let id = PlayerId(r.u32()?);
        players.push((id, delta::read_full(&mut r)?));
    }
    Ok(QuantisedFrame {
        server_tick,
        own,
        players,
        stale: Vec::new(),
        timing,
    })
}

pub(crate) fn bad(message: &str) -> ProtocolError {
    ProtocolError::new(ErrorCode::BadMessage, message)
}
