//! The JSON messages of the library, as the tank game's clients send
//! them: every limit and refusal, the documented examples, fuzzing.

mod tests {
    use crate::{Tanks, WireInput};
    use skirmish_core::protocol::*;
    use skirmish_core::Tick;

    fn code(text: &str) -> ErrorCode {
        decode_client::<WireInput>(text).expect_err("refused").code
    }

    #[test]
    fn a_hello_of_another_game_or_version_is_refused_by_name() {
        let ours =
            r#"{"type":"hello","name":"ana","protocol":2,"game":{"name":"tanks","version":2}}"#;
        let ours = decode_client::<WireInput>(ours).expect("a hello");
        assert!(check_game::<Tanks, _>(&ours).is_ok());
        for (other, named) in [
            (r#"{"name":"pong","version":1}"#, "pong 1"),
            (r#"{"name":"tanks","version":1}"#, "tanks 1"),
        ] {
            let hello = format!(r#"{{"type":"hello","name":"ana","protocol":2,"game":{other}}}"#);
            let hello = decode_client::<WireInput>(&hello).expect("well formed");
            let e = check_game::<Tanks, _>(&hello).unwrap_err();
            assert_eq!(e.code, ErrorCode::WrongGame);
            assert_eq!(e.message, format!("this server runs tanks 2, not {named}"));
        }
    }

    #[test]
    fn another_games_hello_is_told_its_game_first_whatever_else_is_wrong() {
        use skirmish_core::control::encode_client;
        let hello = |game: Option<GameId>| ClientMessage::<WireInput>::Hello {
            name: " ".into(),
            protocol: 99,
            room: None,
            encoding: Encoding::Compact,
            game,
        };
        let pong = Some(GameId {
            name: "pong".into(),
            version: 1,
            shape: None,
        });
        let text = encode(&hello(pong.clone()));
        let binary = encode_client(&hello(pong)).expect("a binary hello");
        for (is_text, bytes) in [(true, text.as_bytes()), (false, &binary[..])] {
            let code = |e: ProtocolError| e.code;
            let ours = decode_client_frame_of::<Tanks>(is_text, bytes).map_err(code);
            assert_eq!(ours, Err(ErrorCode::WrongGame), "text: {is_text}");
            let any = decode_client_frame::<WireInput>(is_text, bytes).map_err(code);
            assert_eq!(any, Err(ErrorCode::BadProtocol), "text: {is_text}");
        }
        // Of this game, the other rules still hold.
        let ours = encode(&hello(Some(GameId::of::<Tanks>())));
        let e = decode_client_frame_of::<Tanks>(true, ours.as_bytes()).unwrap_err();
        assert_eq!(e.code, ErrorCode::BadProtocol);
    }

    #[test]
    fn the_documented_examples_decode() {
        let hello =
            decode_client::<WireInput>(r#"{"type":"hello","name":"ana","protocol":1}"#).unwrap();
        assert_eq!(
            hello,
            ClientMessage::Hello {
                name: "ana".into(),
                protocol: 1,
                room: None,
                encoding: Encoding::Json,
                game: None,
            }
        );
        let input = decode_client::<WireInput>(
            r#"{"type":"input","inputs":[{"tick":17,"turn":0.5,"throttle":1.0,"fire":false,"view_tick":1234.6}]}"#,
        )
        .unwrap();
        let ClientMessage::Input { inputs, .. } = input else {
            panic!("an input message")
        };
        assert_eq!(inputs[0].tick, Tick(17));
        assert_eq!(inputs[0].view_tick, Some(1234.6));
        assert_eq!(
            decode_client::<WireInput>(r#"{"type":"ping","id":7}"#).unwrap(),
            ClientMessage::Ping { id: 7 }
        );
        // Unknown fields are ignored: peers may add fields.
        assert!(decode_client::<WireInput>(r#"{"type":"ping","id":7,"extra":[1,2]}"#).is_ok());
    }

    #[test]
    fn every_bad_message_gets_its_code() {
        assert_eq!(code("not json"), ErrorCode::BadMessage);
        assert_eq!(code(r#"{"type":"dance"}"#), ErrorCode::BadMessage);
        assert_eq!(code(r#"{"type":"ping"}"#), ErrorCode::BadMessage);
        assert_eq!(code(&" ".repeat(MAX_FRAME_BYTES + 1)), ErrorCode::TooLarge);
        let inputs = |n: u32| {
            let list: Vec<String> = (1..=n)
                .map(|t| format!(r#"{{"tick":{t},"turn":0,"throttle":1}}"#))
                .collect();
            format!(r#"{{"type":"input","inputs":[{}]}}"#, list.join(","))
        };
        assert!(decode_client::<WireInput>(&inputs(16)).is_ok());
        assert_eq!(code(&inputs(17)), ErrorCode::TooManyInputs);
        assert_eq!(code(&inputs(0)), ErrorCode::TooManyInputs);
        assert_eq!(
            code(
                r#"{"type":"input","inputs":[{"tick":2,"turn":0,"throttle":1},{"tick":2,"turn":0,"throttle":1}]}"#
            ),
            ErrorCode::TicksNotIncreasing
        );
        assert_eq!(
            code(r#"{"type":"input","inputs":[{"tick":2,"turn":1e39,"throttle":1}]}"#),
            ErrorCode::NonFinite
        );
        assert_eq!(
            code(r#"{"type":"hello","name":"ana","protocol":3}"#),
            ErrorCode::BadProtocol
        );
        assert_eq!(
            code(r#"{"type":"hello","name":"ana","protocol":0}"#),
            ErrorCode::BadProtocol
        );
        assert!(
            decode_client::<WireInput>(r#"{"type":"hello","name":"ana","protocol":2}"#).is_ok()
        );
        assert_eq!(
            code(r#"{"type":"hello","name":"","protocol":1}"#),
            ErrorCode::BadName
        );
        assert_eq!(
            code(
                r#"{"type":"hello","name":"ana","protocol":1,"room":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}"#
            ),
            ErrorCode::BadName
        );
    }

    #[test]
    fn error_codes_travel_as_their_names() {
        for &code in ErrorCode::ALL {
            assert_eq!(encode(&code), format!("\"{}\"", code.as_str()));
            let back: ErrorCode = serde_json::from_str(&encode(&code)).unwrap();
            assert_eq!(back, code);
        }
        assert_eq!(ErrorCode::ALL.len(), 19);
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod props {
    use crate::WireInput;
    use proptest::prelude::*;
    use skirmish_core::protocol::*;
    use skirmish_core::Tick;

    proptest! {
        /// Every finite f32 travels through JSON to the same bits.
        #[test]
        fn every_finite_f32_round_trips(bits in any::<u32>()) {
            let v = f32::from_bits(bits);
            prop_assume!(v.is_finite());
            let back: f32 = serde_json::from_str(&serde_json::to_string(&v).unwrap()).unwrap();
            prop_assert_eq!(back.to_bits(), v.to_bits());
        }

        /// Inputs (the fast path) decode to exactly what was sent, unknown
        /// fields and all. View ticks are eighths: `serde_json` reads some
        /// long `f64` decimals to the neighbouring value on either path.
        #[test]
        fn inputs_decode_the_same_on_both_paths(
            ticks in prop::collection::btree_set(0u32..10_000, 1..=16),
            turn in -1.0f32..=1.0,
            throttle in -1.0f32..=1.0,
            fire: bool,
            view in prop::option::of((0u32..8_000_000).prop_map(|v| f64::from(v) / 8.0)),
            extra in prop::option::of("[a-z]{1,8}"),
        ) {
            let inputs: Vec<WireInput> = ticks
                .into_iter()
                .map(|t| WireInput { tick: Tick(t), turn, throttle, fire, view_tick: view })
                .collect();
            let mut text = encode(&ClientMessage::Input { inputs: inputs.clone(), snapshot_ack: None, seq: Some(9) });
            if let Some(extra) = extra {
                text = text.replacen('{', &format!("{{\"{extra}\":[1,{{}}],"), 1);
            }
            prop_assert_eq!(decode_client::<WireInput>(&text).unwrap(), ClientMessage::Input { inputs, snapshot_ack: None, seq: Some(9) });
        }

        /// Arbitrary text never panics the decoder.
        #[test]
        fn arbitrary_text_never_panics(text in ".{0,300}") {
            let _ = decode_client::<WireInput>(&text);
        }
    }
}
