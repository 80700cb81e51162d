//! The games of this repository, listed once. The server's `main`, the
//! bots, the quality runs and the replayer visit them through [`each`];
//! `cargo xtask` reads the lines of the list in this file, and
//! `cargo xtask new-game NAME` adds one. A tidy test fails if a second
//! list appears.
//!
//! Each game is listed by its name (its folder under `games/`, and
//! `--game NAME` of the tools), the path its pages are served at (`""`:
//! `/` and `/ws`; else `/{path}/` and `/{path}/ws`) and its settings.

mod settings;

use std::fmt::Debug;

use skirmish_core::{ClientGame, ClientState, Harness, ServerGame};

pub use settings::GameSettings;

/// What every tool asks of a listed game: the server's side, the page's
/// side and the harness's (its determinism check, its stepper and bots'
/// brain, its main cell and quality words).
/// Its page's state, its bots' brains and their sessions move between
/// threads (the bots run on a multi-threaded runtime).
pub trait Listed:
    ServerGame
    + ClientGame<Controls: Send, Client: ClientState<Note: Send, Effects: Send> + Send>
    + Harness<Driver: Send + 'static>
    + Send
    + Sync
    + Debug
{
}

impl<G> Listed for G where
    G: ServerGame
        + ClientGame<Controls: Send, Client: ClientState<Note: Send, Effects: Send> + Send>
        + Harness<Driver: Send + 'static>
        + Send
        + Sync
        + Debug
{
}

/// One listed game.
#[derive(Clone, Debug)]
pub struct Entry<G: Listed> {
    /// Its name: its folder under `games/` and the tools' `--game NAME`.
    pub name: &'static str,
    /// Where its pages are served (`""`: at the root).
    pub path: &'static str,
    /// How its rooms are set up.
    pub settings: G::Settings,
}

/// What a tool does with each listed game.
pub trait Visit {
    /// Called once for each game, in the order of the list.
    fn game<G: Listed>(&mut self, game: Entry<G>);
}

/// Writes [`each`] from the list.
macro_rules! games {
    ($($name:ident at $path:literal: $game:ty = $settings:expr;)+) => {
        /// Visits every game of the repository, in the order of the list,
        /// with the settings `settings` gives it.
        pub fn each(settings: &GameSettings, visit: &mut impl Visit) {
            $(
                let of: fn(&GameSettings) -> <$game as ServerGame>::Settings = $settings;
                visit.game::<$game>(Entry {
                    name: stringify!($name),
                    path: $path,
                    settings: of(settings),
                });
            )+
        }
    };
}

// The list. One line per game: `name at "path": Type = its settings;`.
// `cargo xtask` reads these lines; `cargo xtask new-game` adds one.
games! {
    tanks at "": skirmish_tanks::Tanks = GameSettings::tanks;
    walkers at "walkers": skirmish_walkers::Walkers = |_| ();
    blobs at "blobs": skirmish_blobs::Blobs = GameSettings::blobs;
}

/// The names of the games, in the order of the list.
pub fn names() -> Vec<&'static str> {
    struct Names(Vec<&'static str>);
    impl Visit for Names {
        fn game<G: Listed>(&mut self, game: Entry<G>) {
            self.0.push(game.name);
        }
    }
    let mut names = Names(Vec::new());
    each(&GameSettings::default(), &mut names);
    names.0
}
