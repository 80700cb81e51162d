//! What the library needs of a game's input as it travels: the tick it
//! names, the view it was made in, what the server's input timing must
//! know of it, and its part of the binary input message
//! ([`crate::shared::uplink`]).
//!
//! The library owns the envelope of every input (its tick, coded as a gap
//! from the previous one, and its view, coded to 1/256 of a tick) and the
//! top three bits of its head byte; the game owns the head's low five bits
//! and the bytes it writes after the gap. A game whose input fits five bits
//! (a few keys) pays one byte per input resent.

use crate::shared::bytes::{ReadError, Reader};
use crate::shared::tick::Tick;

/// The head bits a game may use (bits 0 to 4); the library's are 5 to 7.
pub const GAME_BITS: u8 = 0x1f;

/// An input as it travels: the tick it names, the view it was made in,
/// and what the world needs to know of what it does.
pub trait Wired: Copy + std::fmt::Debug + Send + Sync {
    /// The game's input it carries.
    type Input;

    /// The game's input it carries (without its tick and view).
    fn input(&self) -> Self::Input;

    /// `input`, made for `tick` while the others were drawn at server tick
    /// `view_tick`, as it travels.
    fn of(tick: Tick, input: Self::Input, view_tick: Option<f64>) -> Self;

    /// The tick the input names.
    fn tick(&self) -> Tick;

    /// The server tick, with fraction, remotes were drawn at when it was
    /// made (`None`: now).
    fn view_tick(&self) -> Option<f64>;

    /// The same input seen at `view_tick` (the binary form reads the view
    /// after the game's part).
    #[must_use]
    fn with_view(self, view_tick: Option<f64>) -> Self;

    /// Whether it does something judged at its view (an action aimed at
    /// what its sender saw): such an input keeps the oldest view its
    /// sender's round trip allows, and a late one is still honoured once,
    /// at the next tick.
    fn acts_on_view(&self) -> bool;

    /// The input repeated at `tick` because that tick's own is missing:
    /// its lasting part only (movement, never an action aimed at a view).
    #[must_use]
    fn repeated_at(&self, tick: Tick) -> Self;

    /// Whether every number it holds is finite (its view aside, which the
    /// library checks): an input from the network that is not is refused
    /// with `non_finite`.
    fn is_finite(&self) -> bool;

    /// Appends the game's part of the binary form to `out` and returns the
    /// game's head bits (within [`GAME_BITS`]; others are dropped).
    fn write_bits(&self, out: &mut Vec<u8>) -> u8;

    /// Reads the game's part written by [`Wired::write_bits`], given its
    /// head bits, as the input at `tick` with no view.
    ///
    /// # Errors
    /// Bytes that end early or do not form an input.
    fn read_bits(head: u8, r: &mut Reader<'_>, tick: Tick) -> Result<Self, ReadError>;
}
