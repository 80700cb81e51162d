//! The compact snapshot encoding: binary frames a client asks for with
//! `"encoding":"compact"` in `hello`.
//!
//! JSON costs about 150 bytes per player per snapshot. The compact frame
//! costs about 11 bytes per remote player and 31 bytes once for the
//! recipient's own player:
//! - The recipient's **own** state travels exactly (`f32` bits), because it is
//!   the reconciliation baseline and replay must be bit-exact.
//! - **Remote** players are only drawn, through interpolation, so their
//!   position is quantised to 1/65535 of the arena (0.03 u in a 2000 u
//!   arena), rotation to 1/65536 of a turn, velocity to 1/127 of the top speed
//!   per axis, HP to a byte.
//!
//! The frame is built in two parts so the server encodes the shared part once
//! per tick: a per-recipient head ([`encode_head`]) and a tail with every
//! player ([`encode_tail`]); the frame is head followed by tail.
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
//!       the game's own state, exactly ([`OwnState::write`]; a tank's:
//!       f32 x, f32 y, f32 rotation, u8 hp, u8 flags (1 alive, 2 has
//!       velocity), f32 vx, f32 vy)
//! tail: u16 count, then per player in id order:
//!       u32 id, the game's fields in full ([`Fields`]; a tank's: u16 x,
//!       u16 y, u16 rotation, u8 hp, u8 flags, i8 vx, i8 vy)
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
//! Before the library was generic over the game (tank game version 1) the
//! own block mixed the game's flags with the library's and the timing came
//! after the state; version 2 puts the library's part first.

use glam::Vec2;

use crate::shared::bytes::{Reader, Writer};
use crate::shared::clamp::clamp;
use crate::shared::delta;
use crate::shared::fields::{full_bytes, Fields};
use crate::shared::game::{OwnState, Stamp};
use crate::shared::protocol::{ErrorCode, ProtocolError};

use crate::shared::config::SimConfig;
use crate::shared::sim::wrap_angle;
use crate::shared::state::PlayerId;
use crate::shared::state::PlayerState;
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
/// Bytes of the tank game's head (the library's part and a tank's state).
pub const HEAD_BYTES: usize = head_bytes::<PlayerState>();

/// Bytes of a head whose own state is an `O`, about ([`OwnState::BYTES`]).
pub const fn head_bytes<O: OwnState>() -> usize {
    LIBRARY_HEAD_BYTES + O::BYTES
}
/// Bytes of the input timing a protocol-2 head adds (and of its receipt
/// of numbered input messages, when it has one).
pub const TIMING_BYTES: usize = 1 + 2 + 2 + 2 + RECEIPT_BYTES;
/// Bytes of a receipt in a head.
const RECEIPT_BYTES: usize = 2 + 4;
/// Bytes of one remote entry in the tail.
pub const ENTRY_BYTES: usize = 4 + 2 + 2 + 2 + 1 + 1 + 1 + 1;

/// A tank's flags, in its quantised and its exact form: alive.
pub(crate) const ALIVE: u8 = 1;
/// A tank's flags: it has a velocity.
pub(crate) const HAS_VELOCITY: u8 = 2;
const TIMING: u8 = 4;
const RECEIPT: u8 = 8;

/// A player's state as binary frames carry a remote player: position to
/// 1/65535 of the arena, rotation to 1/65536 of a turn, HP to a byte,
/// velocity to 1/127 of the top speed per axis.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Quantised {
    /// x, in 1/65535 of the arena's width.
    pub x: u16,
    /// y, in 1/65535 of the arena's height.
    pub y: u16,
    /// Heading, in 1/65536 of a turn.
    pub rotation: u16,
    /// Hit points, at most 255.
    pub hp: u8,
    /// 1: alive, 2: has a velocity.
    pub flags: u8,
    /// Velocity x, in 1/127 of the top speed.
    pub vx: i8,
    /// Velocity y, in 1/127 of the top speed.
    pub vy: i8,
}

impl Quantised {
    /// `state` quantised for `config`'s arena and speed.
    pub fn of(state: &PlayerState, config: &SimConfig) -> Quantised {
        let turn = wrap_angle(state.rotation) / std::f32::consts::TAU;
        let v = state.velocity.unwrap_or(Vec2::ZERO) / config.speed.max(1e-6) * 127.0;
        Quantised {
            x: quantise(state.position.x, config.arena.x),
            y: quantise(state.position.y, config.arena.y),
            rotation: (turn * 65536.0).round() as i32 as u16,
            hp: state.hp.min(255) as u8,
            flags: flags(state),
            vx: clamp(v.x.round(), -127.0, 127.0) as i8,
            vy: clamp(v.y.round(), -127.0, 127.0) as i8,
        }
    }

    /// The state this stands for, as player `id`'s at `tick`.
    pub fn state(&self, id: PlayerId, tick: Tick, config: &SimConfig) -> PlayerState {
        let turn = f32::from(self.rotation as i16) / 65536.0;
        let v = |q: i8| f32::from(q) / 127.0 * config.speed;
        PlayerState {
            id,
            tick,
            ack_move_tick: None,
            position: Vec2::new(
                dequantise(self.x, config.arena.x),
                dequantise(self.y, config.arena.y),
            ),
            rotation: wrap_angle(turn * std::f32::consts::TAU),
            hp: u16::from(self.hp),
            alive: self.flags & ALIVE != 0,
            velocity: (self.flags & HAS_VELOCITY != 0).then_some(Vec2::new(v(self.vx), v(self.vy))),
        }
    }
}

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
pub struct OwnEcho<O = PlayerState> {
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

/// The shared tail: every player, quantised.
pub fn encode_tail(players: &[PlayerState], config: &SimConfig, out: &mut Vec<u8>) {
    let count = players.len().min(usize::from(u16::MAX));
    out.extend_from_slice(&(count as u16).to_le_bytes());
    for p in &players[..count] {
        out.extend_from_slice(&p.id.0.to_le_bytes());
        delta::write_full(&Quantised::of(p, config), out);
    }
}

/// [`encode_tail`] of entities already quantised, in id order.
pub fn encode_tail_quantised<F: Fields>(players: &[(PlayerId, F)], out: &mut Vec<u8>) {
    let count = players.len().min(usize::from(u16::MAX));
    out.extend_from_slice(&(count as u16).to_le_bytes());
    for (id, q) in &players[..count] {
        out.extend_from_slice(&id.0.to_le_bytes());
        delta::write_full(q, out);
    }
}

/// A whole frame for one recipient (head and tail in one go).
pub fn encode(
    server_tick: Tick,
    own: &PlayerState,
    players: &[PlayerState],
    config: &SimConfig,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEAD_BYTES + 2 + players.len() * ENTRY_BYTES);
    encode_head(server_tick, own, None, &mut out);
    encode_tail(players, config, &mut out);
    out
}

/// Reads a compact snapshot: the server tick and every player's state, the
/// recipient's own exactly and the others dequantised.
///
/// # Errors
/// A frame of another kind, too short, or with trailing bytes.
pub fn decode(bytes: &[u8], config: &SimConfig) -> Result<(Tick, Vec<PlayerState>), ProtocolError> {
    let frame = decode_quantised(bytes)?;
    let players = frame
        .players
        .iter()
        .map(|(id, q)| {
            if *id == frame.own.id {
                frame.own
            } else {
                q.state(*id, frame.server_tick, config)
            }
        })
        .collect();
    Ok((frame.server_tick, players))
}

/// A binary snapshot as read: the tick, the own state exactly, and every
/// entity (the own one too) quantised, in id order.
#[derive(Clone, Debug, PartialEq)]
pub struct QuantisedFrame<F = Quantised, O = PlayerState> {
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

/// Reads a compact snapshot of the tank game without dequantising the
/// players.
///
/// # Errors
/// As [`decode`].
pub fn decode_quantised(bytes: &[u8]) -> Result<QuantisedFrame, ProtocolError> {
    decode_frame(bytes)
}

/// Reads a compact snapshot whose entities travel as `F`.
///
/// # Errors
/// As [`decode`].
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

/// A tank's flags byte ([`ALIVE`], [`HAS_VELOCITY`]).
pub(crate) fn flags(p: &PlayerState) -> u8 {
    (if p.alive { ALIVE } else { 0 })
        | (if p.velocity.is_some() {
            HAS_VELOCITY
        } else {
            0
        })
}

fn quantise(v: f32, extent: f32) -> u16 {
    if !(v.is_finite() && extent > 0.0) {
        return 0;
    }
    (clamp(v / extent, 0.0, 1.0) * 65535.0).round() as u16
}

fn dequantise(q: u16, extent: f32) -> f32 {
    f32::from(q) / 65535.0 * extent
}

pub(crate) fn bad(message: &str) -> ProtocolError {
    ProtocolError::new(ErrorCode::BadMessage, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shared::sim::Pose;

    fn state(id: u32, x: f32, y: f32, rotation: f32) -> PlayerState {
        PlayerState {
            id: PlayerId(id),
            hp: 80,
            velocity: Some(Vec2::new(141.4, -141.4)),
            ..PlayerState::at(Tick(9), Some(Tick(4)), Pose::new(Vec2::new(x, y), rotation))
        }
    }

    #[test]
    fn own_state_is_exact_and_remotes_are_close() {
        let config = SimConfig::default();
        let players = vec![
            state(1, 0.1 + 0.2, 1199.99, -3.0),
            state(2, 1234.567, 20.0, 3.1),
            state(3, 20.0, 600.0, 0.0),
        ];
        let own = PlayerState {
            alive: false,
            ..players[1]
        };
        let frame = encode(Tick(9), &own, &players, &config);
        assert_eq!(frame.len(), HEAD_BYTES + 2 + 3 * ENTRY_BYTES);
        let (tick, decoded) = decode(&frame, &config).unwrap();
        assert_eq!(tick, Tick(9));
        assert_eq!(
            decoded[1],
            PlayerState {
                tick: Tick(9),
                ..own
            },
            "bit-exact"
        );
        for (a, b) in players.iter().zip(&decoded).filter(|(a, _)| a.id != own.id) {
            assert!(a.position.distance(b.position) < 0.03, "{a:?} {b:?}");
            assert!(crate::angle_delta(a.rotation, b.rotation).abs() < 1e-4);
            assert_eq!((b.hp, b.alive, b.ack_move_tick), (80, true, None));
            assert!(b.velocity.unwrap().distance(a.velocity.unwrap()) < 2.0);
        }
    }

    #[test]
    fn bytes_per_player_stay_under_25() {
        let config = SimConfig::default();
        let players: Vec<_> = (1..=64)
            .map(|i| state(i, 10.0 * i as f32, 300.0, 0.5))
            .collect();
        let frame = encode(Tick(1), &players[0], &players, &config);
        assert!(frame.len() / 64 <= 25, "{} bytes", frame.len());
    }

    #[test]
    fn malformed_frames_are_errors_not_panics() {
        let config = SimConfig::default();
        let frame = encode(
            Tick(1),
            &state(1, 1.0, 1.0, 0.0),
            &[state(1, 1.0, 1.0, 0.0)],
            &config,
        );
        for cut in 0..frame.len() {
            assert!(decode(&frame[..cut], &config).is_err());
        }
        let mut longer = frame.clone();
        longer.push(0);
        assert!(decode(&longer, &config).is_err());
        assert!(decode(&[2, 0, 0], &config).is_err());
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any bytes decode to a frame or an error, never a panic.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
            let _ = decode(&bytes, &SimConfig::default());
        }
    }
}
