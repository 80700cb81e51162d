//! `ClientSession` end to end without a network: server messages in as
//! text, frames of time, messages out (CAPS-1, CAPS-6, CAPS-7, CAPS-8, RS-9).

use std::time::Duration;

use skirmish_core::{
    encode, ClientMessage, ConditionerStats, LinkConditions, PlayerId, SampleKind, ServerMessage,
    Tick, Vec2,
};
use skirmish_core::{ClientSession, Incoming, SessionConfig, SessionEvent};
use skirmish_tanks::{CombatEvent, PlayerState, Pose, SimConfig};
use skirmish_tanks::{CombatRules, Controls, Tanks, WireInput};

#[path = "session/events.rs"]
mod events;

const ME: PlayerId = PlayerId(1);
const OTHER: PlayerId = PlayerId(2);
const FRAME: Duration = Duration::from_millis(50);

fn state(id: PlayerId, tick: u32, x: f32, hp: u16) -> PlayerState {
    PlayerState {
        id,
        hp,
        velocity: Some(Vec2::new(200.0, 0.0)),
        ..PlayerState::at(Tick(tick), None, Pose::new(Vec2::new(x, 300.0), 0.0))
    }
}

fn snapshot(tick: u32, players: Vec<PlayerState>) -> String {
    encode(&ServerMessage::<skirmish_tanks::Tanks>::Snapshot {
        server_tick: Tick(tick),
        players,
    })
}

/// The `welcome` for player `ME`.
fn welcome() -> String {
    welcome_with(None)
}

/// The `welcome` for player `ME`, with the server's `combat` rules.
fn welcome_with(combat: Option<CombatRules>) -> String {
    encode(&ServerMessage::<skirmish_tanks::Tanks>::Welcome {
        player_id: ME,
        protocol: 1,
        server_tick: Tick(0),
        tick_ms: 50,
        room: "r".into(),
        setup: skirmish_tanks::TankSetup {
            config: SimConfig::default(),
            combat,
        },
    })
}

/// Hands `s` a text frame arriving now.
fn recv(s: &mut ClientSession<Tanks>, text: &str) {
    let at = s.now();
    s.receive(Incoming::Text(text), at);
}

/// Lets `elapsed` pass for `s`; the messages it sends.
fn frame(s: &mut ClientSession<Tanks>, elapsed: Duration) -> Vec<ClientMessage<WireInput>> {
    let now = s.now() + elapsed;
    s.advance(now)
}

/// The report of the newest reconciliation among the undrained events.
fn last_report(s: &mut ClientSession<Tanks>) -> Option<skirmish_core::ReconcileReport> {
    s.events()
        .filter_map(|e| match e {
            SessionEvent::Reconciled { report, .. } => Some(report),
            _ => None,
        })
        .last()
}

fn joined() -> ClientSession<Tanks> {
    let mut s = ClientSession::new(SessionConfig::default());
    recv(&mut s, &welcome());
    s
}

/// Feeds snapshots of ticks `from..=to` (one per 50 ms frame) where the other
/// player walks +x 10 u per tick.
fn walk(s: &mut ClientSession<Tanks>, from: u32, to: u32) {
    for t in from..=to {
        recv(
            s,
            &snapshot(
                t,
                vec![
                    state(ME, t, 100.0, 100),
                    state(OTHER, t, 10.0 * t as f32, 100),
                ],
            ),
        );
        frame(s, FRAME);
    }
}

#[test]
fn caps1_hud_and_view_read_the_owned_snapshot() {
    let mut s = joined();
    walk(&mut s, 1, 5);
    let owned = *s.authority().get(OTHER).expect("owned");
    assert_eq!(owned, state(OTHER, 5, 50.0, 100));
    recv(
        &mut s,
        &snapshot(6, vec![state(ME, 6, 100.0, 70), state(OTHER, 6, 60.0, 40)]),
    );
    assert_eq!(
        s.authority().get(ME).map(|p| p.hp),
        Some(70),
        "own HP from the owned snapshot"
    );
    let remote = s.view().remotes[0];
    assert_eq!((remote.id, remote.state.hp), (OTHER, 40));
}

#[test]
fn caps6_a_late_older_snapshot_changes_neither_roster_nor_interpolation() {
    let mut s = joined();
    walk(&mut s, 1, 10);
    let before = (s.view(), *s.authority().get(OTHER).expect("owned"));
    // Tick 7 arrives again, late, with a wild position and HP.
    recv(
        &mut s,
        &snapshot(
            7,
            vec![state(ME, 7, 100.0, 100), state(OTHER, 7, 9999.0, 1)],
        ),
    );
    assert_eq!(
        (s.view(), *s.authority().get(OTHER).expect("owned")),
        before
    );
    assert_eq!(s.authority().stats().stale, 2);
}

#[test]
fn rs9_remote_players_are_drawn_interpolated_behind_the_server() {
    let mut s = joined();
    walk(&mut s, 1, 20);
    // Tick 20 arrived at 950 ms, one tick per 50 ms: at 1025 ms the server is
    // estimated at tick 21.5, and remotes are drawn 100 ms (2 ticks) behind
    // it, between the samples of ticks 19 and 20.
    frame(&mut s, Duration::from_millis(25));
    let remote = s.view().remotes[0];
    assert_eq!(remote.kind, SampleKind::Interpolated);
    assert_eq!(remote.visual.position.x, 195.0);
}

#[test]
fn caps7_and_caps8_combat_events_update_the_hud_until_the_next_state() {
    let mut s = joined();
    walk(&mut s, 1, 5);
    let hit = CombatEvent {
        server_tick: Tick(6),
        attacker: OTHER,
        target: ME,
        damage: 20,
        hp: 80,
        killed: false,
        from: Vec2::new(50.0, 300.0),
        to: Vec2::new(80.0, 300.0),
    };
    let combat = encode(&ServerMessage::<skirmish_tanks::Tanks>::Events { events: vec![hit] });
    recv(&mut s, &combat);
    recv(&mut s, &combat);
    assert_eq!(s.authority().get(ME).map(|p| p.hp), Some(80));
    assert_eq!(s.authority().stats().events_applied, 1, "applied once");
    assert_eq!(s.view().effects.len(), 2, "drawn as it arrived");
    // The next full state refreshes HP from the server.
    recv(
        &mut s,
        &snapshot(7, vec![state(ME, 7, 100.0, 60), state(OTHER, 7, 70.0, 100)]),
    );
    assert_eq!(s.authority().get(ME).map(|p| p.hp), Some(60));
}

#[test]
fn every_input_message_carries_all_unacknowledged_inputs() {
    let mut s = joined();
    walk(&mut s, 1, 1);
    s.set_controls(Controls {
        turn: 0.0,
        throttle: 1.0,
        fire: false,
    });
    let mut last = Vec::new();
    for _ in 0..20 {
        for m in frame(&mut s, FRAME) {
            if let ClientMessage::Input { inputs, .. } = m {
                last = inputs;
            }
        }
    }
    let ticks: Vec<u32> = last.iter().map(|i| i.tick.0).collect();
    assert_eq!(ticks.len(), 16, "the newest 16 of 21 pending");
    assert!(ticks.windows(2).all(|w| w[1] == w[0] + 1));
    assert!(
        last.iter().all(|i| i.view_tick.is_some()),
        "view tick for lag compensation"
    );
}

#[test]
fn a_hidden_tab_gap_is_clamped_and_does_not_spiral() {
    let mut s = joined();
    walk(&mut s, 1, 1);
    let before = s.local().expect("joined").pending().len();
    frame(&mut s, Duration::from_secs(30));
    let after = s.local().expect("joined").pending().len();
    assert!(
        after - before <= 5,
        "at most 250 ms of steps: {}",
        after - before
    );
}

#[test]
fn the_conditioner_delays_and_drops_reproducibly() {
    let run = || {
        let mut s = ClientSession::new(SessionConfig {
            down: LinkConditions {
                latency_ms: 100.0,
                jitter_ms: 20.0,
                loss: 0.2,
                duplicate: 0.0,
            },
            seed: 42,
            ..SessionConfig::default()
        });
        recv(&mut s, &welcome());
        for t in 1..=200 {
            recv(&mut s, &snapshot(t, vec![state(ME, t, 100.0, 100)]));
            frame(&mut s, FRAME);
        }
        (s.hud().down, s.hud().stats.snapshots)
    };
    let (a, b) = (run(), run());
    assert_eq!(a, b, "same seed, same counters");
    let (down, snapshots): (ConditionerStats, u64) = a;
    assert!(down.dropped > 20 && down.dropped < 80, "{down:?}");
    assert_eq!(snapshots, down.delivered);
}

#[test]
fn the_roster_names_every_player() {
    let mut s = joined();
    recv(
        &mut s,
        r#"{"type":"roster","players":[{"id":1,"name":"me"},{"id":2,"name":"them"}]}"#,
    );
    assert_eq!(s.name_of(ME), Some("me"));
    assert_eq!(s.name_of(OTHER), Some("them"));
}

/// A session joined with the server's `combat` rules in `welcome`.
fn joined_with(rules: CombatRules) -> ClientSession<Tanks> {
    let mut s = ClientSession::new(SessionConfig::default());
    recv(&mut s, &welcome_with(Some(rules)));
    s
}

#[test]
fn predicted_shots_follow_the_combat_rules_the_server_sent() {
    let mut s = joined_with(CombatRules {
        range: 100.0,
        cooldown_ms: 500,
        ..CombatRules::default()
    });
    walk(&mut s, 1, 1);
    s.set_controls(Controls {
        turn: 0.0,
        throttle: 0.0,
        fire: true,
    });
    frame(&mut s, FRAME);
    let tracers = s.view().effects;
    assert_eq!(tracers.len(), 1);
    assert_eq!(
        tracers[0].to,
        Vec2::new(200.0, 300.0),
        "the server's 100 u range"
    );
    for _ in 0..5 {
        frame(&mut s, FRAME);
    }
    // With the default 250 ms cooldown a second shot would be drawn now,
    // beside the first (tracers live 300 ms).
    assert_eq!(
        s.view().effects.len(),
        1,
        "250 ms: the server's 500 ms cooldown"
    );

    // Rules that cannot be used are refused like an unusable config.
    let broken = joined_with(CombatRules {
        range: f32::NAN,
        ..CombatRules::default()
    });
    assert!(
        broken.hud().joined.is_none(),
        "not joined on unusable rules"
    );
}

#[test]
fn an_own_shot_is_drawn_at_once_and_stops_at_obstacles() {
    let mut s = joined();
    walk(&mut s, 1, 1);
    s.set_controls(Controls {
        turn: 0.0,
        throttle: 0.0,
        fire: true,
    });
    frame(&mut s, FRAME);
    let tracers = s.view().effects;
    assert_eq!(tracers.len(), 1, "before any server answer");
    // From (100, 300) along +x: the default arena's obstacle at x = 400
    // (y 250..450) stops it.
    assert_eq!(tracers[0].from, Vec2::new(100.0, 300.0));
    assert_eq!(tracers[0].to, Vec2::new(400.0, 300.0));
    // Held fire shoots once per 250 ms, like the server's cooldown.
    for _ in 0..4 {
        frame(&mut s, FRAME);
    }
    assert_eq!(s.view().effects.len(), 1, "200 ms: still cooling down");
    frame(&mut s, FRAME);
    assert_eq!(s.view().effects.len(), 2, "250 ms: the next shot");
}

#[test]
fn the_interpolation_delay_grows_with_arrival_jitter() {
    let mut s = joined();
    walk(&mut s, 1, 20);
    assert_eq!(s.hud().interpolation_delay, Duration::from_millis(100));
    // Snapshots now arrive unevenly: 0 or 80 ms late, alternately.
    let mut rng = 0u32;
    for t in 21..=200 {
        rng += 1;
        if rng % 2 == 0 {
            frame(&mut s, Duration::from_millis(80));
        }
        recv(
            &mut s,
            &snapshot(
                t,
                vec![
                    state(ME, t, 100.0, 100),
                    state(OTHER, t, 10.0 * t as f32, 100),
                ],
            ),
        );
        frame(&mut s, FRAME);
    }
    let delay = s.hud().interpolation_delay;
    assert!(
        delay > Duration::from_millis(100) && delay <= Duration::from_millis(400),
        "{delay:?}"
    );
}

/// Each HUD toggle turns its part of the netcode off, visibly.
#[test]
fn toggles_turn_each_part_off() {
    use skirmish_core::Toggles;
    let go = Controls {
        turn: 0.0,
        throttle: 1.0,
        fire: false,
    };
    // Prediction off: the own player is drawn where the server said.
    let mut s = joined();
    walk(&mut s, 1, 1);
    s.set_toggles(Toggles {
        prediction: false,
        ..Toggles::default()
    });
    s.set_controls(go);
    for _ in 0..4 {
        frame(&mut s, FRAME);
    }
    let own = s.view().own.expect("placed");
    assert_eq!(
        own.visible.position,
        Vec2::new(100.0, 300.0),
        "not predicted"
    );
    assert!(
        own.predicted.position.x > 100.0,
        "prediction still runs underneath"
    );

    // Reconciliation off: an acknowledged state is taken as it is, the
    // pending inputs are not replayed on top of it.
    let mut s = joined();
    walk(&mut s, 1, 1);
    s.set_toggles(Toggles {
        reconciliation: false,
        ..Toggles::default()
    });
    s.set_controls(go);
    for _ in 0..4 {
        frame(&mut s, FRAME);
    }
    let mut acked = state(ME, 30, 110.0, 100);
    acked.ack_move_tick = Some(skirmish_core::Tick(1));
    recv(&mut s, &snapshot(30, vec![acked]));
    let report = last_report(&mut s).expect("a report");
    assert_eq!(report.replayed, 0);
    assert_eq!(s.local().expect("joined").predicted().position.x, 110.0);

    // Smoothing off: any correction snaps.
    let mut s = joined();
    walk(&mut s, 1, 1);
    s.set_toggles(Toggles {
        smoothing: false,
        ..Toggles::default()
    });
    recv(&mut s, &snapshot(2, vec![state(ME, 2, 105.0, 100)]));
    assert_eq!(s.hud().snaps, 1);

    // Interpolation off: remotes are drawn at their newest state.
    let mut s = joined();
    walk(&mut s, 1, 20);
    s.set_toggles(Toggles {
        interpolation: false,
        ..Toggles::default()
    });
    let remote = s.view().remotes[0];
    assert_eq!(remote.visual.position.x, 200.0);
}
