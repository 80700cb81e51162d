//! Blobs in the harness (`skirmish-harness`): its seeded run, how the
//! stepper sees a blob, a brain that grazes pellets and flees larger blobs ([`Graze`]),
//! and the main cell of its quality page.

use skirmish_core::determinism::Fnv64;
use skirmish_core::{ClientSession, Driver, Harness, InterestConfig, QualityWords, RoomConfig};
use skirmish_core::{SeededRng, Vec2};

use crate::{Arena, BlobSettings, Blobs, Body, Steer, BLOB, BOOST, MOVE};

/// Grazes: heads for the nearest pellet it sees, away from any blob half
/// again its size within 300 units, and boosts when fleeing.
#[derive(Clone, Debug, Default)]
pub struct Graze;

/// The steering toward `to` from `from`.
fn toward(from: Vec2, to: Vec2, flags: u8) -> Steer {
    let way = to - from;
    let turn = libm::atan2f(way.y, way.x).rem_euclid(std::f32::consts::TAU);
    (
        (turn / std::f32::consts::TAU * 65_536.0) as u32 as u16,
        flags,
    )
}

impl Driver<Blobs> for Graze {
    fn controls(&mut self, session: &ClientSession<Blobs>, _: &Arena) -> Steer {
        let view = session.view();
        let Some(me) = view.own.filter(|o| o.alive) else {
            return (0, 0);
        };
        let here = me.predicted.at;
        let mass = me.predicted.mass;
        let threat = view
            .remotes
            .iter()
            .filter(|r| r.state.kind == BLOB && r.state.mass >= 1.5 * mass)
            .map(|r| r.visual.at)
            .find(|at| at.distance(here) < 300.0);
        if let Some(at) = threat {
            return toward(at, here, MOVE | BOOST);
        }
        view.things
            .iter()
            .map(|pellet| pellet.visual.at)
            .min_by(|a, b| a.distance(here).total_cmp(&b.distance(here)))
            .map_or((0, 0), |at| toward(here, at, MOVE))
    }
}

/// The harness's side: a seeded steering from the middle, boosting now and
/// then, for the determinism check; the main cell, 16 grazers with the
/// shipped defaults, 300 pellets on a square of 1,500 units, each page
/// seeing 500 units and more as it grows. A blob may turn back at once: it
/// snapped back only if drawn going back faster than it can go (450 units
/// a second boosting, 4.5 in a 10 ms frame, drawn up to 10 % faster while
/// the remote timeline catches up: 5).
impl Harness for Blobs {
    type Driver = Graze;

    const WORDS: QualityWords = QualityWords {
        title: "blobs, the .io arena",
        cell: "`games/blobs/src/driver.rs`: 16 grazers chasing the nearest pellet and fleeing larger \
blobs, 300 pellets the server owns on a square of 1,500 units, each page seeing 500 units and more as \
it grows, the real `Room` and `ClientSession`s",
        remark: "Growing never changes a prediction (a blob's pace follows its mass a second after the \
server schedules it); being eaten and coming back are placements, not corrections; so every \
misprediction is a late or repeated input's. Downlink is every frame a page received: the blobs and \
the pellets in its view.",
    };

    fn main_room() -> RoomConfig<Blobs> {
        RoomConfig {
            name: "blobs".into(),
            capacity: usize::MAX,
            seed: 13,
            game: BlobSettings {
                side: 1500.0,
                pellets: 300,
            },
            interest: InterestConfig {
                radius: Some(500.0),
                ..InterestConfig::default()
            },
        }
    }

    fn main_player(i: usize) -> (Graze, u64) {
        (Graze, 500 + i as u64)
    }

    fn snapped_back(before: Vec2, now: Vec2) -> bool {
        before.length() > 0.1 && now.dot(before) < 0.0 && now.length() > 5.0
    }

    fn seeded_start(arena: &Arena) -> Body {
        Body::fresh(Vec2::splat(arena.side / 2.0))
    }
    fn seeded_input(rng: &mut SeededRng, step: u32, previous: Steer) -> Steer {
        if step % 20 != 0 {
            return previous;
        }
        let angle = rng.below(65_536) as u16;
        let flags = MOVE | if rng.chance(0.2) { BOOST } else { 0 };
        (angle, flags)
    }
    fn hash(body: &Body, hash: &mut Fnv64) {
        hash.f32(body.at.x);
        hash.f32(body.at.y);
        hash.f32(body.mass);
        hash.write(&[u8::from(body.alive)]);
        hash.f32(body.pace);
    }
}

/// The whole game's sync test, natively here and in headless Chromium by
/// the page's tests (`page/tests/sync.rs`): a seeded world of the default
/// settings from seed 7, 4 players, 60 ticks each re-simulated 4 ahead.
pub const SYNC_TEST: (u64, (u32, u32, u32)) = (7, (4, 60, 4));

/// What [`SYNC_TEST`] folds to on every target (a change to the rules of
/// the world moves it, deliberately, on both sides together).
pub const SYNC_HASH: u64 = 0x8a12_37a2_4eb1_8aaa;

#[cfg(test)]
mod sync_tests {
    use super::{SYNC_HASH, SYNC_TEST};
    use crate::BlobSettings;

    #[test]
    fn the_whole_blobs_game_resimulates_to_its_hash() {
        let (seed, run) = SYNC_TEST;
        let report = skirmish_core::sync_test::<crate::Blobs>(&BlobSettings::default(), seed, run)
            .unwrap_or_else(|d| panic!("{d:?}"));
        assert_eq!(report.compared, 240);
        assert_eq!(report.hash, SYNC_HASH, "got {:#018x}", report.hash);
    }
}
