//! What a game gives the harness (the crate `skirmish-harness`) beyond its
//! rules, implemented here where the orphan rule lets it: [`Harness`] (its
//! seeded run, how the stepper watches it, its main cell and the words of
//! its quality page, [`QualityWords`]) and a client's brain ([`Driver`]).
//! With them a game in a crate of its own gets the deterministic stepper,
//! the scenario matrix, its quality page, bots and replays.
//!
//! A driver reads only what its session shows and answers with the
//! controls it holds this frame; the same brain drives clients in the
//! stepper and bots over real sockets.
//!
//! [`trace`] runs a seeded sequence of a game's inputs through its step
//! ([`Game::predict`](crate::Game::predict)) with durations that are and
//! are not whole cadences, and hashes the bits of the state after every
//! step. Run natively and in the browser (a game's page exposes it), the
//! two traces must be equal; [`first_divergence`] names the first step
//! where they are not, which is where to look (a `sin` that is not
//! `libm`'s, a fused multiply-add, an iteration over a hash map).
//!
//! Like the rest of the library these are pure: no I/O, no clock, no
//! async. The harness supplies time and sockets.

use glam::Vec2;

use crate::client::game::{ClientGame, NoteOf};
use crate::client::session::ClientSession;
use crate::server::room::RoomConfig;
use crate::server::world::ServerGame;
use crate::shared::bytes::{Codec, Writer};
use crate::shared::determinism::{seeded_duration, Fnv64};
use crate::shared::rng::SeededRng;

/// The harness's side of a game (the crate `skirmish-harness`): a seeded
/// run for the determinism check, how the stepper watches what a page
/// draws, and the game's main cell (its room, its players' brains and the
/// words of its quality page). With a [`Driver`] it is all a game
/// implements beyond its rules to get the stepper, the scenario matrix,
/// its quality page, bots and replays.
pub trait Harness: ServerGame + ClientGame {
    /// The brain of the main cell's players.
    type Driver: Driver<Self>;

    /// How many players play the main cell.
    const PLAYERS: usize = 16;

    /// What the game's quality page says of its main cell.
    const WORDS: QualityWords;

    /// The configuration a seeded run uses; by default the default one.
    fn config() -> Self::Config {
        Self::Config::default()
    }

    /// Where a seeded run starts.
    fn seeded_start(config: &Self::Config) -> Self::Local;

    /// The input for step `step` of a seeded run, drawn from `rng`, given
    /// the previous step's.
    fn seeded_input(rng: &mut SeededRng, step: u32, previous: Self::Input) -> Self::Input;

    /// Folds every bit of `local` that the step computes into `hash`; by
    /// default its binary form.
    fn hash(local: &Self::Local, hash: &mut Fnv64) {
        let mut w = Writer::default();
        local.write(&mut w);
        hash.write(&w.bytes);
    }

    /// The main cell's room, run by the harness on its main link (150 ms
    /// round trip, ±30 ms jitter, 5 % loss each way), binary all the way,
    /// with the resends a session ships with, for 60 s: the game's
    /// settings, seed and interest.
    fn main_room() -> RoomConfig<Self>;

    /// Player `i`'s brain (from 0) and the seed of its session.
    fn main_player(i: usize) -> (Self::Driver, u64);

    /// Whether a remote drawn moving `before` last frame and `now` this one
    /// snapped back: what its motion cannot do in one frame. By default
    /// the rule of a thing that slows down before it reverses: it was
    /// moving, and now goes the other way by more than half a unit.
    fn snapped_back(before: Vec2, now: Vec2) -> bool {
        slows_before_reversing(before, now)
    }

    /// Whether a note tells a hit of the player's own action (counted in
    /// the stepper's trace); by default none does.
    fn is_hit(note: &NoteOf<Self>) -> bool {
        let _ = note;
        false
    }
}

/// The running hash after each of `steps` seeded steps of `G` from `seed`.
pub fn trace<G: Harness>(seed: u64, steps: u32) -> Vec<u64> {
    let config = G::config();
    let cadence = G::cadence(&config);
    let mut rng = SeededRng::new(seed);
    let mut local = G::seeded_start(&config);
    let mut input = G::Input::default();
    let mut hash = Fnv64::new();
    let mut out = Vec::with_capacity(steps as usize);
    for step in 0..steps {
        input = G::seeded_input(&mut rng, step, input);
        let duration = seeded_duration(&mut rng, cadence);
        local = G::predict(local, &input, duration, &config);
        G::hash(&local, &mut hash);
        out.push(hash.finish());
    }
    out
}

/// The first step at which two traces differ (a step one has and the
/// other lacks counts); `None` when they are equal.
pub fn first_divergence(a: &[u64], b: &[u64]) -> Option<usize> {
    a.iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .or_else(|| (a.len() != b.len()).then(|| a.len().min(b.len())))
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
