//! The guide's game (`skirmish-walkers`) in the harness: how the stepper
//! sees it, a driver that paces back and forth, and its main cell.

use std::time::Duration;

use skirmish_core::{ClientSession, Encoding, RoomConfig, Vec2};
use skirmish_walkers::Walkers;

use crate::matrix::main_link;
use crate::scenario::{ClientClock, NetScript};
use crate::stepper::{ClientSpec, Driver, SteppedGame, Stepper};

/// A walker is drawn where it is, and may turn back at once: it snapped
/// back only if drawn going back faster than it can walk (200 units a
/// second along each axis, so 2.83 diagonally in a 10 ms frame, drawn up
/// to 10 % faster while the remote timeline catches up: 3.11).
impl SteppedGame for Walkers {
    fn place(at: &Vec2) -> Vec2 {
        *at
    }

    fn snapped_back(before: Vec2, now: Vec2) -> bool {
        before.length() > 0.1 && now.dot(before) < 0.0 && now.length() > 3.2
    }
}

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

/// The main cell for walkers: 16 pacers, 60 s, 150 ms RTT, ±30 ms
/// jitter, 5 % loss each way, binary all the way, the shipped defaults.
pub fn main_cell() -> Stepper<Walkers, Pace> {
    let mut s: Stepper<Walkers, Pace> = Stepper::with_room(RoomConfig {
        name: "walkers".into(),
        capacity: usize::MAX,
        seed: 11,
        ..RoomConfig::default()
    });
    for i in 0..16u64 {
        let from = 100.0 + 50.0 * i as f32;
        s.join_spec(ClientSpec {
            net: NetScript::steady(main_link()),
            clock: ClientClock::default(),
            encoding: Encoding::Compact,
            ..ClientSpec::new(Pace::new(from, from + 200.0), main_link(), 300 + i)
        });
    }
    s.run(Duration::from_secs(60));
    s
}
