//! The room without sockets: placement and capacity, welcome, roster,
//! snapshots in each encoding, combat, pong and the per-tick input bound,
//! read from the frames the room hands its shell.

// Only `open` is used here; the other helpers serve other scenario files.
#[allow(dead_code)]
mod common;

use skirmish_core::{
    decode_server, ClientMessage, Encoding, ErrorCode, PlayerId, ServerMessage, Tick, Vec2,
    PROTOCOL_VERSION,
};
use skirmish_core::{place, Frame, Outbox, Placement, Room, RoomConfig};
use skirmish_tanks::{angle_delta, compact, CombatEvent, SimConfig, Tanks, WireInput};

const A: PlayerId = PlayerId(1);
const B: PlayerId = PlayerId(2);
const C: PlayerId = PlayerId(3);

fn room(capacity: usize, sim: SimConfig) -> Room<Tanks> {
    Room::new(RoomConfig {
        name: "arena".into(),
        capacity,
        game: skirmish_tanks::TankSettings {
            sim,
            ..Default::default()
        },
        seed: 7,
        ..RoomConfig::default()
    })
}

/// The JSON messages `id` got, decoded; binary frames are skipped.
fn texts(out: &Outbox, id: PlayerId) -> Vec<ServerMessage<Tanks>> {
    out.to(id)
        .filter_map(|f| match f {
            Frame::Text(text) => Some(decode_server(text).expect("the room sends valid JSON")),
            Frame::Binary(_) => None,
        })
        .collect()
}

fn roster_ids(message: &ServerMessage<Tanks>) -> Vec<PlayerId> {
    match message {
        ServerMessage::Roster { players } => players.iter().map(|p| p.id).collect(),
        other => panic!("expected roster, got {other:?}"),
    }
}

fn join(room: &mut Room<Tanks>, id: PlayerId, encoding: Encoding) -> Outbox {
    let mut out = Outbox::new();
    room.join(id, &format!("p{}", id.0), encoding, &mut out)
        .expect("a free seat");
    out
}

fn input(tick: u32, turn: f32, throttle: f32, fire: bool) -> WireInput {
    WireInput {
        tick: Tick(tick),
        turn,
        throttle,
        fire,
        view_tick: None,
    }
}

#[test]
fn welcome_tells_the_joiner_who_it_is_and_the_rules() {
    let sim = common::open();
    let mut room = room(4, sim.clone());
    let mut out = Outbox::new();
    room.tick(&mut out);
    room.tick(&mut out);
    let out = join(&mut room, A, Encoding::Json);
    assert_eq!(
        texts(&out, A),
        vec![ServerMessage::Welcome {
            player_id: A,
            protocol: 1, // a protocol-1 joiner is answered in protocol 1
            server_tick: Tick(2),
            tick_ms: 50,
            room: "arena".into(),
            setup: skirmish_tanks::TankSetup {
                config: sim,
                combat: Some(skirmish_tanks::CombatRules::default()),
            },
        }],
        "welcome at once, nothing else"
    );
}

/// The rosters of one tick's frames, per recipient.
fn rosters(out: &Outbox, id: PlayerId) -> Vec<Vec<PlayerId>> {
    texts(out, id)
        .iter()
        .filter(|m| matches!(m, ServerMessage::Roster { .. }))
        .map(roster_ids)
        .collect()
}

#[test]
fn the_roster_goes_to_everyone_once_per_tick_after_joins_and_leaves() {
    let mut room = room(4, common::open());
    join(&mut room, A, Encoding::Json);
    join(&mut room, B, Encoding::Compact);
    join(&mut room, C, Encoding::Json);
    let mut out = Outbox::new();
    room.tick(&mut out);
    for id in [A, B, C] {
        assert_eq!(
            rosters(&out, id),
            vec![vec![A, B, C]],
            "one roster for three joins"
        );
        let first = texts(&out, id).into_iter().next();
        assert!(
            matches!(first, Some(ServerMessage::Roster { .. })),
            "the roster comes before the snapshot"
        );
    }
    let shared = out
        .frames()
        .iter()
        .filter(|f| matches!(f, Frame::Text(t) if t.starts_with(r#"{"type":"roster""#)))
        .count();
    assert_eq!(shared, 1, "encoded once for everyone");

    let mut out = Outbox::new();
    room.tick(&mut out);
    assert!(rosters(&out, A).is_empty(), "nothing changed, no roster");

    assert!(room.leave(A));
    assert!(!room.leave(A), "a second leave does nothing");
    assert!(room.world().player(A).is_none(), "gone from the world");
    let mut out = Outbox::new();
    room.tick(&mut out);
    assert_eq!(out.to(A).count(), 0, "the leaver is told nothing");
    assert_eq!(rosters(&out, B), vec![vec![B, C]]);
    assert_eq!(rosters(&out, C), vec![vec![B, C]]);
}

#[test]
fn a_full_room_refuses_and_sends_nothing() {
    let mut room = room(2, common::open());
    join(&mut room, A, Encoding::Json);
    join(&mut room, B, Encoding::Json);
    assert!(room.is_full());
    let mut out = Outbox::new();
    let refused = room
        .join(C, "late", Encoding::Json, &mut out)
        .expect_err("no seat left");
    assert_eq!(refused.code, ErrorCode::ServerFull);
    assert!(out.is_empty());
    assert_eq!(room.len(), 2);
    assert!(!room.contains(C));
    let again = room
        .join(A, "twice", Encoding::Json, &mut out)
        .expect_err("already seated");
    assert_eq!(again.code, ErrorCode::AlreadyJoined);
    // A seat given back can be taken again.
    room.leave(B);
    join(&mut room, C, Encoding::Json);
    assert_eq!(room.len(), 2);
}

#[test]
fn placement_prefers_the_wanted_room_then_the_fullest_with_space() {
    let rooms = [("a", 3), ("b", 5), ("c", 8)];
    assert_eq!(place(rooms, None, 8, 4), Ok(Placement::Existing("b")));
    assert_eq!(place(rooms, Some("a"), 8, 4), Ok(Placement::Existing("a")));
    assert_eq!(place(rooms, Some("new"), 8, 4), Ok(Placement::New));
    let full = place(rooms, Some("c"), 8, 4).expect_err("c is full");
    assert_eq!(full.code, ErrorCode::ServerFull);
    // No room with space and no new room allowed.
    let every = [("a", 8), ("b", 8)];
    assert_eq!(place(every, None, 8, 3), Ok(Placement::New));
    let err = place(every, None, 8, 2).expect_err("at the room limit");
    assert_eq!(err.code, ErrorCode::ServerFull);
    assert_eq!(
        place(every, Some("x"), 8, 2).map_err(|e| e.code),
        Err(ErrorCode::ServerFull)
    );
    assert_eq!(place([], None, 8, 1), Ok(Placement::New));
}

#[test]
fn each_client_gets_its_snapshot_in_its_encoding_encoded_once() {
    let sim = common::open();
    let mut room = room(8, sim.clone());
    join(&mut room, A, Encoding::Json);
    join(&mut room, B, Encoding::Json);
    join(&mut room, C, Encoding::Compact);
    let mut out = Outbox::new();
    room.tick(&mut out);
    out.clear();
    let tick = room.tick(&mut out);
    assert_eq!(tick, Tick(2));
    // One JSON text shared by A and B, one binary frame for C.
    assert_eq!(out.frames().len(), 2);
    assert_eq!(out.deliveries().len(), 3);
    let truth = room.world().snapshot();
    for id in [A, B] {
        let got = texts(&out, id);
        assert_eq!(
            got,
            vec![ServerMessage::Snapshot {
                server_tick: tick,
                players: truth.clone(),
            }],
            "JSON carries every state exactly"
        );
    }
    let Some(Frame::Binary(bytes)) = out.to(C).next() else {
        panic!("C asked for compact frames")
    };
    let (server_tick, states) = compact::decode(bytes, &sim).expect("a valid frame");
    assert_eq!(server_tick, tick);
    let own = states.iter().find(|s| s.id == C).expect("C is in it");
    let exact = truth.iter().find(|s| s.id == C).expect("C is in the world");
    assert_eq!(own, exact, "the own state is bit-exact");
    for (got, want) in states.iter().zip(&truth).filter(|(s, _)| s.id != C) {
        assert_eq!(got.id, want.id);
        assert!(got.position.distance(want.position) < 0.05);
    }
    assert_eq!(room.stats().snapshots, 6, "three a tick");
}

#[test]
fn ping_is_answered_with_pong_to_the_sender_only() {
    let mut room = room(4, common::open());
    join(&mut room, A, Encoding::Json);
    join(&mut room, B, Encoding::Json);
    let mut out = Outbox::new();
    room.tick(&mut out);
    out.clear();
    room.receive(A, &ClientMessage::Ping { id: 42 }, &mut out)
        .expect("a seated client may ping");
    assert_eq!(
        texts(&out, A),
        vec![ServerMessage::Pong {
            id: 42,
            server_tick: Tick(1)
        }]
    );
    assert_eq!(out.to(B).count(), 0);
}

#[test]
fn messages_from_strangers_and_second_hellos_are_refused_without_effect() {
    let mut room = room(4, common::open());
    join(&mut room, A, Encoding::Json);
    let mut out = Outbox::new();
    let stranger = room
        .receive(B, &ClientMessage::Ping { id: 1 }, &mut out)
        .expect_err("B has no seat");
    assert_eq!(stranger.code, ErrorCode::NotJoined);
    let hello = ClientMessage::Hello {
        name: "again".into(),
        protocol: PROTOCOL_VERSION,
        room: None,
        encoding: Encoding::Json,
        game: None,
    };
    let again = room.receive(A, &hello, &mut out).expect_err("one hello");
    assert_eq!(again.code, ErrorCode::AlreadyJoined);
    assert!(out.is_empty());
}

#[test]
fn at_most_two_inputs_are_applied_per_tick_however_many_arrive() {
    let mut room = room(4, common::open());
    join(&mut room, A, Encoding::Json);
    let burst: Vec<_> = (1..=16).map(|t| input(t, 0.0, 1.0, false)).collect();
    let mut out = Outbox::new();
    let received = room
        .receive(
            A,
            &ClientMessage::Input {
                inputs: burst,
                snapshot_ack: None,
                seq: None,
            },
            &mut out,
        )
        .expect("valid inputs");
    assert_eq!(received.queued, 16);
    let start = room
        .world()
        .player(A)
        .expect("seated")
        .state
        .pose()
        .position;
    let mut last = 0;
    for _ in 0..12 {
        room.tick(&mut out);
        let ack = room
            .world()
            .player(A)
            .and_then(skirmish_core::ServerPlayer::ack)
            .map_or(0, |t| t.0);
        assert!(ack - last <= 2, "{} inputs in one tick", ack - last);
        last = ack;
    }
    assert_eq!(last, 16, "all applied in the end");
    let moved = room
        .world()
        .player(A)
        .expect("seated")
        .state
        .pose()
        .position
        .distance(start);
    assert!(
        (moved - 160.0).abs() < 0.01,
        "16 steps of 10 u, not more: {moved}"
    );

    // More than a queue holds is dropped and counted.
    let more: Vec<_> = (17..=32).map(|t| input(t, 0.0, 1.0, false)).collect();
    let again: Vec<_> = (33..=48).map(|t| input(t, 0.0, 1.0, false)).collect();
    let extra: Vec<_> = (49..=52).map(|t| input(t, 0.0, 1.0, false)).collect();
    for inputs in [more, again, extra] {
        room.receive(
            A,
            &ClientMessage::Input {
                inputs,
                snapshot_ack: None,
                seq: None,
            },
            &mut out,
        )
        .expect("valid inputs");
    }
    assert_eq!(room.world().stats().dropped_inputs, 4);
}

/// Turns `shooter` toward `target` one tick at a time, then fires until
/// the target is dead; every frame of every tick is kept.
fn duel(room: &mut Room<Tanks>, shooter: PlayerId, target: PlayerId) -> Vec<Outbox> {
    let sim = room.world().config().clone();
    let step = sim.turn_rate * sim.cadence_secs();
    let mut outs = Vec::new();
    for tick in 1..400 {
        let me = room.world().player(shooter).expect("seated").state.pose();
        let them = room
            .world()
            .player(target)
            .expect("seated")
            .state
            .pose()
            .position;
        let to = them - me.position;
        let delta = angle_delta(me.rotation, libm::atan2f(to.y, to.x));
        let aimed = delta.abs() < 0.02;
        let turn = skirmish_core::clamp(delta / step, -1.0, 1.0);
        let mut out = Outbox::new();
        let inputs = vec![input(tick, if aimed { 0.0 } else { turn }, 0.0, aimed)];
        room.receive(
            shooter,
            &ClientMessage::Input {
                inputs,
                snapshot_ack: None,
                seq: None,
            },
            &mut out,
        )
        .expect("valid input");
        room.tick(&mut out);
        outs.push(out);
        if !room
            .world()
            .player(target)
            .expect("seated")
            .state
            .is_alive()
        {
            break;
        }
    }
    outs
}

#[test]
fn each_hit_reaches_every_client_exactly_once() {
    let sim = SimConfig {
        arena: Vec2::new(300.0, 300.0),
        ..common::open()
    };
    let mut room = room(4, sim);
    join(&mut room, A, Encoding::Json);
    join(&mut room, B, Encoding::Json);
    join(&mut room, C, Encoding::Compact);
    let outs = duel(&mut room, A, B);
    let seen = |id: PlayerId| -> Vec<CombatEvent> {
        outs.iter()
            .flat_map(|out| texts(out, id))
            .filter_map(|m| match m {
                ServerMessage::Events { events } => Some(events),
                _ => None,
            })
            .flatten()
            .collect()
    };
    let a = seen(A);
    assert!(a.iter().any(|e| e.killed), "the duel ends in a kill: {a:?}");
    assert_eq!(a.len() as u64, room.stats().events, "every hit, once");
    assert_eq!(seen(B), a);
    assert_eq!(seen(C), a);
    let mut ticks: Vec<_> = a.iter().map(|e| (e.server_tick, e.target)).collect();
    ticks.dedup();
    assert_eq!(ticks.len(), a.len(), "no hit twice");
    // One combat frame per tick with hits, shared by all three.
    for out in &outs {
        let combats = out
            .frames()
            .iter()
            .filter(|f| matches!(f, Frame::Text(t) if t.starts_with(r#"{"type":"combat""#)))
            .count();
        assert!(combats <= 1);
    }
}
