//! What the harness needs of a game beyond its rules, and the
//! determinism check every game gets from it.
//!
//! [`trace`] runs a seeded sequence of a game's inputs through its step
//! ([`Game::predict`]) with durations that are and are not whole cadences,
//! and hashes the bits of the state after every step. Run natively and in
//! the browser (a game's page exposes it), the two traces must be equal;
//! [`first_divergence`] names the first step where they are not, which is
//! where to look (a `sin` that is not `libm`'s, a fused multiply-add, an
//! iteration over a hash map).

use crate::shared::bytes::{Codec, Writer};
use crate::shared::determinism::{seeded_duration, Fnv64};
use crate::shared::game::Game;
use crate::shared::rng::SeededRng;

/// A game the harness can run alone: seeded inputs, a start, a hash.
pub trait Harness: Game<Local: Codec> {
    /// The configuration a seeded run uses.
    fn config() -> Self::Config;

    /// Where a seeded run starts.
    fn start(config: &Self::Config) -> Self::Local;

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
}

/// The running hash after each of `steps` seeded steps of `G` from `seed`.
pub fn trace<G: Harness>(seed: u64, steps: u32) -> Vec<u64> {
    let config = G::config();
    let cadence = G::cadence(&config);
    let mut rng = SeededRng::new(seed);
    let mut local = G::start(&config);
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
