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

use skirmish_blobs::Blobs;
use skirmish_harness::quality::{write_game_page, Provenance};
use skirmish_harness::MainCell;
use skirmish_walkers::Walkers;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let game = match args.iter().position(|a| a == "--game") {
        Some(i) => args.get(i + 1).map_or("", String::as_str).to_string(),
        None => "tanks".to_string(),
    };
    let dir = args
        .iter()
        .find(|a| !a.starts_with("--") && **a != game)
        .map_or_else(|| PathBuf::from("docs"), PathBuf::from);
    write_page(&game, &dir)
}

/// The games this binary writes pages for, by name: the one place it
/// names them.
fn write_page(game: &str, dir: &Path) -> anyhow::Result<()> {
    match game {
        "tanks" => skirmish_tests::tank_page::write(dir),
        "walkers" => game_page::<Walkers>(dir),
        "blobs" => game_page::<Blobs>(dir),
        other => {
            anyhow::bail!(
                "quality: unknown game `{other}`; this build's games: tanks, walkers, blobs"
            )
        }
    }
}

/// Game `G`'s page: its main cell in the stepper, in its own words.
fn game_page<G: MainCell>(dir: &Path) -> anyhow::Result<()> {
    let name = G::NAME;
    eprintln!("quality: {name}, main cell");
    let command = format!(
        "`cargo xtask quality --game {name}` (`cargo run --release -p skirmish-tests --bin quality \
-- --game {name}`)"
    );
    let asserted =
        format!("`tests/tests/{name}.rs` asserts the main cell's budget on the same run");
    let path = write_game_page::<G>(
        dir,
        &Provenance {
            command: &command,
            asserted: &asserted,
        },
    )?;
    eprintln!("quality: wrote {}", path.display());
    Ok(())
}
