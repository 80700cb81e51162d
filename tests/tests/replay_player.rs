//! A recording played frame by frame, as the replay viewer plays it
//! (`skirmish_core::Player`): to its end with every frame's hash matching,
//! the same frames and calls as the one-pass replay; a seek anywhere gives
//! the session that playing up to that frame gives, re-simulating at most
//! the checkpoint interval once the recording was played through; and a
//! changed byte stops it at the frame the one-pass replay names, while the
//! frames before stay reachable; every correction the replay counts is
//! marked on the timeline at its frame.

use std::path::PathBuf;
use std::time::Duration;

use skirmish_core::{
    reseal_recording, timeline_of, Call, Mark, MarkKind, Player, ReplayError, ReplayOptions,
};
use skirmish_tanks::{open_client, replay_client, Tanks};
use skirmish_tests::recordings::read_parts;

/// The page's recording under the conditioner (`tests/recordings/`).
fn browser() -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("recordings/browser.skrec");
    read_parts(&path).expect("the stored page recording reads")
}

/// The session and the frame's events after frame `frame`, played from
/// the start one frame at a time.
fn played_to(bytes: &[u8], frame: u64) -> String {
    let mut player = Player::<Tanks>::open(bytes).expect("opens");
    while player.frame() < frame {
        if player.step().expect("matches").is_none() {
            break;
        }
    }
    seen(&player)
}

/// What a viewer shows of a player: its session (every field's debug
/// form) and the last frame's events.
fn seen(player: &Player<'_, Tanks>) -> String {
    format!("{:?} {:?}", player.session(), player.events())
}

#[test]
fn a_recording_plays_frame_by_frame_to_its_end() {
    let bytes = browser();
    let whole = replay_client(&bytes, ReplayOptions::default()).expect("replays");
    let mut player = Player::<Tanks>::open(&bytes).expect("opens");
    let mut frames = 0;
    while let Some(played) = player.step().expect("every frame matches") {
        frames += 1;
        assert_eq!(played.frame, frames);
    }
    assert!(
        frames > 600,
        "a recording of more than a checkpoint: {frames}"
    );
    assert_eq!(frames, whole.summary.frames);
    assert_eq!(player.last_frame(), Some(frames));
    assert_eq!(
        player.calls(),
        (whole.summary.calls, whole.summary.received)
    );
    assert!(player.step().expect("the end stays the end").is_none());
}

#[test]
fn a_seek_anywhere_is_what_playing_up_to_it_gives() {
    let bytes = browser();
    let every = 100;
    let mut player = Player::<Tanks>::with_checkpoints(&bytes, every).expect("opens");
    // Through once: the checkpoints are laid as the frames are reached.
    let last = player.seek(u64::MAX).expect("plays through");
    assert_eq!(player.last_frame(), Some(last));
    for target in [
        last / 2,
        1,
        0,
        every,
        every + 1,
        last - 3,
        7,
        last,
        2 * every - 1,
    ] {
        let before = player.simulated();
        let reached = player.seek(target).expect("seeks");
        assert_eq!(reached, target);
        assert!(
            player.simulated() - before <= every,
            "a seek to {target} simulated {} frames",
            player.simulated() - before
        );
        // Compared whole (the debug form of every field), not printed.
        assert!(
            seen(&player) == played_to(&bytes, target),
            "the session at frame {target} differs from the one played to it"
        );
    }
    assert_eq!(player.seek(last + 50).expect("stops at the end"), last);
}

#[test]
fn a_changed_byte_stops_the_player_where_the_replay_names() {
    let bytes = browser();
    let (_, calls) = open_client(&bytes).expect("opens");
    let offsets: Vec<(usize, bool)> = calls
        .map(|c| {
            let (offset, call) = c.expect("reads");
            (offset, matches!(call, Call::Binary(..)))
        })
        .collect();
    // A received binary frame two thirds in, its last byte changed and
    // the checksums made right again: left to the replay to catch.
    let binaries: Vec<usize> = (0..offsets.len()).filter(|&i| offsets[i].1).collect();
    let k = binaries[binaries.len() * 2 / 3];
    let mut changed = bytes.clone();
    changed[offsets[k + 1].0 - 1] ^= 0x5a;
    reseal_recording(&mut changed).expect("reseals");
    let named = match replay_client(&changed, ReplayOptions::default()) {
        Err(ReplayError::Diverged(d)) => d.frame,
        other => panic!("the one-pass replay catches it: {other:?}"),
    };
    let mut player = Player::<Tanks>::with_checkpoints(&changed, 100).expect("opens");
    let stopped = loop {
        match player.step() {
            Ok(Some(_)) => {}
            Ok(None) => panic!("played to the end past a changed byte"),
            Err(ReplayError::Diverged(d)) => break d.frame,
            Err(other) => panic!("{other}"),
        }
    };
    assert_eq!(stopped, named, "the same frame");
    assert!(matches!(player.step(), Err(ReplayError::Diverged(_))));
    assert!(matches!(
        player.seek(named + 10),
        Err(ReplayError::Diverged(_))
    ));
    // The frames before it still play (the changed frame may already be
    // held, in the conditioner's queue, before it shows).
    assert_eq!(player.seek(named - 1).expect("before it"), named - 1);
    assert!(
        seen(&player) == played_to(&changed, named - 1),
        "the session before the changed frame differs from the one played to it"
    );
}

#[test]
fn every_correction_the_replay_counts_is_marked_at_its_frame() {
    let bytes = browser();
    let mut player = Player::<Tanks>::open(&bytes).expect("opens");
    let (timeline, stopped) = timeline_of(&mut player, Duration::from_millis(100));
    assert!(stopped.is_none(), "{stopped:?}");
    let corrections: Vec<&Mark> = timeline
        .marks
        .iter()
        .filter(|m| matches!(m.kind, MarkKind::Correction { .. }))
        .collect();
    assert!(corrections.len() >= 5, "{} corrections", corrections.len());
    assert_eq!(corrections.len() as u64, timeline.summary.corrections);
    // At its frame: the native replay stopped there counts the frame's
    // corrections, stopped a frame before does not.
    let counted = |frame: u64| {
        let until = ReplayOptions {
            until: Some(frame),
            ..ReplayOptions::default()
        };
        replay_client(&bytes, until)
            .expect("replays")
            .summary
            .corrections
    };
    for mark in corrections.iter().step_by(corrections.len() / 4).take(4) {
        let here = corrections.iter().filter(|m| m.frame == mark.frame).count() as u64;
        assert_eq!(
            counted(mark.frame) - counted(mark.frame - 1),
            here,
            "corrections at frame {}",
            mark.frame
        );
        let MarkKind::Correction { error, .. } = mark.kind else {
            unreachable!("filtered")
        };
        assert!(error > 0.0 && error <= timeline.summary.largest_correction);
    }
    let sum = |kind: fn(&MarkKind) -> Option<u64>| -> u64 {
        timeline.marks.iter().filter_map(|m| kind(&m.kind)).sum()
    };
    let late = sum(|k| {
        if let MarkKind::Late(n) = k {
            Some(*n)
        } else {
            None
        }
    });
    assert_eq!(late, timeline.summary.late_inputs);
    let snaps = sum(|k| {
        if let MarkKind::Snaps(n) = k {
            Some(*n)
        } else {
            None
        }
    });
    assert_eq!(snaps, timeline.summary.snaps);
    let lost = sum(|k| {
        if let MarkKind::Lost(n) = k {
            Some(*n)
        } else {
            None
        }
    });
    assert!(lost > 0, "the conditioner's 4 % loss shows");
    // The one-pass replay marks the same.
    let whole = replay_client(&bytes, ReplayOptions::default()).expect("replays");
    assert_eq!(whole.marks, timeline.marks);
    assert!(timeline.marks.windows(2).all(|w| w[0].frame <= w[1].frame));
}
