//! The tank game in the harness (`skirmish-harness`), under the paths the
//! tests have always used: the harness's generic stepper and bots with the
//! tank game and its scripted brains ([`Script`]) as their defaults, and
//! its recordings set beside their room's. Each module re-exports the
//! harness's module of the same name and adds only that.

use skirmish_tanks::script::Script;
use skirmish_tanks::Tanks;

/// The deterministic stepper (`skirmish_harness::stepper`), of the tank
/// game and its scripted brains unless told.
pub mod stepper {
    use super::{Script, Tanks};

    pub use skirmish_harness::stepper::*;

    /// The in-memory match, of the tank game unless told:
    /// `Stepper::new(sim, seed)` is an empty match on `sim` with the rules
    /// of combat as shipped.
    pub type Stepper<G = Tanks, D = Script> = skirmish_harness::stepper::Stepper<G, D>;

    /// One client in the stepper, a tank driven by a [`Script`] unless
    /// told.
    pub type SimClient<G = Tanks, D = Script> = skirmish_harness::stepper::SimClient<G, D>;

    /// How one client joins a stepper match, driven by a [`Script`]
    /// unless told.
    pub type ClientSpec<D = Script> = skirmish_harness::stepper::ClientSpec<D>;
}

/// Headless bots (`skirmish_harness::bot`): the options carry a tank's
/// [`Script`] unless told; [`bot::run_bot`] plays the tank game with it,
/// [`bot::run_bot_of`] any game with another brain.
pub mod bot {
    use std::net::SocketAddr;

    use anyhow::Result;
    use skirmish_core::{ClientGame, Driver};

    use super::{Script, Tanks};

    pub use skirmish_harness::bot::*;

    /// How one bot plays, a tank driven by a [`Script`] unless told.
    pub type BotOptions<D = Script> = skirmish_harness::bot::BotOptions<D>;

    /// Plays one tank bot, driven by its options' script, to the end of
    /// its duration.
    ///
    /// # Errors
    /// The connection fails or the server closes it.
    pub async fn run_bot(addr: SocketAddr, options: BotOptions) -> Result<BotReport> {
        skirmish_harness::bot::run_bot::<Tanks, Script>(addr, options).await
    }

    /// Plays one bot of game `G`, driven by `driver` (the options' tank
    /// script is not used), to the end of its duration.
    ///
    /// # Errors
    /// The connection fails or the server closes it.
    pub async fn run_bot_of<G: ClientGame, D: Driver<G>>(
        addr: SocketAddr,
        options: BotOptions,
        driver: &mut D,
    ) -> Result<BotReport> {
        skirmish_harness::bot::run_bot::<G, &mut D>(addr, options.driven_by(driver)).await
    }
}

/// Recordings on disk (`skirmish_harness::recordings`); a tank page's
/// recording set beside its room's.
pub mod recordings {
    use anyhow::Result;

    use super::Tanks;

    pub use skirmish_harness::recordings::*;

    /// Checks that every frame a tank page's recording received was sent
    /// to it by the room in the server's recording (see
    /// `skirmish_harness::recordings::side_by_side`).
    ///
    /// # Errors
    /// The recordings do not read, the room's does not replay, or no
    /// connection of the page joined that room.
    pub fn side_by_side(client: &[u8], room: &[u8]) -> Result<SideBySide> {
        skirmish_harness::recordings::side_by_side::<Tanks>(client, room)
    }
}
