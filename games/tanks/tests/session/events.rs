//! The session as a state machine: its phases, the events it tells its
//! shell, the fire latch, arrival times and the view tick kept with each
//! pending input.

use std::time::Duration;

use skirmish_core::{
    encode, ClientMessage, ClientSession, ErrorCode, Incoming, Phase, ServerMessage, SessionConfig,
    SessionEvent, Tick, Vec2,
};
use skirmish_tanks::{CombatEvent, Controls, PlayerState, TankNote, Tanks, WireInput};

use super::{frame, joined, recv, snapshot, state, walk, welcome, FRAME, ME, OTHER};

fn drain(s: &mut ClientSession<Tanks>) -> Vec<SessionEvent<TankNote>> {
    s.events().collect()
}

const HOLD_FIRE: Controls = Controls {
    turn: 0.0,
    throttle: 0.0,
    fire: true,
};

#[test]
fn phases_follow_welcome_placement_and_disconnection() {
    let mut s = ClientSession::new(SessionConfig::default());
    assert_eq!(s.phase(), Phase::Connecting);
    assert!(
        frame(&mut s, FRAME).is_empty(),
        "nothing to send before welcome"
    );

    recv(&mut s, &welcome());
    assert_eq!(s.phase(), Phase::Joined);
    assert_eq!(
        drain(&mut s),
        [SessionEvent::Joined {
            id: ME,
            room: "r".into()
        }]
    );

    recv(&mut s, &snapshot(1, vec![state(ME, 1, 100.0, 100)]));
    assert_eq!(s.phase(), Phase::Playing);
    let events = drain(&mut s);
    assert!(matches!(
        events[..],
        [
            SessionEvent::Snapshot {
                server_tick: Tick(1)
            },
            SessionEvent::Reconciled { placed: true, .. }
        ]
    ));

    frame(&mut s, FRAME);
    assert!(drain(&mut s)
        .iter()
        .any(|e| matches!(e, SessionEvent::StepPredicted { tick: Tick(1), .. })));

    s.disconnected("closed (1006)");
    assert_eq!(s.phase(), Phase::Connecting);
    assert_eq!(
        drain(&mut s),
        [SessionEvent::Disconnected {
            reason: "closed (1006)".into()
        }]
    );
    assert!(s.view().own.is_none() && s.hud().joined.is_none());
    assert!(s.local().is_none());
    assert!(
        frame(&mut s, FRAME).is_empty(),
        "nothing of the old connection is sent on the next"
    );
    // A new connection joins again.
    recv(&mut s, &welcome());
    recv(&mut s, &snapshot(1, vec![state(ME, 1, 100.0, 100)]));
    assert_eq!(s.phase(), Phase::Playing);
}

#[test]
fn a_fire_tap_shorter_than_a_step_fires_once() {
    let mut s = joined();
    walk(&mut s, 1, 1);
    drain(&mut s);
    // Pressed and released between two fixed steps.
    s.set_controls(HOLD_FIRE);
    s.set_controls(Controls::default());
    let sent = frame(&mut s, FRAME);
    let fired: Vec<bool> = drain(&mut s)
        .iter()
        .filter_map(|e| match e {
            SessionEvent::StepPredicted { acted, .. } => Some(*acted),
            _ => None,
        })
        .collect();
    assert_eq!(fired, [true], "the tap reached the step");
    let last_input = sent
        .iter()
        .find_map(|m| match m {
            ClientMessage::Input { inputs, .. } => inputs.last().copied(),
            _ => None,
        })
        .expect("an input");
    assert!(last_input.fire, "and the server is told");
    // Consumed: the next step does not fire again.
    frame(&mut s, FRAME);
    assert!(drain(&mut s)
        .iter()
        .all(|e| !matches!(e, SessionEvent::StepPredicted { acted: true, .. })));
}

#[test]
fn the_round_trip_is_measured_when_the_pong_arrives() {
    let mut s = joined();
    walk(&mut s, 1, 1);
    // The first frame after welcome sent ping 1, at 50 ms.
    let sent_at = FRAME;
    // The pong arrives 37 ms later, between two rendered frames.
    s.receive(
        Incoming::Text(&encode(&ServerMessage::<skirmish_tanks::Tanks>::Pong {
            id: 1,
            server_tick: Tick(1),
        })),
        sent_at + Duration::from_millis(37),
    );
    assert!(drain(&mut s).contains(&SessionEvent::Pong {
        rtt: Duration::from_millis(37)
    }));
    assert_eq!(s.hud().rtt, Some(Duration::from_millis(37)));
}

#[test]
fn hits_and_errors_are_told_as_events() {
    let mut s = joined();
    walk(&mut s, 1, 2);
    drain(&mut s);
    let hit = |attacker, target| CombatEvent {
        server_tick: Tick(3),
        attacker,
        target,
        damage: 20,
        hp: 80,
        killed: false,
        from: Vec2::ZERO,
        to: Vec2::X,
    };
    let mine = hit(ME, OTHER);
    let theirs = hit(OTHER, ME);
    recv(
        &mut s,
        &encode(&ServerMessage::<skirmish_tanks::Tanks>::Events {
            events: vec![mine, theirs],
        }),
    );
    recv(
        &mut s,
        r#"{"type":"error","code":"rate_limited","message":"slow down"}"#,
    );
    recv(&mut s, "not json");
    let events = drain(&mut s);
    assert_eq!(events[0], SessionEvent::Note(TankNote::HitConfirmed(mine)));
    assert_eq!(events[1], SessionEvent::Note(TankNote::Hurt(theirs)));
    assert_eq!(
        events[2],
        SessionEvent::ServerError {
            code: ErrorCode::RateLimited,
            message: "slow down".into()
        }
    );
    assert!(matches!(&events[3], SessionEvent::BadFrame(e) if e.code == ErrorCode::BadMessage));

    // A binary frame before welcome is refused, not guessed at.
    let mut fresh = ClientSession::new(SessionConfig::default());
    fresh.receive(Incoming::Binary(&[1, 0, 0, 0, 0]), Duration::ZERO);
    assert!(matches!(drain(&mut fresh)[..], [SessionEvent::BadFrame(_)]));
    assert_eq!(fresh.hud().stats.decode_errors, 1);
}

#[test]
fn each_input_keeps_the_view_it_was_made_in_until_acknowledged() {
    let mut s = joined();
    walk(&mut s, 1, 10);
    let inputs = |sent: Vec<ClientMessage<WireInput>>| {
        sent.into_iter()
            .find_map(|m| match m {
                ClientMessage::Input { inputs, .. } => Some(inputs),
                _ => None,
            })
            .expect("an input message")
    };
    let first = inputs(frame(&mut s, FRAME));
    let second = inputs(frame(&mut s, FRAME));
    // The resent inputs carry the very views they were made with.
    for old in &first {
        let again = second.iter().find(|i| i.tick == old.tick).expect("resent");
        assert_eq!(again.view_tick, old.view_tick);
    }
    let newest = second.last().expect("one").view_tick.expect("a view");
    let older = first.last().expect("one").view_tick.expect("a view");
    assert!(newest > older, "a later input, a later view");

    // Acknowledged inputs are pruned with their views.
    let acked_through = second[second.len() - 2].tick;
    let mut own = state(ME, 12, 100.0, 100);
    own.ack_move_tick = Some(acked_through);
    recv(&mut s, &snapshot(12, vec![own]));
    let third = inputs(frame(&mut s, FRAME));
    assert!(third.iter().all(|i| i.tick > acked_through));
    assert_eq!(third[0].view_tick, second[second.len() - 1].view_tick);
}

#[test]
fn events_a_shell_never_drains_are_bounded_and_counted() {
    let mut s = joined();
    // A snapshot, a reconciliation and a step each tick.
    walk(&mut s, 1, 600);
    assert!(s.hud().stats.events_dropped > 0);
    assert_eq!(s.events().count(), 1024);
}

/// A life that ends or begins is the server's word, not a prediction gone
/// wrong: the page is placed where the state says, and nothing counts as
/// a misprediction or a correction.
#[test]
fn a_death_and_a_respawn_are_placements_not_corrections() {
    let mut s = joined();
    recv(&mut s, &snapshot(1, vec![state(ME, 1, 100.0, 100)]));
    s.set_controls(Controls {
        turn: 0.0,
        throttle: 1.0,
        fire: false,
    });
    for _ in 0..6 {
        frame(&mut s, FRAME);
    }
    let ahead = s.view().own.expect("playing").predicted.position.x;
    assert!(ahead > 120.0, "predicted ahead: {ahead}");
    // Killed where it stood at tick 2, before any of those inputs.
    let dead = PlayerState {
        alive: false,
        ..state(ME, 2, 100.0, 0)
    };
    recv(&mut s, &snapshot(2, vec![dead]));
    drain(&mut s);
    recv(&mut s, &snapshot(3, vec![state(ME, 3, 900.0, 100)]));
    let placed: Vec<bool> = drain(&mut s)
        .into_iter()
        .filter_map(|e| match e {
            SessionEvent::Reconciled { placed, .. } => Some(placed),
            _ => None,
        })
        .collect();
    assert_eq!(placed, [true], "the respawn is placed");
    let stats = *s.local().expect("playing").stats();
    assert_eq!(
        (stats.mispredictions, stats.corrections, stats.snaps),
        (0, 0, 0),
        "{stats:?}"
    );
    assert_eq!(s.hud().stats.placements, 3, "joined, killed, back");
    let own = s.view().own.expect("playing");
    assert!(own.predicted.position.x >= 900.0, "{:?}", own.predicted);
}
