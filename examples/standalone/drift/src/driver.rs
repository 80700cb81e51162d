//! Drift in the harness (`skirmish-harness`): its seeded run, how the
//! stepper sees a point, a brain that steers back and forth, and the main
//! cell of the game's quality page.

use skirmish_core::{ClientSession, Driver, Harness, QualityWords, RoomConfig, SeededRng, Vec2};

use crate::{Drift, Steer, FIELD};

/// Steers along x between two marks, turning at each.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// Where it turns back, in units.
    pub marks: (f32, f32),
    /// Which way it goes now.
    pub right: bool,
}

impl Driver<Drift> for Sweep {
    fn controls(&mut self, session: &ClientSession<Drift>, (): &()) -> Steer {
        if let Some(me) = session.view().own {
            if me.predicted.x >= self.marks.1 {
                self.right = false;
            } else if me.predicted.x <= self.marks.0 {
                self.right = true;
            }
        }
        (if self.right { 1 } else { -1 }, 0)
    }
}

/// The harness's side: a seeded walk from the middle for the determinism
/// check, and the main cell. A point is drawn where it is and may turn
/// back at once: it snapped back only if drawn going back faster than it
/// can move (200 units a second along each axis: 2.83 diagonally in a
/// 10 ms frame, drawn up to 10 % faster while the remote timeline catches
/// up).
impl Harness for Drift {
    type Driver = Sweep;

    const WORDS: QualityWords = QualityWords {
        title: "drift",
        cell: "`src/driver.rs` of skirmish-drift: 16 sweepers steering back and forth",
        remark: "",
    };

    fn main_room() -> RoomConfig<Drift> {
        RoomConfig {
            name: "drift".into(),
            capacity: usize::MAX,
            seed: 11,
            ..RoomConfig::default()
        }
    }

    fn main_player(i: usize) -> (Sweep, u64) {
        let from = 100.0 + 50.0 * (i % 16) as f32;
        let sweep = Sweep {
            marks: (from, from + 200.0),
            right: true,
        };
        (sweep, 300 + i as u64)
    }

    fn seeded_start((): &()) -> Vec2 {
        Vec2::splat(FIELD / 2.0)
    }

    fn seeded_input(rng: &mut SeededRng, _: u32, _: Steer) -> Steer {
        (rng.below(3) as i8 - 1, rng.below(3) as i8 - 1)
    }

    fn snapped_back(before: Vec2, now: Vec2) -> bool {
        before.length() > 0.1 && now.dot(before) < 0.0 && now.length() > 3.2
    }
}
