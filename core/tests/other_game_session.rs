//! The client session runs a game that is not the tank game: two
//! sessions of the dot game, one JSON and one binary all the way, play in
//! a room of dots in process. They are welcomed with the dot game's setup,
//! predict with its step, send its inputs at the ticks the server asks
//! for, take its own states and events, draw each other, and the binary
//! one's flight recording replays bit for bit as a dot recording (and is
//! refused as a tank one).

mod dots;

use std::time::Duration;

use skirmish_core::SessionEvent;
use skirmish_core::{replay_client_of, Phase, ReplayOptions};

use dots::*;

#[test]
fn two_dot_pages_play_in_a_room_of_dots_and_the_binary_one_replays() {
    let mut line = Pages::new(false);
    line.run(Duration::from_secs(2));
    for session in [&line.text, &line.binary] {
        assert_eq!(session.phase(), Phase::Playing);
        assert_eq!(session.setup(), Some(&dots::Line { length: 1000.0 }));
    }
    // Standing still: predicted exactly, acknowledged, no correction.
    let hud = line.binary.hud();
    assert!(hud.ack.is_some() && hud.pacing.scheduled, "{hud:?}");
    assert!(hud.pacing.input_to_ack.is_some());
    assert_eq!((hud.corrections, hud.snaps), (0, 0));
    let own = line.binary.view().own.expect("playing");
    assert_eq!(
        (own.id, own.predicted, own.visible),
        (BINARY, Dot(100.0), Dot(100.0))
    );
    let seen = line.text.view();
    assert_eq!(seen.remotes.len(), 1, "each draws the other");
    assert_eq!(
        (seen.remotes[0].id, seen.remotes[0].visual),
        (BINARY, Dot(100.0))
    );

    // Held right, the binary dot moves; the server, whose rule is a unit a
    // tick (the client predicts five), wins: its states correct the
    // prediction, and the other page draws the dot where the server says.
    line.binary.set_controls(Stick { by: 1, tap: false });
    line.run(Duration::from_secs(3));
    let truth = line.room.world().state_of(BINARY).expect("in the world").x;
    assert!(truth > 150.0, "moved: {truth}");
    assert!(line.binary.hud().corrections > 0, "the server's truth wins");
    let drawn = line.text.view().remotes[0].visual.0;
    assert!(drawn > 140.0 && drawn <= truth, "{drawn} of {truth}");
    assert!(line.binary.game().taps > 50, "every step's input seen");

    // Past the end of its line the server pushes it back: the event comes
    // to both, and means something to its owner only.
    line.run(Duration::from_secs(45));
    let pushed: Vec<_> = line
        .binary
        .events()
        .filter(|e| matches!(e, SessionEvent::Note(DotNote::Pushed(_))))
        .collect();
    assert_eq!(pushed, [SessionEvent::Note(DotNote::Pushed(0.0))]);
    assert!(!line
        .text
        .events()
        .any(|e| matches!(e, SessionEvent::Note(_))));
    assert_eq!(line.text.view().effects, 1, "the other page saw the push");
    assert_eq!(line.binary.hud().stats.events, 1);

    // The binary page's flight recording replays as a dot recording, bit
    // for bit, and a tank replay refuses it by name.
    let recording = line.binary.recording().expect("recorded").bytes().to_vec();
    let replayed = replay_client_of::<Dots>(&recording, ReplayOptions::default()).expect("replays");
    assert!(replayed.summary.frames > 4_000, "{:?}", replayed.summary);
    let tanks = skirmish_core::GameId {
        name: "tanks".into(),
        version: 2,
        shape: None,
    };
    let refused = skirmish_core::Reader::open(&recording, skirmish_core::Kind::Client, &tanks)
        .map(|_| ())
        .expect_err("not a tank recording")
        .to_string();
    assert!(refused.contains("dots 1"), "{refused}");
}

/// An event of the world's (a push of dot 0: the line's own) reaches a
/// page's game once, however often it arrives, and changes no dot.
#[test]
fn a_world_event_is_told_once_and_changes_no_ones_state() {
    let mut line = Pages::new(false);
    line.run(Duration::from_secs(1));
    let before = line.text.game().pushes_seen;
    let dots: Vec<_> = line.text.authority().iter().copied().collect();
    let world = r#"{"type":"pushes","events":[{"tick":3,"dot":0,"to":0.0}]}"#;
    for _ in 0..3 {
        line.text
            .receive(skirmish_core::Incoming::Text(world), line.now);
    }
    assert_eq!(line.text.game().pushes_seen, before + 1, "told once");
    let after: Vec<_> = line.text.authority().iter().copied().collect();
    assert_eq!(after, dots, "no dot changed");
}
