//! Delta snapshots: a binary frame that says only what changed since a
//! snapshot the recipient has acknowledged (its baseline).
//!
//! A frame stands for a whole set of players, the same way a compact frame
//! does; the delta frame writes it as differences from the baseline's set:
//! - a player of the baseline that is not listed is exactly where the
//!   game's motion takes its baseline ([`Fields::moved`]): an idle or
//!   steadily moving player costs nothing;
//! - a listed player carries a mask of the fields that differ from that
//!   prediction and, for each, a small difference (zig-zag varint for a
//!   wide field, a byte for the rest: [`Width`]);
//! - a player new to the set is listed in full, or as its differences
//!   from the game's [`Fields::template`] when it has one;
//! - a player of the baseline that left the set is listed as removed, by
//!   its place in the baseline's set (kind 4; kind 2, still read, named
//!   its id).
//!
//! The recipient's own state travels exactly in the head, as in the compact
//! frame, because it is the reconciliation baseline.
//!
//! ```text
//! u8 kind = 4, u32 server_tick, u32 baseline_tick, own block (as compact)
//! varint removed count, then each removed player's index in the
//!   baseline's set (id order) as a varint gap (kind 2: its id as a gap)
//! varint entry count, then per entry in id order:
//!   varint id gap, u8 mask, then per set bit i (the game's field i):
//!     a wide field: zig-zag varint of the i16 difference; a byte: the
//!     new byte
//!   bit 7 (new) alone: the whole quantised state follows instead;
//!   bit 7 with others: the changed fields follow, from the template
//! varint stale mask length (0, or one bit per player of the set, in id
//!   order, rounded up to bytes), then the mask
//! ```
//!
//! A player of the set whose stale bit is set was left out for the byte
//! budget: its value is only the baseline's, carried for building the next
//! deltas, and a client must not draw it as news (it keeps what it drew).
//! An id gap is the id minus the previous id plus one (the first: the id
//! itself), so ids strictly increase. Decoding never panics and never
//! guesses: a frame against a baseline the decoder does not hold, a removal
//! or update of a player the baseline lacks, or a malformed frame is a
//! [`ProtocolError`].

use crate::shared::bytes::Reader;
use crate::shared::compact::{self, bad};
use crate::shared::fields::{full_bytes, Fields, Width, MAX_FIELDS};
use crate::shared::game::OwnState;
use crate::shared::protocol::ProtocolError;
use crate::shared::state::PlayerId;
use crate::shared::tick::Tick;
use crate::shared::timing::InputTiming;
use crate::shared::varint;

/// The frame kind of a delta snapshot: removals by their place in the
/// baseline's set.
pub const DELTA: u8 = 4;

/// The frame kind of a delta snapshot whose removals name their ids (what
/// builds before this one sent; still read, for their recordings).
pub const DELTA_BY_ID: u8 = 2;

/// One entity of a frame's set: its id and quantised state.
pub type Entity<F> = (PlayerId, F);

/// A delta entry's mask bit for an entity new to the set: alone, its whole
/// state follows; with field bits, the fields that differ from the game's
/// template. Bits 0 to 6 are the fields that changed.
const NEW: u8 = 128;

/// The head of a delta frame: kind, ticks and the own state exactly (with
/// its input timing for a protocol-2 client).
pub fn encode_head<O: OwnState>(
    server_tick: Tick,
    baseline: Tick,
    own: &O,
    timing: Option<&InputTiming>,
    out: &mut Vec<u8>,
) {
    out.push(DELTA);
    out.extend_from_slice(&server_tick.0.to_le_bytes());
    out.extend_from_slice(&baseline.0.to_le_bytes());
    compact::write_own(own, timing, server_tick, out);
}

/// The body of a delta frame that turns `baseline` (the set of the
/// baseline frame, `ticks` before) into `target` (the set of this frame).
/// Both are in id order.
pub fn encode_body<F: Fields>(
    baseline: &[Entity<F>],
    target: &[Entity<F>],
    ticks: u32,
    config: &F::Config,
    out: &mut Vec<u8>,
) {
    let motion = F::motion(ticks, config);
    let mut removed = Vec::new();
    let mut entries = Vec::with_capacity(target.len());
    let mut b = baseline.iter().enumerate().peekable();
    for (id, value) in target {
        while let Some((gone, _)) = b.next_if(|(_, (bid, _))| bid < id) {
            removed.push(gone);
        }
        let predicted = b
            .next_if(|(_, (bid, _))| bid == id)
            .map(|(_, (_, q))| q.moved(&motion));
        if predicted != Some(*value) {
            entries.push((*id, predicted, *value));
        }
    }
    removed.extend(b.map(|(gone, _)| gone));
    write_body(&removed, &entries, &[], out);
}

/// Writes a delta body from its parts: the removed players' places in the
/// baseline's set (in increasing order), and each listed player with its
/// predicted value (`None`: new to the set) and its value, in id order. A
/// listed player whose prediction is right is skipped.
pub fn write_body<F: Fields>(
    removed: &[usize],
    entries: &[(PlayerId, Option<F>, F)],
    stale: &[bool],
    out: &mut Vec<u8>,
) {
    varint::write(removed.len() as u64, out);
    for gap in removal_gaps(removed) {
        varint::write(gap, out);
    }
    let listed = entries
        .iter()
        .filter(|(_, predicted, value)| *predicted != Some(*value))
        .count();
    varint::write(listed as u64, out);
    let mut previous = None;
    for (id, predicted, value) in entries {
        if *predicted == Some(*value) {
            continue;
        }
        write_gap(previous, *id, out);
        previous = Some(*id);
        match predicted {
            None => write_new(value, out),
            Some(predicted) => {
                write_changes(predicted, value, out);
            }
        }
    }
    if stale.iter().any(|s| *s) {
        let mut mask = vec![0u8; stale.len().div_ceil(8)];
        for (i, _) in stale.iter().enumerate().filter(|(_, s)| **s) {
            mask[i / 8] |= 1 << (i % 8);
        }
        varint::write(mask.len() as u64, out);
        out.extend_from_slice(&mask);
    } else {
        varint::write(0, out);
    }
}

/// A whole delta frame for one recipient.
pub fn encode<F: Fields, O: OwnState>(
    server_tick: Tick,
    baseline_tick: Tick,
    own: &O,
    baseline: &[Entity<F>],
    target: &[Entity<F>],
    config: &F::Config,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(compact::head_bytes::<O>() + 8 + target.len() * 3);
    encode_head(server_tick, baseline_tick, own, None, &mut out);
    let ticks = server_tick.0.saturating_sub(baseline_tick.0);
    encode_body(baseline, target, ticks, config, &mut out);
    out
}

/// The server tick a binary snapshot frame (compact or delta) is of: bytes
/// 1..5, little-endian. `None` for anything shorter or of another kind.
pub fn frame_tick(bytes: &[u8]) -> Option<Tick> {
    match bytes {
        [compact::SNAPSHOT | DELTA | DELTA_BY_ID, a, b, c, d, ..] => {
            Some(Tick(u32::from_le_bytes([*a, *b, *c, *d])))
        }
        _ => None,
    }
}

/// The baseline tick a delta frame builds on; `None` for a full frame.
pub fn baseline_tick(bytes: &[u8]) -> Option<Tick> {
    match bytes {
        [DELTA | DELTA_BY_ID, _, _, _, _, a, b, c, d, ..] => {
            Some(Tick(u32::from_le_bytes([*a, *b, *c, *d])))
        }
        _ => None,
    }
}

/// Reads a binary snapshot, full or delta, into the whole set it stands
/// for. `baseline` finds the set of an earlier frame by its tick.
///
/// # Errors
/// A malformed frame, a delta against a baseline `baseline` does not find,
/// or one that changes or removes a player its baseline lacks.
pub fn decode<'b, F: Fields + 'b, O: OwnState>(
    bytes: &[u8],
    baseline: impl FnOnce(Tick) -> Option<&'b [Entity<F>]>,
    config: &F::Config,
) -> Result<compact::QuantisedFrame<F, O>, ProtocolError> {
    let by_id = match bytes.first() {
        Some(&DELTA) => false,
        Some(&DELTA_BY_ID) => true,
        _ => return compact::decode_frame(bytes),
    };
    let mut r = Reader::new(bytes);
    r.u8()?;
    let server_tick = Tick(r.u32()?);
    let baseline_tick = Tick(r.u32()?);
    let (own, timing) = compact::read_own(&mut r, server_tick)?;
    let base = baseline(baseline_tick).ok_or_else(|| {
        ProtocolError::new(
            crate::shared::protocol::ErrorCode::BadMessage,
            format!("a delta against snapshot {baseline_tick}, which is not held"),
        )
    })?;
    let motion = F::motion(server_tick.0.saturating_sub(baseline_tick.0), config);

    let removed = read_removed(&mut r, base, by_id)?;
    let entry_count = r.count()?;
    let mut entries: Vec<(PlayerId, u8, F)> = Vec::with_capacity(entry_count);
    let mut previous = None;
    for _ in 0..entry_count {
        let id = read_gap(&mut r, previous)?;
        previous = Some(id);
        let mask = r.u8()?;
        let value = if mask & NEW != 0 {
            read_new(&mut r, mask)?
        } else {
            let base =
                lookup(base, id).ok_or_else(|| bad("an update of a player the baseline lacks"))?;
            read_changes(&mut r, mask, base.moved(&motion))?
        };
        entries.push((id, mask, value));
    }
    let stale_bytes = r.count()?;
    let mut stale_mask = Vec::with_capacity(stale_bytes);
    for _ in 0..stale_bytes {
        stale_mask.push(r.u8()?);
    }
    if r.remaining() != 0 {
        return Err(bad("trailing bytes after the delta"));
    }

    // Merge: the baseline's players (predicted, unless removed or listed)
    // and the entries, in id order.
    let mut players = Vec::with_capacity(base.len() + entries.len());
    let mut e = entries.iter().peekable();
    let mut gone = removed.iter().peekable();
    for (id, q) in base {
        while let Some((eid, _, value)) = e.next_if(|(eid, _, _)| eid < id) {
            players.push((*eid, *value));
        }
        if let Some((eid, _, value)) = e.next_if(|(eid, _, _)| eid == id) {
            players.push((*eid, *value));
            continue;
        }
        while gone.next_if(|g| *g < id).is_some() {}
        if gone.next_if(|g| *g == id).is_some() {
            continue;
        }
        players.push((*id, q.moved(&motion)));
    }
    players.extend(e.map(|(id, _, value)| (*id, *value)));
    if !stale_mask.is_empty() && stale_mask.len() != players.len().div_ceil(8) {
        return Err(bad("a stale mask of the wrong length"));
    }
    let stale = players
        .iter()
        .enumerate()
        .filter(|(i, _)| {
            stale_mask
                .get(i / 8)
                .is_some_and(|m| m & (1 << (i % 8)) != 0)
        })
        .map(|(_, (id, _))| *id)
        .collect();
    Ok(compact::QuantisedFrame {
        server_tick,
        own,
        players,
        stale,
        timing,
    })
}

/// Bytes the removals `removed` (indices in the baseline's set, rising)
/// take in a delta body, their count included: what [`write_body`]
/// writes of them.
pub fn removals_bytes(removed: &[usize]) -> usize {
    varint::len(removed.len() as u64) + removal_gaps(removed).map(varint::len).sum::<usize>()
}

/// The gaps that name `removed` (rising places): the first place, then
/// each place less the one before it, less one.
fn removal_gaps(removed: &[usize]) -> impl Iterator<Item = u64> + '_ {
    let mut previous = None;
    removed.iter().map(move |&at| {
        let gap = previous.map_or(at, |p: usize| at - p - 1);
        previous = Some(at);
        gap as u64
    })
}

/// Bytes the entry of one player takes in a delta body (its id gap taken
/// as one byte), given the baseline's prediction: 0 when it is already
/// right; new to the set (no prediction), its differences from the game's
/// template, or the whole state.
#[inline]
pub fn entry_cost<F: Fields>(predicted: Option<&F>, value: &F) -> usize {
    // Most entries of a frame are predicted right: that answer is inlined,
    // the rest is not.
    match predicted {
        Some(predicted) if predicted == value => 0,
        _ => cost_of_change(predicted, value),
    }
}

/// [`entry_cost`] of an entry that changed.
#[inline(never)]
fn cost_of_change<F: Fields>(predicted: Option<&F>, value: &F) -> usize {
    let Some(predicted) = predicted.copied() else {
        return F::template()
            .filter(|t| t != value)
            .map_or(1 + 1 + full_bytes::<F>(), |t| changes_cost(&t, value));
    };
    changes_cost(&predicted, value)
}

/// Bytes an entry of the fields of `value` that differ from `predicted`
/// takes (its id gap as one byte).
fn changes_cost<F: Fields>(predicted: &F, value: &F) -> usize {
    let changes: usize = F::WIDTHS
        .iter()
        .enumerate()
        .filter(|&(i, _)| predicted.get(i) != value.get(i))
        .map(|(i, w)| match w {
            Width::Wide => varint::len(zigzag(value.get(i).wrapping_sub(predicted.get(i)) as i16)),
            Width::Byte => 1,
        })
        .sum();
    1 + 1 + changes
}

/// The state of `id` in a set in id order.
pub fn lookup<F: Fields>(set: &[Entity<F>], id: PlayerId) -> Option<F> {
    set.binary_search_by_key(&id, |(i, _)| *i)
        .ok()
        .map(|i| set[i].1)
}

/// Writes an entry new to the set: its differences from the game's
/// template under a mask with the new bit, or (no template, or the value
/// is the template itself) the new bit alone and the state in full.
fn write_new<F: Fields>(value: &F, out: &mut Vec<u8>) {
    let at = out.len();
    if let Some(template) = F::template() {
        if write_changes(&template, value, out) {
            out[at] |= NEW;
            return;
        }
    }
    out.push(NEW);
    write_full(value, out);
}

/// Writes the fields of `value` that differ from `predicted`; `false` (and
/// nothing written) when none do.
fn write_changes<F: Fields>(predicted: &F, value: &F, out: &mut Vec<u8>) -> bool {
    let () = FitsAMask::<F>::CHECKED;
    let mut mask = 0;
    for i in 0..F::WIDTHS.len() {
        if predicted.get(i) != value.get(i) {
            mask |= 1 << i;
        }
    }
    if mask == 0 {
        return false;
    }
    out.push(mask);
    for (i, width) in F::WIDTHS.iter().enumerate() {
        if mask & (1 << i) == 0 {
            continue;
        }
        let (old, new) = (predicted.get(i), value.get(i));
        match width {
            Width::Wide => varint::write(zigzag(new.wrapping_sub(old) as i16), out),
            Width::Byte => out.push(new as u8),
        }
    }
    true
}

fn read_changes<F: Fields>(r: &mut Reader<'_>, mask: u8, mut value: F) -> Result<F, ProtocolError> {
    let () = FitsAMask::<F>::CHECKED;
    if u32::from(mask) >> F::WIDTHS.len() != 0 {
        return Err(bad("a change of a field the state lacks"));
    }
    for (i, width) in F::WIDTHS.iter().enumerate() {
        if mask & (1 << i) == 0 {
            continue;
        }
        let new = match width {
            Width::Wide => value.get(i).wrapping_add(unzigzag(r.varint()?)? as u16),
            Width::Byte => u16::from(r.u8()?),
        };
        value.set(i, new);
    }
    Ok(value)
}

/// A state of at most [`MAX_FIELDS`] fields, checked when the coder is
/// built for it (a game with more does not compile).
struct FitsAMask<F>(std::marker::PhantomData<F>);

impl<F: Fields> FitsAMask<F> {
    const CHECKED: () = assert!(
        F::WIDTHS.len() <= MAX_FIELDS,
        "a replicated state has at most 7 fields"
    );
}

/// A state written in full: each field little-endian, in order.
pub fn write_full<F: Fields>(value: &F, out: &mut Vec<u8>) {
    for (i, width) in F::WIDTHS.iter().enumerate() {
        let v = value.get(i);
        match width {
            Width::Wide => out.extend_from_slice(&v.to_le_bytes()),
            Width::Byte => out.push(v as u8),
        }
    }
}

/// Reads a state written by [`write_full`].
///
/// # Errors
/// Bytes that end early.
pub fn read_full<F: Fields>(r: &mut Reader<'_>) -> Result<F, ProtocolError> {
    let mut value = F::default();
    for (i, width) in F::WIDTHS.iter().enumerate() {
        let v = match width {
            Width::Wide => r.u16()?,
            Width::Byte => u16::from(r.u8()?),
        };
        value.set(i, v);
    }
    Ok(value)
}

/// Reads an entry new to the set written by [`write_new`] (its `mask`
/// already read).
fn read_new<F: Fields>(r: &mut Reader<'_>, mask: u8) -> Result<F, ProtocolError> {
    if mask == NEW {
        return read_full(r);
    }
    let template =
        F::template().ok_or_else(|| bad("a new entry from a template the state lacks"))?;
    read_changes(r, mask & !NEW, template)
}

/// The ids a delta removes from `base`: each named by its place in it
/// (`by_id` false) or by its id (a kind 2 frame), in increasing order.
fn read_removed<F: Fields>(
    r: &mut Reader<'_>,
    base: &[Entity<F>],
    by_id: bool,
) -> Result<Vec<PlayerId>, ProtocolError> {
    let count = r.count()?;
    if count > base.len() {
        return Err(bad("more removals than the baseline holds"));
    }
    let mut removed = Vec::with_capacity(count);
    if by_id {
        let mut previous = None;
        for _ in 0..count {
            let id = read_gap(r, previous)?;
            if lookup(base, id).is_none() {
                return Err(bad("a removal of a player the baseline lacks"));
            }
            removed.push(id);
            previous = Some(id);
        }
        return Ok(removed);
    }
    let mut next = 0usize;
    for _ in 0..count {
        let gap = usize::try_from(r.varint()?).map_err(|_| bad("a removal out of range"))?;
        let at = next
            .checked_add(gap)
            .filter(|at| *at < base.len())
            .ok_or_else(|| bad("a removal of a player the baseline lacks"))?;
        removed.push(base[at].0);
        next = at + 1;
    }
    Ok(removed)
}

fn write_gap(previous: Option<PlayerId>, id: PlayerId, out: &mut Vec<u8>) {
    let gap = previous.map_or(id.0, |p| id.0 - p.0 - 1);
    varint::write(u64::from(gap), out);
}

fn read_gap(r: &mut Reader<'_>, previous: Option<PlayerId>) -> Result<PlayerId, ProtocolError> {
    let gap = u32::try_from(r.varint()?).map_err(|_| bad("an id gap out of range"))?;
    let id = match previous {
        None => Some(gap),
        Some(p) => p.0.checked_add(1).and_then(|n| n.checked_add(gap)),
    };
    id.map(PlayerId).ok_or_else(|| bad("an id out of range"))
}

fn zigzag(v: i16) -> u64 {
    u64::from(((v << 1) ^ (v >> 15)) as u16)
}

fn unzigzag(v: u64) -> Result<i16, ProtocolError> {
    let v = u16::try_from(v).map_err(|_| bad("a difference out of range"))?;
    Ok(((v >> 1) as i16) ^ -((v & 1) as i16))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zigzag_differences_round_trip() {
        for v in [0i16, 1, -1, 63, -64, i16::MAX, i16::MIN] {
            assert_eq!(unzigzag(zigzag(v)).unwrap(), v);
        }
    }

    #[test]
    fn removals_cost_what_the_body_writes_of_them() {
        for removed in [
            vec![],
            vec![0],
            vec![3, 4, 200],
            (0..300).step_by(3).collect(),
        ] {
            let mut out = Vec::new();
            write_body::<Dot>(&removed, &[], &[], &mut out);
            // Then no entries and no stale mask: a byte each.
            assert_eq!(out.len(), removals_bytes(&removed) + 2, "{removed:?}");
        }
    }

    /// A dot of two wide fields and a kind; most are of kind 2 at the
    /// origin's row.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    struct Dot(u16, u16, u8);

    impl Fields for Dot {
        type Config = ();
        type Motion = ();
        const WIDTHS: &'static [Width] = &[Width::Wide, Width::Wide, Width::Byte];
        fn get(&self, i: usize) -> u16 {
            [self.0, self.1, u16::from(self.2)][i]
        }
        fn set(&mut self, i: usize, v: u16) {
            match i {
                0 => self.0 = v,
                1 => self.1 = v,
                _ => self.2 = v as u8,
            }
        }
        fn motion(_: u32, (): &()) {}
        fn moved(&self, (): &()) -> Dot {
            *self
        }
        fn template() -> Option<Dot> {
            Some(Dot(0, 0, 2))
        }
    }

    /// The same dot without a template.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    struct Plain(Dot);

    impl Fields for Plain {
        type Config = ();
        type Motion = ();
        const WIDTHS: &'static [Width] = Dot::WIDTHS;
        fn get(&self, i: usize) -> u16 {
            self.0.get(i)
        }
        fn set(&mut self, i: usize, v: u16) {
            self.0.set(i, v);
        }
        fn motion(_: u32, (): &()) {}
        fn moved(&self, (): &()) -> Plain {
            *self
        }
    }

    fn body<F: Fields<Config = ()>>(target: &[Entity<F>]) -> Vec<u8> {
        let mut out = Vec::new();
        encode_body::<F>(&[], target, 1, &(), &mut out);
        out
    }

    #[test]
    fn a_new_entry_travels_as_its_differences_from_the_template() {
        let dots: Vec<Entity<Dot>> = vec![
            (PlayerId(1), Dot(100, 50, 2)),
            (PlayerId(2), Dot(0, 0, 2)),
            (PlayerId(3), Dot(4000, 9, 1)),
        ];
        let plain: Vec<Entity<Plain>> = dots.iter().map(|(id, d)| (*id, Plain(*d))).collect();
        let (short, long) = (body(&dots), body(&plain));
        // Plain: 5 bytes + gap + mask each. Template: (100, 50) in 2 + 1
        // bytes, the template itself in full, (4000, 9, 1) in 2 + 1 + 1.
        assert_eq!(long.len(), 3 + 3 * 7);
        assert_eq!(short.len(), 3 + (2 + 3) + 7 + (2 + 4));
        // Read back entry by entry, as `decode` reads them.
        let mut r = Reader::new(&short);
        assert_eq!(r.count().expect("removed"), 0);
        assert_eq!(r.count().expect("entries"), 3);
        let mut previous = None;
        for (id, d) in &dots {
            let got = read_gap(&mut r, previous).expect("gap");
            previous = Some(got);
            let mask = r.u8().expect("mask");
            assert_ne!(mask & NEW, 0, "new");
            let value: Dot = read_new(&mut r, mask).expect("new entry");
            assert_eq!((got, value), (*id, *d));
        }
        // A state without a template cannot read one.
        assert!(read_new::<Plain>(&mut Reader::new(&[1, 2]), NEW | 1).is_err());
        for (id, d) in &dots {
            let cost = entry_cost::<Dot>(None, d);
            let mut one = Vec::new();
            write_new(d, &mut one);
            assert_eq!(cost, 1 + one.len(), "{id:?}");
        }
    }

    #[test]
    fn removals_name_their_place_in_the_baseline_and_old_frames_their_ids() {
        let base: Vec<Entity<Dot>> = [1, 5, 9]
            .iter()
            .map(|&i| (PlayerId(i), Dot(i as u16, 0, 2)))
            .collect();
        // 1 and 9 leave: places 0 and 2, written as gaps 0 and 1.
        let out = {
            let mut out = Vec::new();
            encode_body(&base, &base[1..2], 1, &(), &mut out);
            out
        };
        assert_eq!(out[..3], [2, 0, 1]);
        let read = |bytes: &[u8], by_id: bool| read_removed(&mut Reader::new(bytes), &base, by_id);
        assert_eq!(read(&out, false), Ok(vec![PlayerId(1), PlayerId(9)]));
        // A frame of kind 2 names ids: 1, then 9 as the gap 7.
        assert_eq!(read(&[2, 1, 7], true), Ok(vec![PlayerId(1), PlayerId(9)]));
        // Past the end, more than it holds, an id it lacks: refused.
        assert!(read(&[1, 3], false).is_err());
        assert!(read(&[2, 2, 0], false).is_err());
        assert!(read(&[4, 0, 0, 0, 0], false).is_err());
        assert!(read(&[1, 2], true).is_err());
    }
}
