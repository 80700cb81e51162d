//! The `skirmish-server` binary.

fn main() {
    let config = skirmish_server::SimConfig::default();
    println!(
        "skirmish-server: the authoritative server is not written yet (cadence {} ms)",
        config.tick_ms
    );
}
