//! `replay`: replays a recording natively and checks it frame by frame (a
//! page's) or tick by tick (a room's, `--room`); `--with-room ROOM` also
//! checks that every frame the page received was sent to it by its room.
//! `cargo xtask replay FILE` and `cargo xtask replay-room FILE` run it in
//! release. What it does for a game is the harness's
//! (`skirmish_harness::replay`, where the exit statuses are told); this
//! binary only picks the game.
//!
//! A recording names its game: this build replays the games listed in
//! `skirmish-games`; a recording of any other game is refused by its name
//! (2).

use std::process::ExitCode;

use clap::Parser;
use skirmish_core::GameId;
use skirmish_games::{Entry, GameSettings, Listed, Visit};
use skirmish_harness::replay::{recorded_game, refuse, replay, ReplayArgs};

fn main() -> ExitCode {
    let args = ReplayArgs::parse();
    match recorded_game(&args.file) {
        Ok(game) => replay_game(&game, &args),
        Err(code) => code,
    }
}

/// Replays with the listed game whose name the recording carries.
fn replay_game(game: &GameId, args: &ReplayArgs) -> ExitCode {
    struct Pick<'a> {
        recorded: &'a str,
        args: &'a ReplayArgs,
        hosted: Vec<&'static str>,
        done: Option<ExitCode>,
    }
    impl Visit for Pick<'_> {
        fn game<G: Listed>(&mut self, _: Entry<G>) {
            self.hosted.push(G::NAME);
            if self.done.is_none() && G::NAME == self.recorded {
                self.done = Some(replay::<G>(self.args));
            }
        }
    }
    let mut pick = Pick {
        recorded: &game.name,
        args,
        hosted: Vec::new(),
        done: None,
    };
    skirmish_games::each(&GameSettings::default(), &mut pick);
    pick.done
        .unwrap_or_else(|| refuse(args, game, &pick.hosted))
}
