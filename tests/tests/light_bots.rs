//! Light bots of any game over real sockets (`skirmish_harness::light`),
//! as `cargo xtask scale` runs them: blobs' bots join one room over
//! WebSocket and over WebTransport, each from its own loopback address,
//! send an input a tick and acknowledge what they get, and get the
//! room's snapshots at its rate.

use std::time::Duration;

use skirmish_harness::bot::BotTransport;
use skirmish_harness::light::{run, LightOptions, LightReport};
use skirmish_tests::{test_config, SeparateServer};

/// Eight blobs bots over `transport` for two seconds, after one.
fn bots_over(transport: BotTransport) -> LightReport {
    let server = SeparateServer::start(test_config()).expect("the server starts");
    let report = run::<skirmish_blobs::Blobs>(&LightOptions {
        addr: server.addr,
        folder: "blobs".into(),
        bots: 8,
        rooms: 1,
        threads: 1,
        warmup: Duration::from_secs(1),
        duration: Duration::from_secs(2),
        tick: Duration::from_millis(50),
        seed: 7,
        transport,
    })
    .expect("the bots run");
    server.shutdown().expect("the server stops");
    report
}

fn check(report: &LightReport, over: &str) {
    println!("{over}: {}", report.summary_line());
    assert_eq!(report.failed, 0, "{over}: {:?}", report.errors);
    assert_eq!(report.bots, 8, "{over}");
    // The room sends 20 a second; a loaded machine may lose a few.
    assert!(report.snapshots_per_sec >= 10.0, "{over}: {report:?}");
    assert!(report.inputs_per_sec >= 10.0, "{over}: {report:?}");
    assert!(report.bytes_per_snapshot > 0.0, "{over}: {report:?}");
}

#[test]
fn blobs_light_bots_play_over_websocket() {
    check(&bots_over(BotTransport::Websocket), "WebSocket");
}

#[test]
fn blobs_light_bots_play_over_webtransport() {
    check(&bots_over(BotTransport::Webtransport), "WebTransport");
}
