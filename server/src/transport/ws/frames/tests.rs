//! The frame reader against frames as a client masks them: whole, split at
//! every byte, fragmented, interleaved with control frames; and against
//! whatever else arrives.

use super::*;

/// A client frame: masked with `mask`.
fn frame(fin: bool, opcode: u8, payload: &[u8], mask: [u8; 4]) -> Vec<u8> {
    let mut out = vec![u8::from(fin) << 7 | opcode];
    match payload.len() {
        n if n < 126 => out.push(0x80 | n as u8),
        n if n <= 0xffff => {
            out.push(0x80 | 0x7e);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            out.push(0x80 | 0x7f);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    out.extend_from_slice(&mask);
    out.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    out
}

/// Everything the reader finds in `bytes` fed `chunk` bytes at a time, as
/// (kind, payload).
fn read_all(bytes: &[u8], chunk: usize) -> Result<Vec<(String, Vec<u8>)>, Broken> {
    let mut reader = FrameReader::new(1 << 16, &[]);
    let mut found = Vec::new();
    for piece in bytes.chunks(chunk.max(1)) {
        let mut rest = piece;
        while !rest.is_empty() {
            let space = reader.space();
            let n = space.len().min(rest.len());
            space[..n].copy_from_slice(&rest[..n]);
            reader.filled(n);
            rest = &rest[n..];
            while let Some(frame) = reader.next()? {
                let entry = match &frame {
                    Found::Data { text, at } => (
                        if *text { "text" } else { "binary" }.to_string(),
                        reader.bytes(at).to_vec(),
                    ),
                    Found::Ping(at) => ("ping".into(), reader.bytes(at).to_vec()),
                    Found::Nothing => continue,
                    Found::Close(code) => (
                        "close".into(),
                        code.map(|c| c.to_be_bytes().to_vec()).unwrap_or_default(),
                    ),
                };
                found.push(entry);
            }
        }
    }
    Ok(found)
}

#[test]
fn messages_come_out_whole_however_the_bytes_are_split() {
    let big = vec![b'x'; 70_000 - 100];
    let mut bytes = frame(true, 0x1, br#"{"type":"ping","id":1}"#, [1, 2, 3, 4]);
    bytes.extend(frame(true, 0x2, &[0x49, 1, 2], [9, 9, 9, 9]));
    bytes.extend(frame(true, 0x9, b"are you there", [5, 6, 7, 8]));
    bytes.extend(frame(true, 0x2, &big[..300], [0xff; 4]));
    bytes.extend(frame(true, 0x2, &big[..60_000], [0x10, 0x20, 0x30, 0x40]));
    bytes.extend(frame(true, 0x8, &1000u16.to_be_bytes(), [0; 4]));
    for chunk in [1, 2, 3, 7, 100, 4096, usize::MAX] {
        let found = read_all(&bytes, chunk).expect("valid frames");
        let kinds: Vec<&str> = found.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            kinds,
            ["text", "binary", "ping", "binary", "binary", "close"],
            "{chunk}"
        );
        assert_eq!(found[0].1, br#"{"type":"ping","id":1}"#);
        assert_eq!(found[1].1, [0x49, 1, 2]);
        assert_eq!(found[2].1, b"are you there");
        assert_eq!(found[3].1, &big[..300]);
        assert_eq!(found[4].1, &big[..60_000]);
        assert_eq!(found[5].1, 1000u16.to_be_bytes());
    }
}

#[test]
fn a_fragmented_message_is_put_together_around_control_frames() {
    let mut bytes = frame(false, 0x1, b"{\"type\":", [1, 1, 1, 1]);
    bytes.extend(frame(true, 0x9, b"", [2, 2, 2, 2]));
    bytes.extend(frame(false, 0x0, b"\"ping\",", [3, 3, 3, 3]));
    bytes.extend(frame(true, 0xA, b"late pong", [3, 3, 3, 3]));
    bytes.extend(frame(true, 0x0, b"\"id\":2}", [4, 4, 4, 4]));
    let found = read_all(&bytes, 5).expect("valid frames");
    assert_eq!(found.len(), 2);
    assert_eq!(found[0].0, "ping");
    assert_eq!(
        found[1],
        ("text".into(), br#"{"type":"ping","id":2}"#.to_vec())
    );
}

#[test]
fn broken_rules_end_the_connection_with_their_status() {
    let unmasked = {
        let mut f = frame(true, 0x1, b"hi", [0; 4]);
        f[1] &= 0x7f;
        f.truncate(2);
        f.extend(b"hi");
        f
    };
    let cases: [(&str, Vec<u8>, Broken); 11] = [
        (
            "close with a one-byte body",
            frame(true, 0x8, &[3], [0; 4]),
            Broken::Protocol,
        ),
        (
            // RFC 6455, 7.1.6; `differential.rs` checks any reason.
            "close with a reason that is not UTF-8",
            frame(true, 0x8, &[0x03, 0xe8, b'o', 0xc3], [1, 2, 3, 4]),
            Broken::Protocol,
        ),
        (
            "close with a status no endpoint sends",
            frame(true, 0x8, &1005u16.to_be_bytes(), [0; 4]),
            Broken::Protocol,
        ),
        (
            "close with a status below 1000",
            frame(true, 0x8, &999u16.to_be_bytes(), [0; 4]),
            Broken::Protocol,
        ),
        ("unmasked", unmasked, Broken::Protocol),
        (
            "reserved bit",
            {
                let mut f = frame(true, 0x1, b"x", [0; 4]);
                f[0] |= 0x40;
                f
            },
            Broken::Protocol,
        ),
        (
            "lone continuation",
            frame(true, 0x0, b"x", [0; 4]),
            Broken::Protocol,
        ),
        (
            "unknown opcode",
            frame(true, 0x3, b"x", [0; 4]),
            Broken::Protocol,
        ),
        (
            "fragmented ping",
            frame(false, 0x9, b"x", [0; 4]),
            Broken::Protocol,
        ),
        (
            "message inside a message",
            [
                frame(false, 0x1, b"a", [0; 4]),
                frame(true, 0x1, b"b", [0; 4]),
            ]
            .concat(),
            Broken::Protocol,
        ),
        (
            "announced over the limit",
            frame(true, 0x2, &vec![0; (1 << 16) + 1], [0; 4])[..14].to_vec(),
            Broken::TooLarge,
        ),
    ];
    for (what, bytes, why) in cases {
        assert_eq!(read_all(&bytes, 3), Err(why), "{what}");
    }
    assert_eq!(Broken::TooLarge.status(), 1009);
}

/// A bare close (what a browser's `close()` without arguments sends) has
/// no status, whatever bytes follow it.
#[test]
fn a_bare_close_has_no_status() {
    let mut reader = FrameReader::new(1 << 16, &[]);
    let bytes = [
        frame(true, 0x8, &[], [1, 2, 3, 4]),
        frame(true, 0x1, b"after", [5, 6, 7, 8]),
    ]
    .concat();
    reader.space()[..bytes.len()].copy_from_slice(&bytes);
    reader.filled(bytes.len());
    assert_eq!(reader.next(), Ok(Some(Found::Close(None))));
    let mut reader = FrameReader::new(1 << 16, &[]);
    let close = frame(true, 0x8, &[0x03, 0xe8, b'o', b'k'], [9, 9, 9, 9]);
    reader.space()[..close.len()].copy_from_slice(&close);
    reader.filled(close.len());
    assert_eq!(reader.next(), Ok(Some(Found::Close(Some(1000)))));
}

/// Pongs and fragments come out as frames of their own (`Found::Nothing`),
/// each a frame the transport hands the session; that the session counts
/// them against the rate limit is `hostile.rs`'s
/// `flooding_with_pongs_is_rate_limited_and_counted`.
#[test]
fn pongs_and_fragments_are_frames_of_their_own() {
    let bytes = [
        frame(true, 0xA, b"", [0; 4]),
        frame(false, 0x1, b"a", [0; 4]),
        frame(true, 0x0, b"b", [0; 4]),
    ]
    .concat();
    let mut reader = FrameReader::new(1 << 16, &bytes);
    assert_eq!(reader.next(), Ok(Some(Found::Nothing)));
    assert_eq!(reader.next(), Ok(Some(Found::Nothing)));
    assert!(matches!(
        reader.next(),
        Ok(Some(Found::Data { text: true, .. }))
    ));
    assert_eq!(reader.next(), Ok(None));
}

#[test]
fn server_headers_use_the_shortest_length_form() {
    let mut out = [0u8; 10];
    assert_eq!(header(Opcode::Text, 125, &mut out), 2);
    assert_eq!(out[..2], [0x81, 125]);
    assert_eq!(header(Opcode::Binary, 126, &mut out), 4);
    assert_eq!(out[..4], [0x82, 126, 0, 126]);
    assert_eq!(header(Opcode::Close, 65_536, &mut out), 10);
    assert_eq!(out[..10], [0x88, 127, 0, 0, 0, 0, 0, 1, 0, 0]);
}

proptest::proptest! {
    #[test]
    fn arbitrary_bytes_never_panic_the_reader(
        bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..2000),
        chunk in 1usize..64,
    ) {
        let _ = read_all(&bytes, chunk);
    }

    #[test]
    fn any_messages_split_anywhere_come_back(
        messages in proptest::collection::vec(
            (proptest::prelude::any::<bool>(), proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300), proptest::prelude::any::<[u8; 4]>()),
            1..20,
        ),
        chunk in 1usize..200,
    ) {
        let bytes: Vec<u8> = messages
            .iter()
            .flat_map(|(text, payload, mask)| frame(true, if *text { 1 } else { 2 }, payload, *mask))
            .collect();
        let found = read_all(&bytes, chunk).map_err(|e| proptest::test_runner::TestCaseError::fail(format!("{e:?}")))?;
        proptest::prop_assert_eq!(found.len(), messages.len());
        for ((text, payload, _), (kind, got)) in messages.iter().zip(&found) {
            proptest::prop_assert_eq!(kind.as_str(), if *text { "text" } else { "binary" });
            proptest::prop_assert_eq!(got, payload);
        }
    }
}
