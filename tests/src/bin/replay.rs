//! `replay`: replays a recording natively and checks it frame by frame (a
//! page's) or tick by tick (a room's, `--room`); `--with-room ROOM` also
//! checks that every frame the page received was sent to it by its room.
//! `cargo xtask replay FILE` and `cargo xtask replay-room FILE` run it in
//! release. What it does for a game is the harness's
//! (`skirmish_harness::replay`, where the exit statuses are told); this
//! binary only picks the game.
//!
//! A recording names its game: this build replays the tank game's,
//! walkers' (the guide's game) and blobs' (the .io arena); a recording of
//! any other game is refused by its name (2).

use std::process::ExitCode;

use clap::Parser;
use skirmish_blobs::Blobs;
use skirmish_core::{Game, GameId};
use skirmish_harness::replay::{recorded_game, refuse, replay, ReplayArgs};
use skirmish_tanks::Tanks;
use skirmish_walkers::Walkers;

fn main() -> ExitCode {
    let args = ReplayArgs::parse();
    match recorded_game(&args.file) {
        Ok(game) => replay_game(&game, &args),
        Err(code) => code,
    }
}

/// The games this replayer hosts, by the name a recording carries: the
/// one place it names them.
fn replay_game(game: &GameId, args: &ReplayArgs) -> ExitCode {
    match game.name.as_str() {
        Tanks::NAME => replay::<Tanks>(args),
        Walkers::NAME => replay::<Walkers>(args),
        Blobs::NAME => replay::<Blobs>(args),
        _ => refuse(args, game, &[Tanks::NAME, Walkers::NAME, Blobs::NAME]),
    }
}
