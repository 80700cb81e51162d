//! Drift's replayer: a page's recording (`skirmish.saveRecording()`) or a
//! room's (`drift-server --record DIR`, with `--room`) replayed natively
//! by the harness, frame by frame or tick by tick; a recording of another
//! game is refused by its name.

use clap::Parser as _;
use skirmish_drift::Drift;
use skirmish_harness::replay::{replay, ReplayArgs};

fn main() -> std::process::ExitCode {
    replay::<Drift>(&ReplayArgs::parse())
}
