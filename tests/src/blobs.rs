//! Blobs, the .io game (`skirmish-blobs`), in the harness: its grazer (in
//! the game's crate, `games/blobs/src/driver.rs`) and its main cell.

use std::time::Duration;

use skirmish_blobs::Blobs;
use skirmish_core::{Encoding, MainCell};

pub use skirmish_blobs::driver::Graze;

use crate::matrix::main_link;
use crate::scenario::{ClientClock, NetScript};
use crate::stepper::{ClientSpec, Stepper};

/// The main cell for blobs: 16 grazers, 60 s, 150 ms RTT, ±30 ms jitter,
/// 5 % loss each way, binary all the way, the shipped defaults; 300
/// pellets on a square of 1,500 units, each page seeing 500 units and
/// more as it grows.
pub fn main_cell() -> Stepper<Blobs, Graze> {
    let mut s: Stepper<Blobs, Graze> = Stepper::with_room(Blobs::main_room());
    for i in 0..Blobs::PLAYERS {
        let (graze, seed) = Blobs::main_player(i);
        s.join_spec(ClientSpec {
            net: NetScript::steady(main_link()),
            clock: ClientClock::default(),
            encoding: Encoding::Compact,
            ..ClientSpec::new(graze, main_link(), seed)
        });
    }
    s.run(Duration::from_secs(60));
    s
}
