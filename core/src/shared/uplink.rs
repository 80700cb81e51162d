//! The binary `input` message, for clients that asked for the compact
//! encoding: the same [`ClientMessage::Input`] as the JSON one, in a few
//! bytes per input, so a page's uplink stays well below its downlink.
//!
//! Layout (integers little-endian, varints LEB128):
//!
//! ```text
//! u8  kind = INPUT (0x49, never `{`)
//! u8  count (1..=16) | 0x80 when a snapshot ack follows
//!                     | 0x40 when a sequence number follows
//! u32 tick of the first input
//! u32 snapshot ack (only with 0x80)
//! u16 sequence number (only with 0x40)
//! per input:
//!   u8 head: bits 0-4 the game's ([`Wired::write_bits`]; a game
//!            refuses those it does not use), bit 5 view tick follows,
//!            bit 6 tick gap follows (else the tick is the previous + 1;
//!            never on the first input), bit 7 must be 0
//!   varint tick gap - 2          (bit 6)
//!   the game's bytes             ([`Wired::write_bits`])
//!   varint zigzag(view tick - tick, in 1/256 tick)   (bit 5)
//! ```
//!
//! A game's bits and bytes are its own (`docs/PROTOCOL.md` has each
//! game's).
//!
//! Inputs are delta-coded against each other (ticks as gaps, the game's
//! values as it codes them), so the inputs a client sends again while they
//! wait for their acknowledgement cost a byte or three each. Every value
//! but the view tick travels as the game writes it; the view tick is
//! rounded to 1/256 of a tick, which the server's rewind cannot tell apart.
//! Decoding applies the same checks as the JSON form and never panics.

use crate::shared::bytes::{unzigzag, zigzag, Reader};
use crate::shared::control;
use crate::shared::protocol::{check_inputs, ClientMessage, Encoding, ErrorCode, Frame};
use crate::shared::protocol::{encode, ProtocolError, MAX_INPUTS_PER_MESSAGE};
use crate::shared::tick::Tick;
use crate::shared::varint;
use crate::shared::wired::{Wired, GAME_BITS};

/// The first byte of a binary input message.
pub const INPUT: u8 = 0x49;
/// Steps of the view tick per tick.
const VIEW_STEPS: f64 = 256.0;
/// Head bit: a view tick follows.
const VIEW: u8 = 0x20;
/// Head bit: a tick gap follows.
const GAP: u8 = 0x40;
/// Head bit: reserved, must be 0.
const RESERVED: u8 = 0x80;

/// Encodes a message as the client sends it: a client that asked for the
/// compact encoding speaks binary all the way (inputs as the binary input
/// message, `hello` and `ping` as binary control messages,
/// [`crate::shared::control`]); a JSON client sends JSON text.
pub fn encode_client<W: Wired + serde::Serialize>(
    message: &ClientMessage<W>,
    encoding: Encoding,
) -> Frame {
    match (message, encoding) {
        (
            ClientMessage::Input {
                inputs,
                snapshot_ack,
                seq,
            },
            Encoding::Compact,
        ) if !inputs.is_empty() && inputs.len() <= MAX_INPUTS_PER_MESSAGE => {
            let mut out = Vec::with_capacity(12 + 3 * inputs.len());
            encode_inputs(inputs, *snapshot_ack, *seq, &mut out);
            Frame::Binary(out)
        }
        (ClientMessage::Hello { .. } | ClientMessage::Ping { .. }, Encoding::Compact) => {
            control::encode_client(message)
                .map_or_else(|| Frame::Text(encode(message)), Frame::Binary)
        }
        _ => Frame::Text(encode(message)),
    }
}

/// Appends the binary form of `inputs` (1 to 16, ticks increasing), the
/// acknowledgement and the message's sequence number to `out`.
pub fn encode_inputs<W: Wired>(
    inputs: &[W],
    snapshot_ack: Option<Tick>,
    seq: Option<u16>,
    out: &mut Vec<u8>,
) {
    let first = inputs.first().map_or(0, |i| i.tick().0);
    out.push(INPUT);
    let count = inputs.len().min(MAX_INPUTS_PER_MESSAGE) as u8;
    out.push(
        count
            | if snapshot_ack.is_some() { 0x80 } else { 0 }
            | if seq.is_some() { 0x40 } else { 0 },
    );
    out.extend_from_slice(&first.to_le_bytes());
    if let Some(ack) = snapshot_ack {
        out.extend_from_slice(&ack.0.to_le_bytes());
    }
    if let Some(seq) = seq {
        out.extend_from_slice(&seq.to_le_bytes());
    }
    let mut previous: Option<u32> = None;
    for input in inputs.iter().take(MAX_INPUTS_PER_MESSAGE) {
        let tick = input.tick().0;
        let gap = previous.map(|p| tick.wrapping_sub(p)).filter(|g| *g != 1);
        let view = input
            .view_tick()
            .map(|v| ((v - f64::from(tick)) * VIEW_STEPS).round() as i64);
        // The head's game bits are known once the game has written its
        // bytes: its place is kept and filled after.
        let at = out.len();
        out.push(0);
        if let Some(gap) = gap {
            varint::write(u64::from(gap.wrapping_sub(2)), out);
        }
        let mut head = input.write_bits(out) & GAME_BITS;
        if view.is_some() {
            head |= VIEW;
        }
        if gap.is_some() {
            head |= GAP;
        }
        out[at] = head;
        if let Some(view) = view {
            varint::write(zigzag(view), out);
        }
        previous = Some(tick);
    }
}

/// Decodes and checks a binary input message.
///
/// # Errors
/// `bad_message` for a frame that is not one (another kind, cut short,
/// trailing bytes, a reserved bit, a gap before the first input, head bits
/// the game does not use, a tick past `u32`), and the checks of the
/// JSON form: `too_many_inputs`, `ticks_not_increasing`, `non_finite`.
pub fn decode_inputs<W: Wired>(bytes: &[u8]) -> Result<ClientMessage<W>, ProtocolError> {
    let mut r = Reader::new(bytes);
    if r.u8()? != INPUT {
        return Err(bad("a binary frame that is not an input message"));
    }
    let counted = r.u8()?;
    let count = usize::from(counted & 0x3f);
    if count == 0 || count > MAX_INPUTS_PER_MESSAGE {
        return Err(ProtocolError::new(
            ErrorCode::TooManyInputs,
            format!("{count} inputs; send 1 to {MAX_INPUTS_PER_MESSAGE}"),
        ));
    }
    let mut tick = r.u32()?;
    let snapshot_ack = if counted & 0x80 != 0 {
        Some(Tick(r.u32()?))
    } else {
        None
    };
    let seq = if counted & 0x40 != 0 {
        Some(r.u16()?)
    } else {
        None
    };
    let mut inputs = Vec::with_capacity(count);
    for i in 0..count {
        let head = r.u8()?;
        if head & RESERVED != 0 {
            return Err(bad("a reserved bit is set in an input"));
        }
        if i == 0 && head & GAP != 0 {
            return Err(bad(
                "a tick gap on the first input, whose tick is the message's",
            ));
        }
        if i > 0 {
            let gap = if head & GAP != 0 {
                r.varint()?.checked_add(2)
            } else {
                Some(1)
            };
            tick = gap
                .and_then(|g| u32::try_from(g).ok())
                .and_then(|g| tick.checked_add(g))
                .ok_or_else(|| bad("an input tick past the largest tick"))?;
        }
        let input = W::read_bits(head & GAME_BITS, &mut r, Tick(tick))?;
        let view_tick = if head & VIEW != 0 {
            let steps = unzigzag(r.varint()?);
            Some(f64::from(tick) + steps as f64 / VIEW_STEPS)
        } else {
            None
        };
        inputs.push(input.with_view(view_tick));
    }
    if !r.is_empty() {
        return Err(bad("trailing bytes after the inputs"));
    }
    check_inputs(&inputs)?;
    Ok(ClientMessage::Input {
        inputs,
        snapshot_ack,
        seq,
    })
}

fn bad(message: &str) -> ProtocolError {
    ProtocolError::new(ErrorCode::BadMessage, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shared::simple::Ticked;

    type Wire = Ticked<(i8, i8)>;

    /// Two inputs a tick apart, the second with a view: a head each at
    /// bytes 6 and 9 (kind, count, tick; then each input's two bytes).
    fn two() -> Vec<u8> {
        let inputs = [
            Wire::new(Tick(7), (1, -1), None),
            Wire::new(Tick(8), (0, 1), Some(7.5)),
        ];
        let mut bytes = Vec::new();
        encode_inputs(&inputs, None, None, &mut bytes);
        assert_eq!(bytes[6], 0, "no bits for the first");
        assert_eq!(bytes[9], VIEW, "a view for the second");
        bytes
    }

    fn refused(bytes: &[u8]) -> Option<ErrorCode> {
        decode_inputs::<Wire>(bytes).err().map(|e| e.code)
    }

    #[test]
    fn every_head_bit_nobody_uses_is_refused() {
        let bytes = two();
        assert_eq!(refused(&bytes), None);
        for at in [6, 9] {
            // The game's five bits: a `Ticked` input uses none of them.
            for bit in 0..5 {
                let mut bad = bytes.clone();
                bad[at] |= 1 << bit;
                assert_eq!(
                    refused(&bad),
                    Some(ErrorCode::BadMessage),
                    "bit {bit} at {at}"
                );
            }
            let mut bad = bytes.clone();
            bad[at] |= RESERVED;
            assert_eq!(refused(&bad), Some(ErrorCode::BadMessage), "bit 7 at {at}");
        }
    }

    /// Regression: the first input's tick is the message's, so a gap on
    /// it was read by nobody and ignored.
    #[test]
    fn a_gap_on_the_first_input_is_refused() {
        let mut bad = two();
        bad[6] |= GAP;
        assert_eq!(refused(&bad), Some(ErrorCode::BadMessage));
    }
}
