//! Browser tests of the tank game's page, run in headless Chromium by
//! `wasm-pack test --headless --chrome games/tanks/page`.
#![cfg(target_arch = "wasm32")]

use std::time::Duration;

use skirmish_client::{Fit, Overlays};
use skirmish_core::{
    control, ClientMessage, CorrectionOutcome, Encoding, PlayerId, ServerMessage, Tick, Vec2,
};
use skirmish_core::{ClientSession, Incoming, SessionConfig, SessionEvent, View};
use skirmish_tanks::determinism::{golden_trajectory_hash, GOLDEN_TRAJECTORY_HASH};
use skirmish_tanks::{compact, Controls, PlayerState, Pose, SimConfig, Tanks};
use skirmish_tanks_page::input::Keys;
use skirmish_tanks_page::render::draw;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
fn golden_trajectory_hash_matches_in_browser() {
    assert_eq!(golden_trajectory_hash(), GOLDEN_TRAJECTORY_HASH);
}

#[wasm_bindgen_test]
fn keys_map_to_controls_in_the_browser() {
    let mut keys = Keys::default();
    keys.set("KeyW", true);
    keys.set("KeyA", true);
    assert_eq!(
        keys.take_controls(),
        Controls {
            turn: -1.0,
            throttle: 1.0,
            fire: false
        }
    );
}

fn canvas(width: u32, height: u32) -> (HtmlCanvasElement, CanvasRenderingContext2d) {
    let document = web_sys::window()
        .and_then(|w| w.document())
        .expect("a document");
    let canvas: HtmlCanvasElement = document
        .create_element("canvas")
        .expect("canvas element")
        .dyn_into()
        .expect("a canvas");
    canvas.set_width(width);
    canvas.set_height(height);
    let ctx = canvas
        .get_context("2d")
        .expect("context call")
        .expect("a 2D context")
        .dyn_into()
        .expect("a 2D context");
    (canvas, ctx)
}

fn pixel(ctx: &CanvasRenderingContext2d, x: f64, y: f64) -> [u8; 4] {
    let data = ctx
        .get_image_data(x as i32, y as i32, 1, 1)
        .expect("image data")
        .data();
    [data[0], data[1], data[2], data[3]]
}

/// A snapshot of `state` alone, as the page gets it: a compact frame.
fn snapshot(state: &PlayerState) -> Vec<u8> {
    compact::encode(state.tick, state, &[*state], &SimConfig::default())
}

/// A session that joined and got its first snapshot at `pose`, speaking
/// binary all the way as the page does (the page builds without JSON).
fn joined_session(pose: Pose) -> ClientSession<Tanks> {
    let mut session = ClientSession::new(SessionConfig {
        encoding: Encoding::Compact,
        ..SessionConfig::default()
    });
    let welcome = control::encode_server(&ServerMessage::<skirmish_tanks::Tanks>::Welcome {
        player_id: PlayerId(1),
        protocol: 1,
        server_tick: Tick(1),
        tick_ms: 50,
        room: "test".into(),
        setup: skirmish_tanks::TankSetup {
            config: SimConfig::default(),
            combat: None,
        },
    })
    .expect("a binary welcome");
    session.receive(Incoming::Binary(&welcome), Duration::ZERO);
    let state = PlayerState {
        id: PlayerId(1),
        ..PlayerState::at(Tick(2), None, pose)
    };
    session.receive(Incoming::Binary(&snapshot(&state)), Duration::ZERO);
    session
}

#[wasm_bindgen_test]
fn drawing_puts_the_own_player_on_the_canvas() {
    let (_canvas, ctx) = canvas(1000, 600);
    let sim = SimConfig::default();
    let session = joined_session(Pose::new(Vec2::new(1000.0, 100.0), 0.0));
    let view = session.view();
    assert!(view.own.is_some(), "placed by the first snapshot");
    let name = |_| "me".to_string();
    draw(
        &ctx,
        1000.0,
        600.0,
        &sim,
        &view,
        &name,
        Overlays { ghosts: true },
    );
    // Arena 2000 x 1200 into 1000 x 600 with an 8 px margin: the player's
    // centre (1000, 100) lands near (500, 56) and is drawn in the own colour.
    let fit = Fit::new(sim.arena, 1000.0, 600.0);
    let (x, y) = fit.point(Vec2::new(1000.0, 100.0));
    assert_eq!(pixel(&ctx, x, y), [0x4f, 0xc3, 0xf7, 255]);
    // An empty view draws the arena only.
    draw(
        &ctx,
        1000.0,
        600.0,
        &sim,
        &View::default(),
        &name,
        Overlays { ghosts: true },
    );
    assert_ne!(pixel(&ctx, x, y), [0x4f, 0xc3, 0xf7, 255]);
}

#[wasm_bindgen_test]
fn a_client_session_predicts_and_reconciles_inside_wasm() {
    let start = Pose::new(Vec2::new(500.0, 600.0), 0.0);
    let mut session = joined_session(start);
    session.set_controls(Controls {
        turn: 0.0,
        throttle: 1.0,
        fire: false,
    });
    let mut sent = Vec::new();
    for frame in 1..=6 {
        sent.extend(session.advance(Duration::from_millis(50 * frame)));
    }
    let local = session.local().expect("joined");
    assert_eq!(local.pending().len(), 6);
    assert_eq!(local.predicted().position, Vec2::new(560.0, 600.0));
    let last_input = sent
        .iter()
        .rev()
        .find_map(|m| match m {
            ClientMessage::Input { inputs, .. } => Some(inputs.clone()),
            _ => None,
        })
        .expect("inputs sent");
    assert_eq!(last_input.len(), 6, "every unacknowledged input is resent");

    // The server applied 3 inputs but saw the player 2 u short.
    let state = PlayerState {
        id: PlayerId(1),
        ..PlayerState::at(
            Tick(5),
            Some(Tick(3)),
            Pose::new(Vec2::new(528.0, 600.0), 0.0),
        )
    };
    let now = session.now();
    session.receive(Incoming::Binary(&snapshot(&state)), now);
    let report = session
        .events()
        .find_map(|e| match e {
            SessionEvent::Reconciled {
                report,
                placed: false,
            } => Some(report),
            _ => None,
        })
        .expect("reconciled");
    assert_eq!((report.pruned, report.replayed), (3, 3));
    assert_eq!(report.outcome, CorrectionOutcome::Smoothed);
    let local = session.local().expect("joined");
    assert_eq!(local.predicted().position, Vec2::new(558.0, 600.0));
    assert_eq!(session.hud().corrections, 1);
}
