//! Replaying a recording of a game natively and checking it frame by frame
//! (a page's) or tick by tick (a room's, `--room`): what a `replay`
//! binary does for any game ([`replay`]); its `main` reads the game a
//! recording names ([`recorded_game`]) and calls [`replay`] with the
//! game it hosts of that name, or [`refuse`] for any other.
//!
//! With `--with-room ROOM` (the server's recording of the page's room),
//! also checks that every frame the page received was sent to it by that
//! room ([`crate::recordings::side_by_side`]).
//!
//! Exit status: 0 when every frame matches, 1 at the first difference (the
//! frame, the calls that led to it and both states are printed), 2 when a
//! file cannot be read as a recording of this build and game (the reason
//! is printed: for a changed byte, from format 6, the header or the chunk
//! that fails its checksum, at its byte; for another game, its name).
//!
//! A recording is untrusted input: a header outside the bounds a session
//! or room runs with (`docs/RECORDING.md`) is refused (2), no frame runs
//! more than `skirmish_core::MAX_STEPS_PER_FRAME` steps, and `--with-room`
//! holds a window of the room's frames, not all of them.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use skirmish_core::{replay_client_of, replay_room_of, ClientGame, FormatError, GameId, Kind};
use skirmish_core::{Mark, MarkKind};
use skirmish_core::{Reader, ReplayError, ReplayOptions, RoomEnd, RoomReplayError, ServerGame};

use crate::plot::timeline;
use crate::recordings::{read_parts, side_by_side};

/// Replays a Skirmish recording natively, bit for bit.
#[derive(Clone, Debug, Parser)]
#[command(about)]
pub struct ReplayArgs {
    /// The recording (a room's first part with `--room`).
    pub file: PathBuf,
    /// A server room's recording (`skirmish-server --record DIR`).
    #[arg(long)]
    pub room: bool,
    /// Stop at this frame (from 1) and print the client's whole state.
    #[arg(long)]
    pub until: Option<u64>,
    /// Where the timeline goes (default: the file with `.svg`).
    #[arg(long)]
    pub svg: Option<PathBuf>,
    /// The server's recording of the client's room (its first part): after
    /// the replay, check that every frame the client received was sent to
    /// it, in order, by that room.
    #[arg(long, value_name = "ROOM", conflicts_with = "room")]
    pub with_room: Option<PathBuf>,
}

/// `println!` that ends quietly when stdout is closed (`| head`).
macro_rules! say {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}

fn visual<V: std::fmt::Debug>(v: Option<V>) -> String {
    v.map_or_else(|| "none".to_string(), |v| format!("{v:?}"))
}

fn rate(span: Duration, took: Duration) -> String {
    let x = span.as_secs_f64() / took.as_secs_f64().max(1e-9);
    format!(
        "{:.1} s in {:.0} ms, {x:.0}x real time",
        span.as_secs_f64(),
        took.as_secs_f64() * 1000.0
    )
}

/// One line of what the timeline marks: how many of each, the largest
/// correction's frame and the snaps' frames (for `--until`).
fn marked(marks: &[Mark]) -> String {
    let total = |f: fn(&MarkKind) -> u64| marks.iter().map(|m| f(&m.kind)).sum::<u64>();
    let corrections = total(|k| u64::from(matches!(k, MarkKind::Correction { .. })));
    let largest = marks
        .iter()
        .filter_map(|m| match m.kind {
            MarkKind::Correction { error, .. } => Some((error, m.frame)),
            _ => None,
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map_or_else(String::new, |(e, f)| {
            format!(" (largest {e:.2} at frame {f})")
        });
    let snaps: Vec<String> = marks
        .iter()
        .filter(|m| matches!(m.kind, MarkKind::Snaps(_)))
        .take(8)
        .map(|m| m.frame.to_string())
        .collect();
    let count =
        |f: fn(&MarkKind) -> Option<u64>| marks.iter().filter_map(|m| f(&m.kind)).sum::<u64>();
    format!(
        "marked: {corrections} corrections{largest}, snaps at frames [{}], {} late and {} repeated inputs, {} resends, {} snapshots missing; the SVG names each mark's frame",
        snaps.join(", "),
        count(|k| if let MarkKind::Late(n) = k { Some(*n) } else { None }),
        count(|k| if let MarkKind::Repeated(n) = k { Some(*n) } else { None }),
        count(|k| if let MarkKind::Resends(n) = k { Some(*n) } else { None }),
        count(|k| if let MarkKind::Lost(n) = k { Some(*n) } else { None }),
    )
}

fn client<G: ServerGame + ClientGame>(args: &ReplayArgs, bytes: &[u8]) -> ExitCode {
    let options = ReplayOptions {
        until: args.until,
        ..ReplayOptions::default()
    };
    let started = Instant::now();
    match replay_client_of::<G>(bytes, options) {
        Ok(replay) => {
            let took = started.elapsed();
            let s = &replay.summary;
            if let Some(state) = &replay.state_at_until {
                say!("the client's whole state at frame {}:\n{state}", s.frames);
            } else if args.until.is_some() {
                say!("the recording ends at frame {}, before --until", s.frames);
            }
            say!(
                "{}: {} frames match ({})",
                args.file.display(),
                s.frames,
                rate(s.span, took)
            );
            let rtt = s.rtt.map_or_else(
                || "none".to_string(),
                |(p50, max)| format!("p50 {} ms, max {} ms", p50.as_millis(), max.as_millis()),
            );
            say!(
                "frames {}, frames received {}, corrections {} (largest {:.2} units), snaps {}, \
                 late inputs {}, dilation {:+.1} to {:+.1} %, RTT {rtt}, disconnections {}, \
                 steps {} (at most {} in a frame)",
                s.frames,
                s.received,
                s.corrections,
                s.largest_correction,
                s.snaps,
                s.late_inputs,
                s.dilation_pct.0,
                s.dilation_pct.1,
                s.disconnections,
                s.steps,
                s.most_steps
            );
            let svg = args
                .svg
                .clone()
                .unwrap_or_else(|| args.file.with_extension("svg"));
            let title = format!("{} ({} frames)", args.file.display(), s.frames);
            say!("{}", marked(&replay.marks));
            match std::fs::write(&svg, timeline(&title, &replay.samples, &replay.marks)) {
                Ok(()) => say!("timeline: {}", svg.display()),
                Err(e) => eprintln!("cannot write the timeline {}: {e}", svg.display()),
            }
            match &args.with_room {
                Some(room) => beside::<G>(bytes, room),
                None => ExitCode::SUCCESS,
            }
        }
        Err(ReplayError::Diverged(d)) => {
            say!(
                "frame {} (at {:.3} s of the shell's clock) differs from the recording",
                d.frame,
                d.now.as_secs_f64()
            );
            say!("the calls since the frame before it:");
            for call in &d.calls {
                say!("  {call}");
            }
            say!(
                "recorded: hash {:016x}, own predicted visual {}",
                d.recorded.0,
                visual(d.recorded.1)
            );
            say!(
                "replayed: hash {:016x}, own predicted visual {}",
                d.replayed.0,
                visual(d.replayed.1)
            );
            say!("the replayed client's whole state:\n{}", d.state);
            ExitCode::from(1)
        }
        Err(ReplayError::Format(e)) => {
            eprintln!("cannot replay {}: {e}", args.file.display());
            ExitCode::from(2)
        }
    }
}

/// `--with-room`: the client's frames against what its room sent it.
fn beside<G: ServerGame + ClientGame>(client: &[u8], room: &Path) -> ExitCode {
    let room_bytes = match read_parts(room) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("cannot read {}: {e:#}", room.display());
            return ExitCode::from(2);
        }
    };
    // The room's own verdict first: a room that does not replay is a
    // difference (1) or an unreadable file (2), as with `--room`.
    match replay_room_of::<G>(&room_bytes, |_, _| {}) {
        Ok(_) => {}
        Err(RoomReplayError::Diverged(d)) => {
            say!(
                "{}: tick {} differs from the recording (replay it with --room for the details)",
                room.display(),
                d.tick
            );
            return ExitCode::from(1);
        }
        Err(RoomReplayError::Format(e)) => {
            eprintln!("cannot replay {}: {e}", room.display());
            return ExitCode::from(2);
        }
    }
    let s = match side_by_side::<G>(client, &room_bytes) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("cannot set {} beside the client: {e:#}", room.display());
            return ExitCode::from(2);
        }
    };
    let counts = format!(
        "{} connection(s) checked, {} elsewhere; {} frames received, {} sent, {} matched; {} error frames from the session itself and {} frames after the room's recording ended not compared",
        s.connections, s.elsewhere, s.received, s.sent, s.matched, s.errors, s.past_the_end
    );
    match &s.first_unmatched {
        None => {
            say!("side by side with {}: every frame {:?} received was sent to it by the room ({counts})", room.display(), s.name);
            ExitCode::SUCCESS
        }
        Some((at, head)) => {
            say!("side by side with {}: a frame {:?} received (byte {at}: {head}) was never sent to it by the room ({counts})", room.display(), s.name);
            ExitCode::from(1)
        }
    }
}

fn room<G: ServerGame>(args: &ReplayArgs, bytes: &[u8]) -> ExitCode {
    let started = Instant::now();
    match replay_room_of::<G>(bytes, |_, _| {}) {
        Ok(s) => {
            let took = started.elapsed();
            let span = Duration::from_millis(50 * s.ticks);
            say!(
                "{}: room {:?}, {} ticks match ({} at 50 ms ticks)",
                args.file.display(),
                s.name,
                s.ticks,
                rate(span, took)
            );
            say!(
                "joins {}, leaves {}, messages {}, most players {}, frames sent {} ({} bytes), combat events {}",
                s.joins, s.leaves, s.messages, s.most_players, s.frames_sent, s.bytes_sent, s.events
            );
            match (&s.ended, s.cut_at) {
                (Some(RoomEnd::Emptied), _) => say!("ended: the room closed after being empty"),
                (Some(RoomEnd::ShutDown), _) => say!("ended: the server shut down"),
                (Some(RoomEnd::Failed(why)), _) => {
                    say!("ended: a tick failed and the room was closed: {why}");
                }
                (None, Some(at)) => say!(
                    "cut short: the file stops inside the chunk (a record, before format 6) \
                     at byte {at} (a crash or a kill); replayed up to tick {}, the last whole one",
                    s.ticks
                ),
                (None, None) => say!(
                    "no end record: the room was still open or its recording stopped early \
                     (a budget)"
                ),
            }
            ExitCode::SUCCESS
        }
        Err(RoomReplayError::Diverged(d)) => {
            say!("tick {} differs from the recording", d.tick);
            say!("the calls since the tick before it:");
            for call in &d.calls {
                say!("  {call}");
            }
            say!("recorded: hash {:016x}", d.recorded);
            say!("replayed: hash {:016x}", d.replayed);
            say!("the replayed world:\n{}", d.state);
            ExitCode::from(1)
        }
        Err(RoomReplayError::Format(e)) => {
            eprintln!("cannot replay {}: {e}", args.file.display());
            ExitCode::from(2)
        }
    }
}

/// Replays the recording `args` names as one of game `G` (a page's, or a
/// room's with `--room`) and prints what it found; the exit status (0
/// every frame matched, 1 a difference, 2 unreadable or another game's,
/// refused by its name).
pub fn replay<G: ServerGame + ClientGame>(args: &ReplayArgs) -> ExitCode {
    let bytes = if args.room {
        read_parts(&args.file)
    } else {
        std::fs::read(&args.file).map_err(anyhow::Error::from)
    };
    let bytes = match bytes {
        Ok(b) => b,
        Err(e) => {
            eprintln!("cannot read {}: {e:#}", args.file.display());
            return ExitCode::from(2);
        }
    };
    if args.room {
        room::<G>(args, &bytes)
    } else {
        client::<G>(args, &bytes)
    }
}

/// The game the recording at `path` names in its header (a room's first
/// part is enough); when the file cannot be read as a recording of this
/// build, the reason is printed and the exit status (2) is the error.
///
/// # Errors
/// The file cannot be read, is not a recording, is of another format or
/// protocol, or its header is damaged.
pub fn recorded_game(path: &Path) -> Result<GameId, ExitCode> {
    let bytes = std::fs::read(path).map_err(|e| {
        eprintln!("cannot read {}: {e}", path.display());
        ExitCode::from(2)
    })?;
    header_game(&bytes).map_err(|e| {
        eprintln!("cannot replay {}: {e}", path.display());
        ExitCode::from(2)
    })
}

/// The game a recording's header names. The reader checks the header
/// (its checksum, the format and protocol) before the game, and names
/// the game it found when it is not the one asked for: asked for a game
/// no recording has (no name), it names the recording's.
fn header_game(bytes: &[u8]) -> Result<GameId, FormatError> {
    let none = GameId {
        name: String::new(),
        version: 0,
        shape: None,
    };
    match Reader::open(bytes, Kind::Client, &none) {
        Err(FormatError::Game { found, .. }) => Ok(found),
        Err(e) => Err(e),
        Ok((header, _)) => Ok(header.game),
    }
}

/// Refuses the recording `args` names, a recording of `found`, by its
/// name: this replayer hosts only the games named in `hosted`. The exit
/// status (2).
pub fn refuse(args: &ReplayArgs, found: &GameId, hosted: &[&str]) -> ExitCode {
    eprintln!(
        "cannot replay {}: a recording of {found}; this replayer hosts {}",
        args.file.display(),
        hosted.join(", ")
    );
    ExitCode::from(2)
}
