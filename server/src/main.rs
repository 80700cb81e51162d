//! The `skirmish-server` binary: the repository's games (the list in
//! `skirmish-games`) served by the `skirmish-server` library. A game of its
//! own writes the same lines with its own catalog (`docs/GUIDE.md`).

use clap::Parser;
use mimalloc::MiMalloc;
use skirmish_games::{Entry, GameSettings, Listed, Visit};
use skirmish_server::{Catalog, ServerConfig};

/// Frames are allocated and freed per client per tick; mimalloc keeps the
/// pages instead of returning them to the kernel and faulting them back.
#[global_allocator]
static ALLOCATOR: MiMalloc = MiMalloc;

/// The server's command line, and the games' own settings.
#[derive(Debug, Parser)]
#[command(
    name = "skirmish-server",
    version,
    about = "The authoritative Skirmish game server"
)]
struct Command {
    #[command(flatten)]
    server: ServerConfig,
    #[command(flatten)]
    games: GameSettings,
}

/// Hosts each listed game at its path.
struct Host(Catalog);

impl Visit for Host {
    fn game<G: Listed>(&mut self, game: Entry<G>) {
        self.0 = std::mem::take(&mut self.0).host::<G>(game.path, game.settings);
    }
}

fn main() -> anyhow::Result<()> {
    skirmish_server::log_to_stderr();
    let command = Command::parse();
    let mut host = Host(Catalog::new());
    skirmish_games::each(&command.games, &mut host);
    skirmish_server::serve(command.server, host.0)
}
