//! Walkers in the harness (`skirmish-harness`): its seeded run, how the
//! stepper sees a walker, a brain that paces back and forth ([`Pace`]),
//! and the main cell of its quality page.
//!
//! Apart from the guide's listing (`listing.rs`, which a tidy test holds
//! to `docs/GUIDE.md`): what a game adds to be run by the harness, in
//! its own crate, with the library's traits.

use skirmish_core::{ClientSession, Driver, Harness, QualityWords, RoomConfig, SeededRng, Vec2};

use crate::{Walk, Walkers, FIELD};

/// Walks along x between two marks, turning at each, and drifts along y
/// now and then: steady motion with reversals, as a player's would be.
#[derive(Clone, Debug)]
pub struct Pace {
    /// Where it turns back, in units.
    pub marks: (f32, f32),
    /// Which way it goes now along x.
    pub right: bool,
    /// Frames so far (the drift along y changes every 150).
    frames: u64,
}

impl Pace {
    /// A pacer between `from` and `to`.
    pub fn new(from: f32, to: f32) -> Pace {
        Pace {
            marks: (from, to),
            right: true,
            frames: 0,
        }
    }

    /// Pacer number `i` of a crowd: each along its own stretch of 200
    /// units, the crowd spread over the field (16 stretches, then again).
    pub fn spread(i: usize) -> Pace {
        let from = 100.0 + 50.0 * (i % 16) as f32;
        Pace::new(from, from + 200.0)
    }
}

impl Driver<Walkers> for Pace {
    fn controls(&mut self, session: &ClientSession<Walkers>, (): &()) -> (i8, i8) {
        self.frames += 1;
        if let Some(me) = session.view().own {
            if me.predicted.x >= self.marks.1 {
                self.right = false;
            } else if me.predicted.x <= self.marks.0 {
                self.right = true;
            }
        }
        let y = match (self.frames / 150) % 4 {
            1 => 1,
            3 => -1,
            _ => 0,
        };
        (if self.right { 1 } else { -1 }, y)
    }
}

/// The harness's side: a seeded walk from the middle for the determinism
/// check, and the main cell, 16 pacers with the shipped defaults. A
/// walker may turn back at once: it snapped back only if drawn going back
/// faster than it can walk (200 units a second along each axis, so 2.83
/// diagonally in a 10 ms frame, drawn up to 10 % faster while the remote
/// timeline catches up: 3.11).
impl Harness for Walkers {
    type Driver = Pace;

    const WORDS: QualityWords = QualityWords {
        title: "walkers, the guide's game",
        cell:
            "`games/walkers/src/driver.rs`: 16 pacers walking back and forth, the real `Room` and \
`ClientSession`s of `docs/GUIDE.md`'s game",
        remark:
            "A walker turns back at once, so a repeated tick across a turn is off by two steps \
(20 units) and snaps.",
    };

    fn seeded_start((): &()) -> Vec2 {
        Vec2::splat(FIELD / 2.0)
    }

    fn seeded_input(rng: &mut SeededRng, _: u32, _: Walk) -> Walk {
        (rng.below(3) as i8 - 1, rng.below(3) as i8 - 1)
    }

    fn main_room() -> RoomConfig<Walkers> {
        RoomConfig {
            name: "walkers".into(),
            capacity: usize::MAX,
            seed: 11,
            ..RoomConfig::default()
        }
    }

    fn main_player(i: usize) -> (Pace, u64) {
        (Pace::spread(i), 300 + i as u64)
    }

    fn snapped_back(before: Vec2, now: Vec2) -> bool {
        before.length() > 0.1 && now.dot(before) < 0.0 && now.length() > 3.2
    }
}

/// The whole game's sync test, natively here and in headless Chromium by
/// the page's tests (`page/tests/sync.rs`): a seeded world of the default
/// settings from seed 7, 4 players, 60 ticks each re-simulated 4 ahead.
pub const SYNC_TEST: (u64, (u32, u32, u32)) = (7, (4, 60, 4));

/// What [`SYNC_TEST`] folds to on every target (a change to the rules of
/// the world moves it, deliberately, on both sides together).
pub const SYNC_HASH: u64 = 0x922e_9570_3b3b_8b43;

#[cfg(test)]
mod sync_tests {
    use super::{SYNC_HASH, SYNC_TEST};

    #[test]
    fn the_whole_walkers_game_resimulates_to_its_hash() {
        let (seed, run) = SYNC_TEST;
        let report = skirmish_core::sync_test::<crate::Walkers>(&Default::default(), seed, run)
            .unwrap_or_else(|d| panic!("{d:?}"));
        assert_eq!(report.compared, 240);
        assert_eq!(report.hash, SYNC_HASH, "got {:#018x}", report.hash);
    }
}
