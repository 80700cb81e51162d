//! The guide's game (`skirmish-walkers`) in the harness: its pacer (in
//! the game's crate, `games/walkers/src/driver.rs`) and its main cell.

use std::time::Duration;

use skirmish_core::{Encoding, MainCell};
use skirmish_walkers::Walkers;

pub use skirmish_walkers::driver::Pace;

use crate::matrix::main_link;
use crate::scenario::{ClientClock, NetScript};
use crate::stepper::{ClientSpec, Stepper};

/// The main cell for walkers: 16 pacers, 60 s, 150 ms RTT, ±30 ms
/// jitter, 5 % loss each way, binary all the way, the shipped defaults.
pub fn main_cell() -> Stepper<Walkers, Pace> {
    let mut s: Stepper<Walkers, Pace> = Stepper::with_room(Walkers::main_room());
    for i in 0..Walkers::PLAYERS {
        let (pace, seed) = Walkers::main_player(i);
        s.join_spec(ClientSpec {
            net: NetScript::steady(main_link()),
            clock: ClientClock::default(),
            encoding: Encoding::Compact,
            ..ClientSpec::new(pace, main_link(), seed)
        });
    }
    s.run(Duration::from_secs(60));
    s
}
