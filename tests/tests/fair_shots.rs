//! Fair shots (issue 26) over the stepper, the real `Room` and sessions:
//! the server measures each protocol-2 shooter's round trip from its
//! snapshot acknowledgements, an honest shooter's views stay inside the
//! rewind bound that gives at every latency, and every shot the shooter's
//! page drew fires on the server, those of late inputs included.

use std::time::Duration;

use skirmish_core::{Encoding, LinkConditions, PlayerId, ServerPlayer};
use skirmish_tanks::SimConfig;
use skirmish_tests::scenario::{link, NetScript};
use skirmish_tests::script::{Script, Shooter};
use skirmish_tests::stepper::{ClientSpec, Stepper};

/// A compact protocol-2 shooter (player 1) on `net` and a circling target
/// on `calm`, for 20 s.
fn duel(net: NetScript, calm: LinkConditions) -> Stepper {
    let sim = SimConfig::default();
    let mut stepper = Stepper::new(sim.clone(), 26);
    let mut shooter = ClientSpec::new(
        Script::Shooter(Shooter {
            radius: sim.player_radius,
        }),
        calm,
        1,
    );
    shooter.encoding = Encoding::Compact;
    shooter.net = net;
    let mut target = ClientSpec::new(Script::Circle(0.4), calm, 2);
    target.encoding = Encoding::Compact;
    assert_eq!(stepper.join_spec(shooter), PlayerId(1));
    stepper.join_spec(target);
    stepper.run(Duration::from_secs(20));
    stepper
}

/// Shots the shooter's page drew for ticks the server has simulated (a
/// shot drawn in the run's last round trip is still on its way), and shots
/// the server fired (every shot past its cooldown records its rewind; the
/// target never fires).
fn drawn_and_fired(stepper: &Stepper) -> (u64, u64) {
    let simulated = stepper.world().tick();
    let drawn = stepper.clients[0]
        .trace
        .shot_ticks
        .iter()
        .filter(|t| **t <= simulated)
        .count();
    (drawn as u64, stepper.world().stats().rewind.count())
}

#[test]
fn honest_shooters_are_never_bound_by_their_round_trip() {
    for (rtt, jitter) in [(20.0, 2.0), (60.0, 40.0), (100.0, 10.0), (250.0, 20.0)] {
        let both = link(rtt, jitter, 0.0);
        let stepper = duel(NetScript::steady(both), both);
        let world = stepper.world();
        let measured = world
            .player(PlayerId(1))
            .and_then(ServerPlayer::round_trip)
            .expect("a compact protocol-2 client acknowledges snapshots");
        let stats = world.stats();
        println!("rtt {rtt} ms: measured {measured:?}, {stats:?}");
        // The way down and up, less their jitter at best, plus at most the
        // client's wait for its next input message.
        let ms = measured.as_secs_f64() * 1000.0;
        let low = f64::from(rtt - 2.0 * jitter).max(0.0);
        assert!(
            ms >= low && ms <= f64::from(rtt) + 50.0,
            "rtt {rtt}: {ms} ms"
        );
        assert!(stepper.clients[0].trace.hits > 0, "rtt {rtt}: {stats:?}");
        assert_eq!(stats.rewind_clamped_rtt, 0, "rtt {rtt}: {stats:?}");
        let (drawn, fired) = drawn_and_fired(&stepper);
        assert!(drawn > 20 && fired == drawn, "rtt {rtt}: {drawn} {fired}");
    }
}

#[test]
fn every_shot_the_page_drew_fires_on_the_server_late_ones_too() {
    // The way up slows by 150 ms twice, for 3 s: inputs arrive late until
    // the client's pacing has moved them earlier; a little loss both ways.
    let calm = link(40.0, 2.0, 0.02);
    let slow = LinkConditions {
        latency_ms: calm.latency_ms + 150.0,
        ..calm
    };
    let net = NetScript::steady(calm)
        .then(Duration::from_secs(5), slow, calm)
        .then(Duration::from_secs(8), calm, calm)
        .then(Duration::from_secs(11), slow, calm)
        .then(Duration::from_secs(14), calm, calm);
    let stepper = duel(net, calm);
    let stats = stepper.world().stats();
    println!("{stats:?}");
    assert!(stats.late_inputs > 10, "inputs were late: {stats:?}");
    assert!(stats.late_actions_honoured > 0, "{stats:?}");
    assert_eq!(stats.rewind_clamped_rtt, 0, "{stats:?}");
    let (drawn, fired) = drawn_and_fired(&stepper);
    assert_eq!(fired, drawn, "{stats:?}");
}

#[test]
fn a_json_shooter_is_measured_too() {
    let sim = SimConfig::default();
    let mut stepper = Stepper::new(sim.clone(), 27);
    let both = link(100.0, 10.0, 0.0);
    let shooter = ClientSpec::new(
        Script::Shooter(Shooter {
            radius: sim.player_radius,
        }),
        both,
        1,
    );
    assert_eq!(shooter.encoding, Encoding::Json);
    assert_eq!(stepper.join_spec(shooter), PlayerId(1));
    stepper.join_spec(ClientSpec::new(Script::Circle(0.4), both, 2));
    stepper.run(Duration::from_secs(5));
    let measured = stepper
        .world()
        .player(PlayerId(1))
        .and_then(ServerPlayer::round_trip)
        .expect("a JSON client acknowledges the newest snapshot");
    let ms = measured.as_secs_f64() * 1000.0;
    assert!((80.0..=200.0).contains(&ms), "{ms} ms at 100 ms RTT");
}
