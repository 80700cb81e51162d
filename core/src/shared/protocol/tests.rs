//! The rules of names and of what errors quote back: names that hide,
//! reverse or show nothing are refused, player and room names alike, and
//! an error quotes at most a short prefix of what a client sent.

use serde_json::json;

use super::*;
use crate::shared::simple::Ticked;

type Wire = Ticked<(i8, i8)>;

/// The error a text `hello` with `name` and `room` gets, if any.
fn hello(name: &str, room: Option<&str>) -> Result<(), ProtocolError> {
    let mut hello = json!({"type": "hello", "name": name, "protocol": PROTOCOL_VERSION});
    if let Some(room) = room {
        hello["room"] = json!(room);
    }
    decode_client::<Wire>(&hello.to_string()).map(|_| ())
}

/// Names a reader cannot take at face value: only zero-width or blank
/// characters, a bidi override before "admin", isolates, a byte order mark,
/// a joiner, a tag.
const HIDING: &[&str] = &[
    "\u{200B}\u{200B}\u{200B}",
    "\u{202E}admin",
    "ana\u{202D}",
    "\u{2066}ana\u{2069}",
    "\u{2067}ana",
    "\u{FEFF}ana",
    "an\u{200D}a",
    "an\u{200E}a",
    "\u{00AD}",
    "ana\u{061C}",
    "ana\u{180E}",
    "ana\u{2028}bob",
    "ana\u{E0041}",
    "\u{2060}",
    "   ",
    "\u{3000}",
    "\u{3164}\u{3164}",
    "\u{2800}",
    "",
];

#[test]
fn names_that_hide_reverse_or_show_nothing_are_refused() {
    for name in HIDING {
        let e = hello(name, None).expect_err(name);
        assert_eq!(e.code, ErrorCode::BadName, "{name:?}: {e}");
        let e = hello("ana", Some(name)).expect_err(name);
        assert_eq!(e.code, ErrorCode::BadName, "room {name:?}: {e}");
        assert_eq!(
            check_room_name(name).map_err(|e| e.code),
            Err(ErrorCode::BadName),
            "{name:?}"
        );
    }
    let e = hello("\u{202E}nimda", None).unwrap_err();
    assert!(e.message.contains("U+202E"), "{}", e.message);
    let e = hello("\u{200B}", None).unwrap_err();
    assert!(e.message.starts_with("name must"), "{}", e.message);
    let e = hello("\u{3164}", None).unwrap_err();
    assert!(e.message.contains("visible"), "{}", e.message);
}

#[test]
fn names_in_any_script_with_spaces_and_symbols_are_seated() {
    for name in [
        "ana",
        "ana bob",
        " ana",
        "Zoë",
        "李小龙",
        "Ωmega-7",
        "🙂",
        "a\u{0301}",
    ] {
        assert_eq!(hello(name, None), Ok(()), "{name:?}");
        assert_eq!(hello("ana", Some(name)), Ok(()), "room {name:?}");
    }
    assert_eq!(hello(&"a".repeat(MAX_NAME_CHARS), None), Ok(()));
    let long = hello(&"a".repeat(MAX_NAME_CHARS + 1), None);
    assert_eq!(long.map_err(|e| e.code), Err(ErrorCode::BadName));
}

#[test]
fn an_echo_is_a_short_prefix_with_hidden_characters_shown() {
    assert_eq!(echo("dots"), "dots");
    assert_eq!(echo(&"x".repeat(ECHO_CHARS)), "x".repeat(ECHO_CHARS));
    assert_eq!(
        echo(&"x".repeat(7_900)),
        format!("{}…", "x".repeat(ECHO_CHARS))
    );
    assert_eq!(echo("\u{202E}nimda\n"), "\\u{202e}nimda\\u{a}");
}

/// What was sent, far longer than an error may quote: `what` repeated.
fn long(what: &str) -> String {
    what.repeat(7_900 / what.len())
}

/// The error for `message` quotes no more than a short prefix of it.
fn quotes_little(message: &serde_json::Value) -> ProtocolError {
    let text = message.to_string();
    let e = decode_client::<Wire>(&text).expect_err("refused");
    assert!(
        e.message.chars().count() <= PARSER_MESSAGE_CHARS + 1,
        "{} characters: {}",
        e.message.len(),
        e.message
    );
    e
}

#[test]
fn a_parse_error_quotes_at_most_a_short_prefix_of_what_was_sent() {
    let e = quotes_little(&json!({"type": long("x")}));
    assert_eq!(e.code, ErrorCode::BadMessage);
    assert!(
        e.message
            .contains(&format!("`{}…`", "x".repeat(ECHO_CHARS))),
        "{}",
        e.message
    );
    assert!(e.message.contains("expected one of"), "{}", e.message);
    let e = quotes_little(&json!({"type": "hello", "name": "ana", "protocol": long("7")}));
    assert!(
        e.message
            .contains(&format!("\"{}…\"", "7".repeat(ECHO_CHARS))),
        "{}",
        e.message
    );
    // Quote marks inside what was sent cannot stretch what is quoted.
    quotes_little(&json!({"type": long("a`")}));
    quotes_little(&json!({"type": format!("a`{}", long("x"))}));
    let e =
        quotes_little(&json!({"type": "hello", "name": "ana", "protocol": "\"`".repeat(2_000)}));
    assert_eq!(e.code, ErrorCode::BadMessage, "{}", e.message);
    let e = quotes_little(&json!({"type": "ping", "id": "\\\"".repeat(1_500)}));
    assert_eq!(e.code, ErrorCode::BadMessage, "{}", e.message);
}
