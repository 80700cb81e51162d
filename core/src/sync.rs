//! The whole game's determinism, from a seeded world: a sync test, as
//! GGRS's `SyncTestSession` runs one, of the server's step (the game's
//! rules of its world, its things and its events, not only the movement
//! step that [`trace`](crate::trace) checks).
//!
//! [`sync_test`] steps a seeded world ([`SeededWorld`]: the game's own
//! seeded inputs, [`Harness::seeded_input`]); every tick the world is
//! saved, stepped a few ticks ahead, restored and stepped again with the
//! same inputs, and the two runs must give the same hash, every tick. A
//! step that reads anything outside its world (a global, a clock, a
//! counter kept elsewhere) or leaves part of its state out of the world
//! diverges, and the check names the tick and the part. The report's hash
//! folds every tick's parts: run natively and in the browser (a game's
//! page tests run it in headless Chromium), the two must be equal.

use crate::server::world::{InputMode, ServerGame, World};
use crate::shared::bytes::Writer;
use crate::shared::determinism::Fnv64;
use crate::shared::fields::Fields;
use crate::shared::game::OwnState;
use crate::shared::rng::SeededRng;
use crate::shared::state::PlayerId;
use crate::shared::tick::Tick;
use crate::shared::wired::Wired;
use crate::stepped::Harness;

/// A seeded world of a game: its players joined, each fed the game's own
/// seeded inputs, as the whole-game checks play it.
#[derive(Clone, Debug)]
pub struct SeededWorld<G: Harness> {
    /// The world.
    pub world: World<G>,
    rng: SeededRng,
    ids: Vec<PlayerId>,
    last: Vec<G::Input>,
    step: u32,
}

impl<G: Harness> SeededWorld<G> {
    /// A world set up by `settings` from `seed`, with `players` players
    /// (ids 1 to `players`) scheduling their inputs.
    pub fn new(settings: &G::Settings, seed: u64, players: u32) -> SeededWorld<G> {
        let (config, game) = <G as ServerGame>::start(settings);
        let mut world = World::<G>::of(config, game, seed);
        let ids: Vec<PlayerId> = (1..=players).map(PlayerId).collect();
        for id in &ids {
            // Fresh ids in an empty world: a join cannot be refused.
            let _ = world.join_with(*id, "seeded", InputMode::Scheduled);
        }
        SeededWorld {
            world,
            rng: SeededRng::new(seed ^ 0x5eed),
            last: vec![G::Input::default(); ids.len()],
            ids,
            step: 0,
        }
    }

    /// Every player's next input, for `tick`, as it travels.
    pub fn inputs(&mut self, tick: u32) -> Vec<(PlayerId, G::Wire)> {
        let tick = Tick(tick);
        let mut out = Vec::with_capacity(self.ids.len());
        for (i, id) in self.ids.iter().enumerate() {
            let input = G::seeded_input(&mut self.rng, self.step, self.last[i]);
            self.last[i] = input;
            out.push((*id, G::Wire::of(tick, input, None)));
        }
        self.step += 1;
        out
    }
}

/// Where a [`sync_test`] found the two runs apart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Desync {
    /// The tick.
    pub tick: Tick,
    /// What differed: a player's own state, a thing, the events.
    pub what: String,
}

/// What a [`sync_test`] that found no divergence compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SyncReport {
    /// Ticks re-simulated and compared.
    pub compared: u64,
    /// Every compared tick's parts, folded: the same natively and in the
    /// browser.
    pub hash: u64,
}

/// Steps a seeded world of `G` set up by `settings` (`players` players,
/// `ticks` ticks); at every tick saves it, steps it `ahead` ticks,
/// restores the save and steps those ticks again with the same inputs,
/// and compares the hash of every re-simulated tick.
///
/// # Errors
/// The first tick whose re-simulation differed, and what differed.
pub fn sync_test<G: Harness>(
    settings: &G::Settings,
    seed: u64,
    (players, ticks, ahead): (u32, u32, u32),
) -> Result<SyncReport, Desync> {
    let mut seeded = SeededWorld::<G>::new(settings, seed, players);
    let mut report = SyncReport {
        compared: 0,
        hash: 0,
    };
    let mut folded = Fnv64::new();
    for _ in 0..ticks {
        let saved = seeded.world.clone();
        let window: Vec<_> = (0..ahead.max(1))
            .map(|j| seeded.inputs(saved.tick().0 + 1 + j))
            .collect();
        let mut first = saved.clone();
        let mut next = None;
        let mut expected = Vec::with_capacity(window.len());
        for wires in &window {
            feed(&mut first, wires);
            first.step();
            expected.push(hashes(&first));
            next.get_or_insert_with(|| first.clone());
        }
        let mut again = saved;
        for (wires, expected) in window.iter().zip(&expected) {
            feed(&mut again, wires);
            again.step();
            report.compared += 1;
            if let Some(what) = first_difference(expected, &hashes(&again)) {
                return Err(Desync {
                    tick: again.tick(),
                    what,
                });
            }
        }
        // The tick kept is the window's first: fold it once.
        for (_, hash) in expected.first().into_iter().flatten() {
            folded.write(&hash.to_le_bytes());
        }
        // On from the window's first tick (its later ticks are drawn again).
        if let Some(next) = next {
            seeded.world = next;
        }
    }
    report.hash = folded.finish();
    Ok(report)
}

fn feed<G: ServerGame>(world: &mut World<G>, wires: &[(PlayerId, G::Wire)]) {
    for (id, wire) in wires {
        world.receive(*id, std::slice::from_ref(wire));
    }
}

/// The hash of each part of a world after a step: every player's own
/// state (by id), every thing (by id), the step's events.
fn hashes<G: ServerGame>(world: &World<G>) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for own in world.snapshot() {
        let mut w = Writer::default();
        own.write(&mut w);
        let stamp = own.stamp();
        out.push((
            format!(
                "player {}'s own state (tick {}, ack {:?})",
                own.id(),
                stamp.tick,
                stamp.ack
            ),
            fnv(&w.bytes),
        ));
    }
    for thing in G::things(world.game()) {
        let fields: Vec<u8> = (0..<G::Entity as Fields>::WIDTHS.len())
            .flat_map(|i| thing.entity.get(i).to_le_bytes())
            .collect();
        out.push((format!("thing {}", thing.id), fnv(&fields)));
    }
    let mut w = Writer::default();
    for event in world.events() {
        crate::shared::bytes::Codec::write(event, &mut w);
    }
    out.push(("the step's events".to_string(), fnv(&w.bytes)));
    out
}

fn fnv(bytes: &[u8]) -> u64 {
    let mut hash = Fnv64::new();
    hash.write(bytes);
    hash.finish()
}

/// What differs first between two runs' hashes of a tick.
fn first_difference(a: &[(String, u64)], b: &[(String, u64)]) -> Option<String> {
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return Some(if x.0 == y.0 {
                x.0.clone()
            } else {
                format!("{} (then {})", x.0, y.0)
            });
        }
    }
    (a.len() != b.len()).then(|| format!("{} parts, then {}", a.len(), b.len()))
}
