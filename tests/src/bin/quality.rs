//! `quality`: writes a game's quality page. For the tank game (the
//! default), its clock's scenario matrix in the deterministic stepper:
//! `docs/QUALITY.md` (one row per scenario) and its SVG plots
//! (`docs/quality/*.svg`; `skirmish_tests::tank_page`). For another game
//! (`--game NAME`), its main cell in the stepper, in the game's own words:
//! `docs/quality/NAME.md` (`skirmish_harness::quality::write_game_page`).
//!
//! `cargo xtask bench` and `cargo xtask quality [--game NAME]` run it;
//! `cargo run --release -p skirmish-tests --bin quality -- [--game NAME]
//! DIR` writes into another folder. The runs are seeded, so the numbers
//! are the same on every machine; the command and the date go into the
//! page.

use std::path::{Path, PathBuf};

use skirmish_core::Game as _;
use skirmish_games::{Entry, GameSettings, Listed, Visit};
use skirmish_harness::quality::{write_game_page, Provenance};
use skirmish_harness::Harness;
use skirmish_tanks::Tanks;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let game = match args.iter().position(|a| a == "--game") {
        Some(i) => args.get(i + 1).map_or("", String::as_str).to_string(),
        None => Tanks::NAME.to_string(),
    };
    let dir = args
        .iter()
        .find(|a| !a.starts_with("--") && **a != game)
        .map_or_else(|| PathBuf::from("docs"), PathBuf::from);
    write_page(&game, &dir)
}

/// The page of the listed game `game`: the tank game's scenario matrix,
/// any other game's main cell.
fn write_page(game: &str, dir: &Path) -> anyhow::Result<()> {
    struct Pick<'a> {
        name: &'a str,
        dir: &'a Path,
        listed: Vec<&'static str>,
        done: Option<anyhow::Result<()>>,
    }
    impl Visit for Pick<'_> {
        fn game<G: Listed>(&mut self, game: Entry<G>) {
            self.listed.push(game.name);
            if self.done.is_none() && game.name == self.name {
                self.done = Some(game_page::<G>(self.dir));
            }
        }
    }
    if game == Tanks::NAME {
        return skirmish_tests::tank_page::write(dir);
    }
    let mut pick = Pick {
        name: game,
        dir,
        listed: Vec::new(),
        done: None,
    };
    skirmish_games::each(&GameSettings::default(), &mut pick);
    pick.done.unwrap_or_else(|| {
        anyhow::bail!(
            "quality: unknown game `{game}`; the games are: {}",
            pick.listed.join(", ")
        )
    })
}

/// Game `G`'s page: its main cell in the stepper, in its own words.
fn game_page<G: Harness>(dir: &Path) -> anyhow::Result<()> {
    let name = G::NAME;
    eprintln!("quality: {name}, main cell");
    let command = format!(
        "`cargo xtask quality --game {name}` (`cargo run --release -p skirmish-tests --bin quality \
-- --game {name}`)"
    );
    let asserted = "the game's tests assert the main cell's budget on the same run";
    let path = write_game_page::<G>(
        dir,
        &Provenance {
            command: &command,
            asserted,
        },
    )?;
    eprintln!("quality: wrote {}", path.display());
    Ok(())
}
