//! The tank game's messages: every binary control message reads back as
//! itself; bad bytes are errors, never panics; a binary `hello` is checked
//! as a text one is; the JSON is what it was before the library was
//! generic.

use glam::Vec2;

use crate::config::SimConfig;
use crate::shots::CombatRules;
use crate::{CombatEvent, TankSetup, Tanks, WireInput};
use skirmish_core::control::*;
use skirmish_core::protocol::{
    ClientMessage, Encoding, ErrorCode, GameId, ProtocolError, RosterEntry, ServerMessage,
};
use skirmish_core::PlayerId;
use skirmish_core::Tick;
use skirmish_core::Writer;

fn welcome_with(room: &str, combat: Option<CombatRules>) -> ServerMessage<Tanks> {
    ServerMessage::Welcome {
        player_id: PlayerId(7),
        protocol: 2,
        server_tick: Tick(123_456),
        tick_ms: 50,
        room: room.into(),
        setup: TankSetup {
            config: SimConfig {
                speed: -0.0,
                ..SimConfig::default()
            },
            combat,
        },
    }
}

fn welcome() -> ServerMessage<Tanks> {
    welcome_with("duel", Some(CombatRules::default()))
}

fn server_messages() -> Vec<ServerMessage<Tanks>> {
    vec![
        welcome(),
        welcome_with("", None),
        ServerMessage::Roster {
            players: vec![
                RosterEntry {
                    id: PlayerId(1),
                    name: "ana".into(),
                },
                RosterEntry {
                    id: PlayerId(300),
                    name: "ünï".into(),
                },
            ],
        },
        ServerMessage::Roster { players: vec![] },
        ServerMessage::Events {
            events: vec![CombatEvent {
                server_tick: Tick(99),
                attacker: PlayerId(1),
                target: PlayerId(2),
                damage: 20,
                hp: 0,
                killed: true,
                from: Vec2::new(1.5, -2.0),
                to: Vec2::new(f32::MAX, 0.1),
            }],
        },
        ServerMessage::Pong {
            id: u64::MAX,
            server_tick: Tick(5),
        },
        ServerMessage::Error {
            code: ErrorCode::RateLimited,
            message: "slow down".into(),
        },
    ]
}

#[test]
fn every_server_control_message_reads_back_as_itself() {
    for message in server_messages() {
        let bytes = encode_server(&message).expect("a control message");
        assert!(is_server_control(&bytes), "{message:?}");
        assert_eq!(decode_server(&bytes), Ok(message.clone()));
        // Cut anywhere, it is an error, not a panic or another message.
        for cut in 0..bytes.len() {
            assert!(
                decode_server::<Tanks>(&bytes[..cut]).is_err(),
                "{message:?} cut at {cut}"
            );
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode_server::<Tanks>(&longer).is_err(), "trailing bytes");
    }
    // The floats travel bit for bit.
    let ServerMessage::Welcome {
        setup: TankSetup { config, .. },
        ..
    } = decode_server::<Tanks>(&encode_server(&welcome()).expect("bytes")).expect("reads")
    else {
        panic!("a welcome")
    };
    assert_eq!(config.speed.to_bits(), (-0.0f32).to_bits());
    assert_eq!(
        config,
        SimConfig {
            speed: -0.0,
            ..SimConfig::default()
        }
    );
}

#[test]
fn every_error_code_travels() {
    for &code in ErrorCode::ALL {
        let message = ServerMessage::<Tanks>::Error {
            code,
            message: String::new(),
        };
        let bytes = encode_server(&message).expect("bytes");
        assert_eq!(decode_server(&bytes), Ok(message));
    }
    let mut w = Writer::default();
    w.u8(ERROR);
    w.text("no_such_code");
    w.text("");
    assert!(decode_server::<Tanks>(&w.bytes).is_err());
}

#[test]
fn json_only_messages_have_no_binary_form() {
    assert_eq!(
        encode_server(&ServerMessage::<Tanks>::Snapshot {
            server_tick: Tick(1),
            players: vec![],
        }),
        None
    );
}

fn hello_as(
    name: &str,
    protocol: u32,
    game: Option<GameId>,
    room: Option<&str>,
) -> ClientMessage<WireInput> {
    ClientMessage::Hello {
        name: name.into(),
        protocol,
        room: room.map(str::to_string),
        encoding: Encoding::Compact,
        game,
    }
}

fn hello(game: Option<GameId>, room: Option<&str>) -> ClientMessage<WireInput> {
    hello_as("ana", 2, game, room)
}

#[test]
fn a_binary_hello_and_ping_read_back_and_are_checked_as_text_ones_are() {
    for message in [
        hello(Some(GameId::of::<crate::Tanks>()), Some("duel")),
        hello(None, None),
        ClientMessage::Ping { id: 1 << 40 },
    ] {
        let bytes = encode_client(&message).expect("a control message");
        assert!(is_client_control(&bytes));
        assert_eq!(
            decode_client::<crate::WireInput>(&bytes),
            Ok(message.clone())
        );
        for cut in 0..bytes.len() {
            assert!(decode_client::<crate::WireInput>(&bytes[..cut]).is_err());
        }
    }
    let other = hello(
        Some(GameId {
            name: "blobs".into(),
            version: 1,
            shape: None,
        }),
        None,
    );
    let other =
        decode_client::<crate::WireInput>(&encode_client(&other).expect("bytes")).expect("a hello");
    let e = skirmish_core::protocol::check_game::<Tanks, _>(&other).unwrap_err();
    assert_eq!(e.code, ErrorCode::WrongGame);
    let nameless = hello_as(" ", 2, None, None);
    let e =
        decode_client::<crate::WireInput>(&encode_client(&nameless).expect("bytes")).unwrap_err();
    assert_eq!(e.code, ErrorCode::BadName);
    let old = hello_as("ana", 9, None, None);
    let e = decode_client::<crate::WireInput>(&encode_client(&old).expect("bytes")).unwrap_err();
    assert_eq!(e.code, ErrorCode::BadProtocol);
    // Unknown flags and kinds are refused.
    let mut bytes = encode_client(&hello(None, None)).expect("bytes");
    let flags = bytes.len() - 1;
    bytes[flags] = 0x80;
    assert!(decode_client::<crate::WireInput>(&bytes).is_err());
    assert_eq!(
        decode_client::<crate::WireInput>(b"Z").map_err(|e| e.code),
        Err(ErrorCode::BinaryFrame)
    );
}

#[cfg(not(target_arch = "wasm32"))]
mod props {
    use proptest::prelude::*;

    use crate::config::{Rect, MAX_OBSTACLES};
    use skirmish_core::{Codec, Reader};

    use super::*;

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic_either_decoder(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = decode_client::<crate::WireInput>(&bytes);
            let _ = decode_server::<Tanks>(&bytes);
        }

        #[test]
        fn configurations_travel_bit_for_bit(
            speed in any::<f32>(),
            turn_rate in any::<f32>(),
            tick_ms in any::<u32>(),
            obstacles in proptest::collection::vec(any::<[f32; 4]>(), 0..MAX_OBSTACLES),
        ) {
            let config = SimConfig {
                tick_ms,
                speed,
                turn_rate,
                obstacles: obstacles
                    .iter()
                    .map(|o| Rect { min: Vec2::new(o[0], o[1]), max: Vec2::new(o[2], o[3]) })
                    .collect(),
                ..SimConfig::default()
            };
            let mut w = Writer::default();
            config.write(&mut w);
            let back = SimConfig::read(&mut Reader::new(&w.bytes)).expect("reads");
            let mut again = Writer::default();
            back.write(&mut again);
            prop_assert_eq!(w.bytes, again.bytes);
        }
    }
}

#[cfg(feature = "json")]
mod json {
    use glam::Vec2;

    use super::*;
    use crate::sim::Pose;
    use crate::state::PlayerState;
    use crate::{CombatEvent, TankSetup};
    use skirmish_core::protocol::{decode_server, encode};

    #[test]
    fn server_messages_round_trip_bit_exactly() {
        let mut state = PlayerState::at(
            Tick(1201),
            Some(Tick(17)),
            Pose::new(Vec2::new(10.5, 0.1 + 0.2), 1.5),
        );
        state.id = PlayerId(3);
        state.velocity = Some(Vec2::new(0.0, 200.0));
        let snapshot = ServerMessage::<Tanks>::Snapshot {
            server_tick: Tick(1201),
            players: vec![state],
        };
        let text = encode(&snapshot);
        assert!(text.starts_with(r#"{"type":"snapshot","server_tick":1201,"players":[{"id":3,"#));
        assert_eq!(decode_server(&text), Ok(snapshot));
        let welcome = ServerMessage::<Tanks>::Welcome {
            player_id: PlayerId(3),
            protocol: 1,
            server_tick: Tick(1200),
            tick_ms: 50,
            room: "r1".into(),
            setup: TankSetup {
                config: SimConfig::default(),
                combat: Some(CombatRules::default()),
            },
        };
        assert_eq!(decode_server(&encode(&welcome)), Ok(welcome));
        let error = ProtocolError::new(ErrorCode::RateLimited, "slow down").to_message::<Tanks>();
        assert_eq!(
            encode(&error),
            r#"{"type":"error","code":"rate_limited","message":"slow down"}"#
        );
    }

    /// The game's parts sit in the messages as they did before the library
    /// was generic: the setup's fields beside the library's, the events
    /// under the game's name.
    #[test]
    fn the_tank_games_json_is_unchanged() {
        let welcome = ServerMessage::<Tanks>::Welcome {
            player_id: PlayerId(3),
            protocol: 2,
            server_tick: Tick(7),
            tick_ms: 50,
            room: "r".into(),
            setup: TankSetup {
                config: SimConfig {
                    obstacles: vec![],
                    ..SimConfig::default()
                },
                combat: None,
            },
        };
        let text = encode(&welcome);
        assert!(
            text.starts_with(
                r#"{"type":"welcome","player_id":3,"protocol":2,"server_tick":7,"tick_ms":50,"room":"r","config":{"#
            ),
            "{text}"
        );
        assert!(!text.contains("combat"), "{text}");
        let hit = CombatEvent {
            server_tick: Tick(9),
            attacker: PlayerId(1),
            target: PlayerId(2),
            damage: 20,
            hp: 80,
            killed: false,
            from: Vec2::new(1.0, 2.0),
            to: Vec2::new(3.0, 4.0),
        };
        let events = ServerMessage::<Tanks>::Events { events: vec![hit] };
        let text = encode(&events);
        assert_eq!(
            text,
            r#"{"type":"combat","events":[{"server_tick":9,"attacker":1,"target":2,"damage":20,"hp":80,"killed":false,"from":[1.0,2.0],"to":[3.0,4.0]}]}"#
        );
        assert_eq!(decode_server(&text), Ok(events));
        // Another type is not taken for the events, nor a broken message.
        let other = text.replace("combat", "hits");
        assert!(decode_server::<Tanks>(&other).is_err());
        assert!(decode_server::<Tanks>(r#"{"type":"combat"}"#).is_err());
    }
}
