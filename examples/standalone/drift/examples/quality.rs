//! Writes Drift's quality page, `quality/drift.md` beside this
//! crate: its main cell in the deterministic stepper, with the game's own
//! words (`cargo run --example quality`).

use std::path::Path;

use skirmish_harness::quality::{write_game_page, Provenance};

use skirmish_drift::Drift;

fn main() -> anyhow::Result<()> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let provenance = Provenance {
        command: "`cargo run --example quality -p skirmish-drift`",
        asserted: "`tests/harness.rs` asserts its budget on the same run",
    };
    let page = write_game_page::<Drift>(dir, &provenance)?;
    println!("wrote {}", page.display());
    Ok(())
}
