//! How a replicated state travels in binary snapshots: a fixed list of
//! small integer fields ([`Fields`]) that the snapshot and delta coders
//! write without knowing what they mean. A game quantises its state into
//! them (positions to 16 bits of its world, flags to a byte) and says how
//! its velocity moves them between snapshots ([`Fields::moved`]), so an
//! idle or steadily moving entity costs nothing in a delta.
//!
//! Each field is [`Width::Wide`] (16 bits: written in full as two bytes,
//! in a delta as the zig-zag varint of its wrapping difference from the
//! prediction: positions and headings) or [`Width::Byte`] (8 bits, written
//! as the byte itself: counters, flags, velocities). A state has at most
//! seven fields: a delta entry's mask is one byte whose top bit marks an
//! entity new to the set. A game whose new entities are mostly alike (an
//! .io game's pellets) gives a [`Fields::template`]: a new one then
//! travels as its differences from it.

use std::fmt::Debug;

/// How one field travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    /// 16 bits; in a delta, the zig-zag varint of the wrapping difference.
    Wide,
    /// 8 bits; in a delta, the new byte.
    Byte,
}

impl Width {
    /// Bytes the field takes written in full.
    pub const fn bytes(self) -> usize {
        match self {
            Width::Wide => 2,
            Width::Byte => 1,
        }
    }
}

/// The most fields a state may have.
pub const MAX_FIELDS: usize = 7;

/// A replicated state as binary snapshots carry it.
pub trait Fields: Copy + Debug + Default + PartialEq + Eq + Send + Sync {
    /// What quantising and motion depend on (a world's size, a top speed).
    type Config;
    /// How far `ticks` of motion carry a state, computed once per frame.
    type Motion: Copy + Send + Sync;

    /// The fields, in the order they travel; at most [`MAX_FIELDS`].
    const WIDTHS: &'static [Width];

    /// Field `i` (a [`Width::Byte`] field in the low 8 bits).
    fn get(&self, i: usize) -> u16;

    /// Sets field `i`.
    fn set(&mut self, i: usize, value: u16);

    /// The motion of `ticks` ticks.
    fn motion(ticks: u32, config: &Self::Config) -> Self::Motion;

    /// Where this state's own motion takes it (every other field
    /// unchanged); the same on every target, as both sides predict with it.
    #[must_use]
    fn moved(&self, motion: &Self::Motion) -> Self;

    /// What a state new to a delta is written as differences from, when
    /// that is shorter than in full; `None` (the default): new states
    /// travel in full.
    fn template() -> Option<Self> {
        None
    }
}

/// Bytes a state of `F` takes written in full.
pub fn full_bytes<F: Fields>() -> usize {
    F::WIDTHS.iter().map(|w| w.bytes()).sum()
}
