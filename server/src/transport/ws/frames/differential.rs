//! The frame reader against a reference, tungstenite's reader (a server
//! `WebSocket` over an in-memory stream): on any bytes, on valid client
//! frames (every opcode, fragments with control frames between them, every
//! length form, minimal or not) and on valid frames mutated (bits flipped,
//! cut short), ours fed the bytes split anywhere. Both accept or both
//! refuse, for the same reason, having delivered the same messages, pings,
//! pongs and close status.
//!
//! Differences on purpose, each checked rather than skipped:
//! - Ours does not check text for UTF-8 (the session's decoder answers
//!   `bad_message`, where tungstenite fails the connection). Tungstenite
//!   reads the bytes twice: with text frames relabelled binary, which ours
//!   must match exactly, and as they are, which must agree up to its end and
//!   may end sooner only with a UTF-8 error, before a text that is not UTF-8.
//! - Ours refuses a frame from its header for reserved bits, no mask or a
//!   bad control frame, tungstenite once the frame is whole; tungstenite
//!   refuses an unknown opcode from the header, ours once the frame is
//!   whole. Where only one has refused, the last frame is completed with
//!   zero bytes and both must then refuse it alike.
//! - A frame over the limit that also breaks a rule: ours names the rule if
//!   the header shows it (1002), else the size (1009); tungstenite names an
//!   unknown opcode, else the size. Checked against the frame itself.
//! - Ours allows close status 1014 (Bad Gateway, registered with IANA),
//!   tungstenite does not. A status not allowed fails the connection on both
//!   sides (tungstenite answers 1002 and reports a made-up close frame, so
//!   the reference reads the status from the frame).

use std::io::{self, Cursor, Read, Write};

use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use proptest::sample::{select, Index};
use proptest::test_runner::TestCaseError;
use tokio_tungstenite::tungstenite::error::ProtocolError;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::frame::FrameHeader;
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocket, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Error, Message};

use super::{close_status, Broken, Found, FrameReader};
use crate::transport::TRANSPORT_LIMIT;

/// What a reader delivered.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Event {
    /// A message: whether it is text, and its bytes.
    Data(bool, Vec<u8>),
    Ping(Vec<u8>),
    Pong,
    Close(Option<u16>),
}

/// How a reading of the bytes ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    /// The bytes ran out with more wanted.
    Waiting,
    /// The client closed (the last event): nothing more is read.
    Closed,
    /// The connection fails.
    Refused(Broken),
    /// Tungstenite only: a text message or close reason is not UTF-8.
    NotUtf8,
}

/// Everything a reader made of some bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Run {
    events: Vec<Event>,
    end: End,
}

fn run(events: Vec<Event>, end: End) -> Run {
    Run { events, end }
}

/// Our reader over `bytes` cut at `cuts` (what comes before the first cut
/// as the bytes that came with the upgrade request), and how many frames it
/// read whole.
fn ours(bytes: &[u8], cuts: &[usize], limit: usize) -> (Run, usize) {
    let mut cuts = cuts.to_vec();
    cuts.sort_unstable();
    cuts.push(bytes.len());
    let mut at = cuts[0];
    let mut reader = FrameReader::new(limit, &bytes[..at]);
    let (mut events, mut frames) = (Vec::new(), 0);
    loop {
        loop {
            // A pong is `Found::Nothing`, like a fragment: its opcode tells.
            let opcode = reader.buffer[reader.start..reader.end]
                .first()
                .map(|b| b & 0x0f);
            let event = match reader.next() {
                Ok(None) => break,
                Ok(Some(Found::Data { text, at })) => Event::Data(text, reader.bytes(&at).to_vec()),
                Ok(Some(Found::Ping(at))) => Event::Ping(reader.bytes(&at).to_vec()),
                Ok(Some(Found::Nothing)) if opcode == Some(0xA) => Event::Pong,
                Ok(Some(Found::Nothing)) => {
                    frames += 1;
                    continue;
                }
                Ok(Some(Found::Close(status))) => {
                    events.push(Event::Close(status));
                    return (run(events, End::Closed), frames + 1);
                }
                Err(broken) => return (run(events, End::Refused(broken)), frames),
            };
            frames += 1;
            events.push(event);
        }
        let Some(&cut) = cuts.iter().find(|&&cut| cut > at) else {
            return (run(events, End::Waiting), frames);
        };
        let space = reader.space();
        let n = space.len().min(cut - at);
        space[..n].copy_from_slice(&bytes[at..at + n]);
        reader.filled(n);
        at += n;
    }
}

/// The client's side of an in-memory connection: what it sent, to be read
/// once; what the server answers goes nowhere.
struct Wire(Cursor<Vec<u8>>);

impl Read for Wire {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

impl Write for Wire {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Tungstenite's reading of `bytes`, with our `limit` on frames and
/// messages.
fn tungstenite(bytes: &[u8], limit: usize) -> Run {
    let config = WebSocketConfig::default()
        .read_buffer_size(4096)
        .max_frame_size(Some(limit))
        .max_message_size(Some(limit));
    let wire = Wire(Cursor::new(bytes.to_vec()));
    let mut socket = WebSocket::from_raw_socket(wire, Role::Server, Some(config));
    let mut events = Vec::new();
    loop {
        let event = match socket.read() {
            Ok(Message::Text(text)) => Event::Data(true, text.as_bytes().to_vec()),
            Ok(Message::Binary(bytes)) => Event::Data(false, bytes.to_vec()),
            Ok(Message::Ping(bytes)) => Event::Ping(bytes.to_vec()),
            Ok(Message::Pong(_)) => Event::Pong,
            Ok(Message::Close(close)) => {
                // The status as sent: tungstenite replaces one not allowed.
                let body = walk(bytes)
                    .iter()
                    .find(|frame| frame.opcode() == 0x8)
                    .and_then(|frame| frame.payload(bytes))
                    .expect("the close frame tungstenite read");
                let status = body.get(..2).map(|b| u16::from_be_bytes([b[0], b[1]]));
                let replaced = status.is_some_and(|s| !CloseCode::from(s).is_allowed());
                let told = close.map(|c| u16::from(c.code));
                assert_eq!(told, if replaced { Some(1002) } else { status });
                if status.is_some_and(|s| !allowed(s)) {
                    return run(events, End::Refused(Broken::Protocol));
                }
                events.push(Event::Close(status));
                return run(events, End::Closed);
            }
            Ok(Message::Frame(_)) => panic!("a raw frame from `read`"),
            Err(Error::Protocol(ProtocolError::ResetWithoutClosingHandshake)) => {
                return run(events, End::Waiting);
            }
            Err(Error::Protocol(_)) => return run(events, End::Refused(Broken::Protocol)),
            Err(Error::Capacity(_)) => return run(events, End::Refused(Broken::TooLarge)),
            Err(Error::Utf8(_)) => return run(events, End::NotUtf8),
            Err(e) => panic!("tungstenite failed otherwise: {e}"),
        };
        events.push(event);
    }
}

/// A close status a client may send: tungstenite's rule, and 1014.
fn allowed(status: u16) -> bool {
    status == 1014 || CloseCode::from(status).is_allowed()
}

/// One frame as tungstenite's header parser finds it.
struct Walked {
    at: usize,
    first: u8,
    fin: bool,
    head: usize,
    len: u64,
    mask: Option<[u8; 4]>,
}

impl Walked {
    fn opcode(&self) -> u8 {
        self.first & 0x0f
    }

    /// Where the frame ends, if it can.
    fn end(&self) -> Option<usize> {
        usize::try_from(self.len)
            .ok()
            .and_then(|len| (self.at + self.head).checked_add(len))
    }

    /// The unmasked payload, if all of it is in `bytes`.
    fn payload(&self, bytes: &[u8]) -> Option<Vec<u8>> {
        let body = bytes.get(self.at + self.head..self.end()?)?;
        Some(masked(body, self.mask.unwrap_or_default()))
    }
}

/// The frames of `bytes` in order, the last maybe cut short, as
/// tungstenite's header parser finds them; each header is parsed with its
/// opcode set to binary, to walk past the opcodes tungstenite refuses.
fn walk(bytes: &[u8]) -> Vec<Walked> {
    let mut frames = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let mut head: Vec<u8> = bytes[at..].iter().take(14).copied().collect();
        head[0] = head[0] & 0xf0 | 0x2;
        let mut cursor = Cursor::new(&head);
        let Ok(Some((header, len))) = FrameHeader::parse(&mut cursor) else {
            break;
        };
        let frame = Walked {
            at,
            first: bytes[at],
            fin: bytes[at] & 0x80 != 0,
            head: cursor.position() as usize,
            len,
            mask: header.mask,
        };
        let end = frame.end().filter(|&end| end <= bytes.len());
        frames.push(frame);
        match end {
            Some(end) => at = end,
            None => break,
        }
    }
    frames
}

/// `bytes` with every text frame relabelled binary.
fn relabelled(bytes: &[u8], frames: &[Walked]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for frame in frames.iter().filter(|frame| frame.opcode() == 0x1) {
        out[frame.at] = frame.first & 0xf0 | 0x2;
    }
    out
}

/// Whether each message tungstenite delivers is text, in order.
fn text_flags(frames: &[Walked]) -> Vec<bool> {
    let (mut flags, mut open) = (Vec::new(), None);
    for frame in frames {
        match (frame.opcode(), open) {
            (op @ (0x1 | 0x2), None) if frame.fin => flags.push(op == 0x1),
            (op @ (0x1 | 0x2), None) => open = Some(op == 0x1),
            (0x0, Some(text)) if frame.fin => {
                flags.push(text);
                open = None;
            }
            (0x0, Some(_)) | (0x8..=0xf, _) => {}
            // A rule broken: tungstenite stops here.
            _ => break,
        }
    }
    flags
}

/// `bytes` with the frame they end inside completed with zero bytes (a
/// header cut short first, a byte at a time until tungstenite can parse
/// it); as they are if that frame is over `limit` (refused from its header
/// by both readers).
fn completed(bytes: &[u8], limit: usize) -> Vec<u8> {
    let mut out = bytes.to_vec();
    loop {
        let frames = walk(&out);
        match frames.last().map_or(Some(0), Walked::end) {
            Some(end) if end < out.len() => out.push(0),
            Some(end) if end > out.len() => {
                if frames.last().is_some_and(|last| last.len <= limit as u64) {
                    out.resize(end, 0);
                }
                return out;
            }
            // Whole frames only, or a length past any limit.
            _ => return out,
        }
    }
}

/// Checks that our reader (fed `bytes` cut at `cuts`) and tungstenite agree
/// on `bytes`, as far as the module docs say.
fn agree(bytes: &[u8], cuts: &[Index], limit: usize) -> Result<(), TestCaseError> {
    let cuts: Vec<usize> = cuts.iter().map(|i| i.index(bytes.len() + 1)).collect();
    agree_at(bytes, &cuts, limit, true)
}

/// [`agree`] with the cuts as positions; `complete`: whether a refusal by
/// one reader only may be settled by completing the last frame.
fn agree_at(
    bytes: &[u8],
    cuts: &[usize],
    limit: usize,
    complete: bool,
) -> Result<(), TestCaseError> {
    let frames = walk(bytes);
    let (mut mine, read_whole) = ours(bytes, cuts, limit);
    let mut reference = tungstenite(&relabelled(bytes, &frames), limit);
    let mut flags = text_flags(&frames).into_iter();
    for event in &mut reference.events {
        if let Event::Data(text, _) = event {
            *text = flags.next().expect("a message the walk saw");
        }
    }
    if reference.end == End::NotUtf8 {
        // Relabelled, only a close reason can be text.
        reference.end = End::Refused(Broken::Protocol);
    }
    let one_refused = matches!(
        (mine.end, reference.end),
        (End::Refused(_), End::Waiting) | (End::Waiting, End::Refused(_))
    );
    if complete && one_refused && mine.events == reference.events {
        let whole = completed(bytes, limit);
        prop_assert!(whole.len() > bytes.len(), "{mine:?} {reference:?}");
        return agree_at(&whole, cuts, limit, false);
    }
    if let (End::Refused(a), End::Refused(b)) = (mine.end, reference.end) {
        if a != b {
            let frame = frames.get(read_whole).expect("the frame refused");
            let control = frame.opcode() & 0x8 != 0;
            let rule = frame.first & 0x70 != 0
                || frame.mask.is_none()
                || control && (!frame.fin || frame.len > 125);
            let unknown = matches!(frame.opcode(), 0x3..=0x7 | 0xb..=0xf);
            prop_assert!(frame.len > limit as u64, "{mine:?} {reference:?}");
            // The fault named: a rule broken, or else the size.
            let named = |rule: bool| [Broken::TooLarge, Broken::Protocol][usize::from(rule)];
            prop_assert_eq!((a, b), (named(rule), named(unknown)));
            mine.end = reference.end;
        }
    }
    prop_assert_eq!(&mine, &reference);
    let plain = tungstenite(bytes, limit);
    prop_assert!(mine.events.starts_with(&plain.events), "{plain:?}");
    let not_utf8 = |e: &Event| matches!(e, Event::Data(true, b) if std::str::from_utf8(b).is_err());
    if plain.end == End::NotUtf8 {
        let next = mine.events[plain.events.len()..]
            .iter()
            .find(|e| matches!(e, Event::Data(..)));
        prop_assert!(next.is_none_or(not_utf8), "{next:?}");
    } else {
        prop_assert_eq!(&plain, &mine);
    }
    if mine.events.iter().any(not_utf8) {
        prop_assert_eq!(plain.end, End::NotUtf8);
    }
    Ok(())
}

/// How a frame's length is written: the smallest form that fits, or the
/// 16-bit (126) or 64-bit (127) form even when a smaller one would do.
#[derive(Clone, Copy, Debug)]
enum Form {
    Minimal,
    Two,
    Eight,
}

/// A client frame: masked with `mask`, its length in `form`.
fn frame(fin: bool, opcode: u8, payload: &[u8], style: ([u8; 4], Form)) -> Vec<u8> {
    let mut out = header(u8::from(fin) << 7 | opcode, payload.len() as u64, style);
    out.extend(masked(payload, style.0));
    out
}

/// The header of a client frame of `length` bytes starting with `first`.
fn header(first: u8, length: u64, (mask, form): ([u8; 4], Form)) -> Vec<u8> {
    let mut out = vec![first];
    match form {
        Form::Minimal if length < 126 => out.push(0x80 | length as u8),
        Form::Minimal | Form::Two if length <= 0xffff => {
            out.push(0x80 | 0x7e);
            out.extend((length as u16).to_be_bytes());
        }
        _ => {
            out.push(0x80 | 0x7f);
            out.extend(length.to_be_bytes());
        }
    }
    out.extend(mask);
    out
}

/// `bytes` masked (or unmasked) with `mask`.
fn masked(bytes: &[u8], mask: [u8; 4]) -> Vec<u8> {
    bytes
        .iter()
        .enumerate()
        .map(|(i, b)| b ^ mask[i % 4])
        .collect()
}

fn style() -> impl Strategy<Value = ([u8; 4], Form)> {
    let form = prop_oneof![
        4 => Just(Form::Minimal),
        1 => Just(Form::Two),
        1 => Just(Form::Eight),
    ];
    (any::<[u8; 4]>(), form)
}

/// A payload: mostly short, sometimes past 125 (the 126 form), now and
/// then around 64 KiB (the 127 form, and [`TRANSPORT_LIMIT`] either side).
fn payload(text: bool) -> BoxedStrategy<Vec<u8>> {
    if text {
        prop_oneof![
            8 => utf8(0..40),
            2 => utf8(60..200),
            1 => (32_760usize..32_772).prop_map(|n| "é".repeat(n).into_bytes()),
        ]
        .boxed()
    } else {
        prop_oneof![
            8 => vec(any::<u8>(), 0..130),
            2 => vec(any::<u8>(), 126..400),
            1 => (any::<u8>(), 65_530usize..65_542).prop_map(|(b, n)| vec![b; n]),
        ]
        .boxed()
    }
}

/// A ping or a pong.
fn control() -> impl Strategy<Value = Vec<u8>> {
    let opcode = select(&[0x9, 0xA][..]);
    (opcode, vec(any::<u8>(), 0..=125), style())
        .prop_map(|(opcode, payload, style)| frame(true, opcode, &payload, style))
}

/// A whole message, text or binary, in fragments cut anywhere (inside a
/// character too), with pings and pongs between them.
fn message() -> impl Strategy<Value = Vec<u8>> {
    any::<bool>()
        .prop_flat_map(|text| (Just(text), payload(text)))
        .prop_flat_map(|(text, payload)| {
            let cuts = vec(any::<Index>(), 0..3);
            let between = vec((option::of(control()), style()), 4);
            (Just(text), Just(payload), cuts, between)
        })
        .prop_map(|(text, payload, cuts, between)| {
            let mut cuts: Vec<usize> = cuts.iter().map(|i| i.index(payload.len() + 1)).collect();
            cuts.sort_unstable();
            cuts.push(payload.len());
            let (mut out, mut from) = (Vec::new(), 0);
            for (i, &cut) in cuts.iter().enumerate() {
                let (control, style) = &between[i];
                let last = i + 1 == cuts.len();
                let opcode = match (i, text) {
                    (0, true) => 0x1,
                    (0, false) => 0x2,
                    _ => 0x0,
                };
                out.extend(frame(last, opcode, &payload[from..cut], *style));
                if !last {
                    out.extend(control.iter().flatten());
                }
                from = cut;
            }
            out
        })
}

/// A close frame a client may send: bare, or a status allowed and a reason.
fn close() -> impl Strategy<Value = Vec<u8>> {
    const STATUSES: [u16; 16] = [
        1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 3999, 4000,
        4999,
    ];
    let body = option::of((select(&STATUSES[..]), utf8(0..30)));
    (body, style()).prop_map(|(body, style)| {
        let body = body.map_or_else(Vec::new, |(s, reason)| {
            [&s.to_be_bytes()[..], &reason].concat()
        });
        frame(true, 0x8, &body, style)
    })
}

/// Valid client frames: messages and control frames, maybe a close.
fn valid() -> impl Strategy<Value = Vec<u8>> {
    let item = prop_oneof![3 => message(), 1 => control()];
    (vec(item, 1..6), option::of(close())).prop_map(|(mut items, close)| {
        items.extend(close);
        items.concat()
    })
}

/// The limit on frames and messages: the server's, or a small one.
fn limit() -> impl Strategy<Value = usize> {
    prop_oneof![Just(TRANSPORT_LIMIT), 100usize..600]
}

/// UTF-8 of `chars` characters of any kind.
fn utf8(chars: std::ops::Range<usize>) -> impl Strategy<Value = Vec<u8>> {
    vec(any::<char>(), chars).prop_map(|c| String::from_iter(c).into_bytes())
}

/// Every close status: ours allows exactly what tungstenite does, and 1014
/// (Bad Gateway, registered with IANA), which tungstenite does not.
#[test]
fn status_1014_is_the_one_close_status_we_allow_and_tungstenite_does_not() {
    for status in 0..=u16::MAX {
        let ours = close_status(&status.to_be_bytes()).is_ok();
        let theirs = CloseCode::from(status).is_allowed();
        assert_eq!(ours, theirs || status == 1014, "{status}");
    }
    assert!(!CloseCode::from(1014).is_allowed());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn on_any_bytes_both_readers_agree(
        bytes in vec(any::<u8>(), 0..600),
        cuts in vec(any::<Index>(), 0..6),
        limit in limit(),
    ) {
        agree(&bytes, &cuts, limit)?;
    }

    #[test]
    fn on_valid_client_frames_both_readers_agree(
        bytes in valid(),
        cuts in vec(any::<Index>(), 0..6),
        limit in limit(),
    ) {
        agree(&bytes, &cuts, limit)?;
    }

    #[test]
    fn on_valid_frames_mutated_both_readers_agree(
        bytes in valid(),
        flips in vec((any::<Index>(), 0u8..8), 0..4),
        cut_short in option::of(any::<Index>()),
        cuts in vec(any::<Index>(), 0..6),
        limit in limit(),
    ) {
        let mut bytes = bytes;
        for (at, bit) in &flips {
            let at = at.index(bytes.len());
            bytes[at] ^= 1 << bit;
        }
        if let Some(at) = cut_short {
            bytes.truncate(at.index(bytes.len() + 1));
        }
        agree(&bytes, &cuts, limit)?;
    }

    /// Any length in any of the three forms (minimal or not, with the
    /// 64-bit form's top bit set, around the limit), with as many bytes
    /// behind it or not, then maybe a valid message.
    #[test]
    fn on_any_length_in_any_form_both_readers_agree(
        first in prop_oneof![
            any::<u8>(),
            (any::<bool>(), 0u8..16).prop_map(|(fin, opcode)| u8::from(fin) << 7 | opcode),
        ],
        unmasked in proptest::bool::weighted(0.1),
        length in prop_oneof![
            0u64..70_000,
            any::<u64>(),
            (0u64..70_000).prop_map(|n| n | 1 << 63),
            (0u64..70_000).prop_map(|n| n | 1 << 32),
        ],
        style in style(),
        whole in any::<bool>(),
        rest in vec(any::<u8>(), 0..40),
        after in option::of(message()),
        cuts in vec(any::<Index>(), 0..6),
        limit in limit(),
    ) {
        let mut bytes = header(first, length, style);
        if unmasked {
            bytes[1] &= 0x7f;
            bytes.truncate(bytes.len() - 4);
        }
        match usize::try_from(length) {
            Ok(n) if whole && n <= 70_000 => bytes.resize(bytes.len() + n, 0x5a),
            _ => bytes.extend(rest),
        }
        bytes.extend(after.into_iter().flatten());
        agree(&bytes, &cuts, limit)?;
    }

    #[test]
    fn on_any_close_frame_both_readers_agree(
        before in vec(message(), 0..3),
        status in prop_oneof![any::<u16>(), 990u16..1020],
        reason in prop_oneof![utf8(0..30), vec(any::<u8>(), 0..30)],
        bare in prop_oneof![Just(None), Just(Some(0usize)), Just(Some(1))],
        style in style(),
        cuts in vec(any::<Index>(), 0..6),
    ) {
        let body = match bare {
            Some(n) => status.to_be_bytes()[..n].to_vec(),
            None => [&status.to_be_bytes()[..], &reason].concat(),
        };
        let mut bytes: Vec<u8> = before.into_iter().flatten().collect();
        bytes.extend(frame(true, 0x8, &body, style));
        agree(&bytes, &cuts, TRANSPORT_LIMIT)?;
    }
}
