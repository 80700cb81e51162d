//! The binary input message: it round-trips every valid message exactly
//! (the view tick to 1/256 of a tick), costs a few bytes per input, and
//! refuses what the JSON form refuses.

use crate::wire::WireInput;
use skirmish_core::protocol::{
    decode_client_frame, encode, ClientMessage, Encoding, ErrorCode, Frame,
};
use skirmish_core::Tick;
use skirmish_core::*;

fn input(tick: u32, turn: f32, throttle: f32, fire: bool, view: Option<f64>) -> WireInput {
    WireInput {
        tick: Tick(tick),
        turn,
        throttle,
        fire,
        view_tick: view,
    }
}

fn bytes_of(inputs: &[WireInput], ack: Option<Tick>) -> Vec<u8> {
    bytes_with(inputs, ack, None)
}

fn bytes_with(inputs: &[WireInput], ack: Option<Tick>, seq: Option<u16>) -> Vec<u8> {
    let mut out = Vec::new();
    encode_inputs(inputs, ack, seq, &mut out);
    out
}

#[test]
fn keyboard_inputs_resent_while_unacknowledged_cost_three_bytes_each() {
    let inputs: Vec<_> = (100..104)
        .map(|t| input(t, -1.0, 1.0, t == 102, Some(f64::from(t) - 6.5)))
        .collect();
    let bytes = bytes_of(&inputs, Some(Tick(95)));
    // Head 10, then a head byte and a two-byte view offset per input.
    assert_eq!(bytes.len(), 10 + 4 * 3);
    let json = encode(&ClientMessage::Input {
        inputs: inputs.clone(),
        snapshot_ack: Some(Tick(95)),
        seq: None,
    });
    assert!(
        json.len() > 8 * bytes.len(),
        "{} vs {}",
        json.len(),
        bytes.len()
    );
    assert_eq!(
        decode_inputs(&bytes),
        Ok(ClientMessage::Input {
            inputs: inputs.clone(),
            snapshot_ack: Some(Tick(95)),
            seq: None,
        })
    );
    // A sequence number costs two bytes more.
    let numbered = bytes_with(&inputs, Some(Tick(95)), Some(65_535));
    assert_eq!(numbered.len(), bytes.len() + 2);
    assert_eq!(
        decode_inputs(&numbered),
        Ok(ClientMessage::Input {
            inputs,
            snapshot_ack: Some(Tick(95)),
            seq: Some(65_535),
        })
    );
}

#[test]
fn the_server_reads_it_as_a_binary_frame_and_json_stays_json() {
    let message = ClientMessage::Input {
        inputs: vec![input(7, 0.25, -0.0, false, None)],
        snapshot_ack: None,
        seq: Some(3),
    };
    let Frame::Binary(bytes) = encode_client(&message, Encoding::Compact) else {
        panic!("compact clients send binary inputs");
    };
    assert_eq!(decode_client_frame(false, &bytes), Ok(message.clone()));
    let Frame::Text(text) = encode_client(&message, Encoding::Json) else {
        panic!("JSON clients send text");
    };
    assert_eq!(decode_client_frame(true, text.as_bytes()), Ok(message));
    // A compact client speaks binary all the way: ping too.
    let ping = ClientMessage::<WireInput>::Ping { id: 3 };
    let Frame::Binary(bytes) = encode_client(&ping, Encoding::Compact) else {
        panic!("compact clients send binary pings");
    };
    assert_eq!(decode_client_frame(false, &bytes), Ok(ping.clone()));
    assert!(matches!(
        encode_client(&ping, Encoding::Json),
        Frame::Text(_)
    ));
    let other = decode_client_frame::<WireInput>(false, &[1, 2, 3]).map_err(|e| e.code);
    assert_eq!(other, Err(ErrorCode::BinaryFrame));
}

#[test]
fn broken_messages_get_the_codes_of_the_json_form() {
    let good = bytes_of(&[input(5, 0.0, 1.0, false, None)], None);
    let code = |bytes: &[u8]| {
        decode_inputs::<WireInput>(bytes)
            .map(|_| ())
            .map_err(|e| e.code)
    };
    assert_eq!(code(&good), Ok(()));
    assert_eq!(code(&good[..good.len() - 1]), Err(ErrorCode::BadMessage));
    assert_eq!(
        code(&[good.as_slice(), &[0]].concat()),
        Err(ErrorCode::BadMessage)
    );
    let mut none = good.clone();
    none[1] = 0;
    assert_eq!(code(&none), Err(ErrorCode::TooManyInputs));
    let mut seventeen = good.clone();
    seventeen[1] = 17;
    assert_eq!(code(&seventeen), Err(ErrorCode::TooManyInputs));
    let mut reserved = good.clone();
    reserved[6] |= 0x80;
    assert_eq!(code(&reserved), Err(ErrorCode::BadMessage));
    let nan = bytes_of(&[input(5, f32::NAN, 0.0, false, None)], None);
    assert_eq!(code(&nan), Err(ErrorCode::NonFinite));
    // A gap that runs past u32.
    let mut far = bytes_of(&[input(u32::MAX - 1, 0.0, 0.0, false, None); 2], None);
    far[1] = 2;
    assert_eq!(code(&far), Err(ErrorCode::BadMessage));
}

#[cfg(not(target_arch = "wasm32"))]
mod props {
    use super::*;
    use proptest::prelude::*;
    use skirmish_core::MAX_INPUTS_PER_MESSAGE;

    fn any_message() -> impl Strategy<Value = (Vec<WireInput>, Option<Tick>)> {
        let value = prop_oneof![
            Just(0.0f32),
            Just(1.0f32),
            Just(-1.0f32),
            Just(-0.0f32),
            -1.0f32..1.0
        ];
        let one = (
            1u32..40,
            value.clone(),
            value,
            any::<bool>(),
            prop::option::of(-300i32..300),
        );
        (
            0u32..u32::MAX / 2,
            prop::collection::vec(one, 1..=MAX_INPUTS_PER_MESSAGE),
            prop::option::of(any::<u32>()),
        )
            .prop_map(|(first, steps, ack)| {
                let mut tick = first;
                let inputs = steps
                    .into_iter()
                    .enumerate()
                    .map(|(i, (gap, turn, throttle, fire, view))| {
                        if i > 0 {
                            tick += gap;
                        }
                        let view = view.map(|v| f64::from(tick) + f64::from(v) / 256.0);
                        input(tick, turn, throttle, fire, view)
                    })
                    .collect();
                (inputs, ack.map(Tick))
            })
    }

    proptest! {
        #[test]
        fn every_valid_message_comes_back_bit_for_bit(
            (inputs, ack) in any_message(),
            numbered in prop::option::of(any::<u16>()),
        ) {
            let bytes = bytes_with(&inputs, ack, numbered);
            let Ok(ClientMessage::Input { inputs: back, snapshot_ack, seq }) = decode_inputs::<WireInput>(&bytes) else {
                return Err(TestCaseError::fail("a valid message was refused"));
            };
            prop_assert_eq!(snapshot_ack, ack);
            prop_assert_eq!(seq, numbered);
            prop_assert_eq!(back.len(), inputs.len());
            for (a, b) in inputs.iter().zip(&back) {
                prop_assert_eq!(a.tick, b.tick);
                prop_assert_eq!(a.turn.to_bits(), b.turn.to_bits());
                prop_assert_eq!(a.throttle.to_bits(), b.throttle.to_bits());
                prop_assert_eq!(a.fire, b.fire);
                prop_assert_eq!(a.view_tick.map(f64::to_bits), b.view_tick.map(f64::to_bits));
            }
        }

        #[test]
        fn arbitrary_bytes_never_panic_it(mut bytes in prop::collection::vec(any::<u8>(), 0..200)) {
            if let Some(first) = bytes.first_mut() {
                *first = skirmish_core::BINARY_INPUT;
            }
            let _ = decode_inputs::<WireInput>(&bytes);
        }
    }
}
