//! What a game gives the harness (the crate `skirmish-harness`) beyond its
//! rules, so that a game in a crate of its own gets the deterministic
//! stepper, the scenario matrix, its quality page, bots and replays by
//! implementing a few traits here, where the orphan rule lets it.
//!
//! - [`SteppedGame`]: how the stepper watches what a page draws of the
//!   game (where a drawn thing is, what a snap-back looks like, which
//!   note is a hit of the player's own action).
//! - [`Driver`]: a client's brain, reading only what its session shows
//!   and answering with the controls it holds this frame; the same brain
//!   drives clients in the stepper and bots over real sockets.
//! - [`MainCell`]: the game's main cell (its room and its players'
//!   brains, on the harness's main link) and the words of its quality
//!   page ([`QualityWords`]).
//!
//! Like the rest of the library these are pure: no I/O, no clock, no
//! async. The harness supplies time and sockets.

use crate::client::game::ClientGame;
use crate::client::session::ClientSession;
use crate::server::room::RoomConfig;
use crate::server::world::ServerGame;
use glam::Vec2;

/// What the stepper needs of a game beyond the library's traits.
pub trait SteppedGame: ServerGame + ClientGame {
    /// Where a drawn visual is on the plane (drawn remotes are watched for
    /// snap-backs there).
    fn place(visual: &Self::Local) -> Vec2;

    /// Whether a remote drawn moving `before` last frame and `now` this one
    /// snapped back: what its motion cannot do in one frame. By default
    /// the rule of a thing that slows down before it reverses: it was
    /// moving, and now goes the other way by more than half a unit.
    fn snapped_back(before: Vec2, now: Vec2) -> bool {
        slows_before_reversing(before, now)
    }

    /// Whether a note tells a hit of the player's own action (counted in
    /// the stepper's trace); by default none does.
    fn is_hit(note: &Self::Note) -> bool {
        let _ = note;
        false
    }
}

/// A client's brain: the controls it holds this frame.
pub trait Driver<G: ClientGame> {
    /// The controls for this frame of `session`, in a world of `config`.
    fn controls(&mut self, session: &ClientSession<G>, config: &G::Config) -> G::Controls;
}

/// A brain lent out drives as itself.
impl<G: ClientGame, D: Driver<G> + ?Sized> Driver<G> for &mut D {
    fn controls(&mut self, session: &ClientSession<G>, config: &G::Config) -> G::Controls {
        (**self).controls(session, config)
    }
}

/// A game's main cell: the run its quality page reports and its tests
/// hold to the timing budget. The harness runs it on its main link
/// (150 ms round trip, ±30 ms jitter, 5 % loss each way), binary all the
/// way, with the resends a session ships with, for 60 s.
pub trait MainCell: SteppedGame {
    /// The brain of the main cell's players.
    type Driver: Driver<Self>;

    /// How many players play the main cell.
    const PLAYERS: usize = 16;

    /// What the game's quality page says of its main cell.
    const WORDS: QualityWords;

    /// The room the players join (the game's settings, seed, interest).
    fn main_room() -> RoomConfig<Self>;

    /// Player `i`'s brain (from 0) and the seed of its session.
    fn main_player(i: usize) -> (Self::Driver, u64);
}

/// A game's own words on its quality page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QualityWords {
    /// The page's title after "Netcode quality: " (the game and what it is).
    pub title: &'static str,
    /// The main cell: where its brains are written and what they do.
    pub cell: &'static str,
    /// What the game's numbers mean, after the run's description (may be
    /// empty).
    pub remark: &'static str,
}

/// A drawn thing that was moving and now goes the other way by more than
/// half a unit in one frame snapped back, if it slows down before it
/// reverses.
fn slows_before_reversing(before: Vec2, now: Vec2) -> bool {
    before.length() > 0.1 && now.dot(before) < 0.0 && now.length() > 0.5
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drawn_thing_that_goes_back_against_its_motion_has_snapped_back() {
        let ahead = Vec2::new(2.0, 0.0);
        // Bending, slowing down, standing still: motion, not a snap.
        assert!(!slows_before_reversing(ahead, Vec2::new(1.5, 1.0)));
        assert!(!slows_before_reversing(ahead, Vec2::new(-0.2, 0.0)));
        assert!(!slows_before_reversing(Vec2::ZERO, Vec2::new(-3.0, 0.0)));
        // An extrapolation taken back: two units the other way in a frame.
        assert!(slows_before_reversing(ahead, Vec2::new(-2.0, 0.5)));
    }
}
