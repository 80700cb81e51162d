//! The development panel: HUD numbers, netcode toggles, network sliders and
//! a rolling graph of correction size and RTT over the last 10 s.
//!
//! Every element is looked up by id in `web/index.html`; a missing element
//! is simply not used, so the client also runs on a bare page (as in the
//! browser tests).

use std::collections::VecDeque;
use std::fmt::Write as _;

use skirmish_core::LinkConditions;
use skirmish_core::{Hud, Toggles};
use wasm_bindgen::JsCast;
use web_sys::{
    CanvasRenderingContext2d, Document, HtmlCanvasElement, HtmlElement, HtmlInputElement,
};

use crate::net::link::Counters;
use crate::num::{fixed, signed};

/// How much history the graph shows, in milliseconds.
const GRAPH_SPAN_MS: f64 = 10_000.0;

/// One sample: time in ms, correction size in units, RTT in ms, input
/// slack in ms, dilation in %.
type Sample = (f64, f32, f32, f32, f32);

/// One line of the graph: its colour, its value, and the values at the
/// bottom and the top.
type Line = (&'static str, fn(&Sample) -> f32, f32, f32);

/// Samples of (time in ms, correction size in units, RTT in ms, slack in
/// ms, dilation in %).
#[derive(Clone, Debug, Default)]
pub struct Graph {
    samples: VecDeque<Sample>,
}

impl Graph {
    /// Adds a sample at `now` and forgets those older than 10 s.
    pub fn push(&mut self, now: f64, correction: f32, rtt_ms: f32, slack_ms: f32, dilation: f32) {
        self.samples
            .push_back((now, correction, rtt_ms, slack_ms, dilation));
        while self
            .samples
            .front()
            .is_some_and(|s| now - s.0 > GRAPH_SPAN_MS)
        {
            self.samples.pop_front();
        }
    }

    /// How many samples are kept.
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// Whether no sample is kept.
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// Draws the series, each scaled to its own maximum (dilation to
    /// ±10 % around the middle).
    fn draw(&self, ctx: &CanvasRenderingContext2d, width: f64, height: f64, now: f64) {
        ctx.set_fill_style_str("#0c0f12");
        ctx.fill_rect(0.0, 0.0, width, height);
        let max_c = self.samples.iter().map(|s| s.1).fold(1.0_f32, f32::max);
        let max_r = self.samples.iter().map(|s| s.2).fold(50.0_f32, f32::max);
        let max_s = self
            .samples
            .iter()
            .map(|s| s.3.abs())
            .fold(20.0_f32, f32::max);
        let series: [Line; 4] = [
            ("#ef5350", |s| s.1, 0.0, max_c),
            ("#4fc3f7", |s| s.2, 0.0, max_r),
            ("#81c784", |s| s.3, 0.0, max_s),
            ("#ffd54f", |s| s.4, -10.0, 10.0),
        ];
        for (colour, value, lo, hi) in series {
            ctx.set_stroke_style_str(colour);
            ctx.set_line_width(1.5);
            ctx.begin_path();
            for (i, s) in self.samples.iter().enumerate() {
                let x = width - (now - s.0) / GRAPH_SPAN_MS * width;
                let v = skirmish_core::clamp((value(s) - lo) / (hi - lo), 0.0, 1.0);
                let y = height - 2.0 - f64::from(v) * (height - 4.0);
                if i == 0 {
                    ctx.move_to(x, y);
                } else {
                    ctx.line_to(x, y);
                }
            }
            ctx.stroke();
        }
        ctx.set_fill_style_str("#aaa");
        ctx.set_font("11px system-ui, sans-serif");
        ctx.set_text_align("left");
        let (max_c, max_r, max_s) = (
            fixed(f64::from(max_c), 1),
            fixed(f64::from(max_r), 0),
            fixed(f64::from(max_s), 0),
        );
        let _ = ctx.fill_text(&format!("correction (max {max_c} u)"), 4.0, 12.0);
        let _ = ctx.fill_text(&format!("RTT (max {max_r} ms)"), 4.0, 25.0);
        let _ = ctx.fill_text(&format!("input slack (max {max_s} ms)"), 4.0, 38.0);
        let _ = ctx.fill_text("dilation (-10 to +10 %)", 4.0, 51.0);
    }
}

/// The panel's elements.
pub struct Panel {
    document: Document,
    hud: Option<HtmlElement>,
    status: Option<HtmlElement>,
    graph: Option<(HtmlCanvasElement, CanvasRenderingContext2d)>,
    /// The graph's data.
    pub samples: Graph,
}

fn input(document: &Document, id: &str) -> Option<HtmlInputElement> {
    document.get_element_by_id(id)?.dyn_into().ok()
}

impl Panel {
    /// Finds the panel's elements in `document`.
    pub fn new(document: Document) -> Panel {
        let element = |id: &str| {
            document
                .get_element_by_id(id)
                .and_then(|e| e.dyn_into::<HtmlElement>().ok())
        };
        let graph = document
            .get_element_by_id("graph")
            .and_then(|e| e.dyn_into::<HtmlCanvasElement>().ok())
            .and_then(|canvas| {
                let ctx = canvas.get_context("2d").ok()??.dyn_into().ok()?;
                Some((canvas, ctx))
            });
        Panel {
            hud: element("hud"),
            status: element("status"),
            graph,
            samples: Graph::default(),
            document,
        }
    }

    fn checked(&self, id: &str, default: bool) -> bool {
        input(&self.document, id).map_or(default, |i| i.checked())
    }

    fn number(&self, id: &str) -> f32 {
        input(&self.document, id)
            .map(|i| i.value_as_number())
            .filter(|v| v.is_finite())
            .map_or(0.0, |v| v as f32)
    }

    /// The toggles as the checkboxes say, and whether to draw ghosts.
    pub fn toggles(&self) -> (Toggles, bool) {
        (
            Toggles {
                prediction: self.checked("toggle-prediction", true),
                reconciliation: self.checked("toggle-reconciliation", true),
                smoothing: self.checked("toggle-smoothing", true),
                interpolation: self.checked("toggle-interpolation", true),
            },
            self.checked("toggle-ghosts", true),
        )
    }

    /// The added network conditions as the sliders say (up, down).
    pub fn conditions(&self) -> (LinkConditions, LinkConditions) {
        let link = |dir: &str| LinkConditions {
            latency_ms: self.number(&format!("{dir}-latency")),
            jitter_ms: self.number(&format!("{dir}-jitter")),
            loss: self.number(&format!("{dir}-loss")) / 100.0,
            duplicate: 0.0,
        };
        (link("up"), link("down"))
    }

    /// Shows the connection status line.
    pub fn set_status(&self, text: &str) {
        if let Some(status) = &self.status {
            if status.text_content().as_deref() != Some(text) {
                status.set_text_content(Some(text));
            }
        }
    }

    /// Writes the HUD numbers (with what the connection `lost`) and
    /// redraws the graph.
    pub fn show(&mut self, hud: &Hud, game_line: &str, lost: &Counters, fps: f64, now: f64) {
        let rtt_ms = hud.rtt.map_or(0.0, |d| d.as_secs_f32() * 1000.0);
        let slack = hud.pacing.slack_ms.unwrap_or(0.0) as f32;
        let dilation = hud.pacing.dilation_pct as f32;
        self.samples
            .push(now, hud.visible_error, rtt_ms, slack, dilation);
        if let Some(element) = &self.hud {
            element.set_text_content(Some(&hud_text(hud, game_line, lost, fps)));
        }
        if let Some((canvas, ctx)) = &self.graph {
            self.samples.draw(
                ctx,
                f64::from(canvas.width()),
                f64::from(canvas.height()),
                now,
            );
        }
    }
}

/// The HUD as text lines: the game's own line first (a tank's hit
/// points), then the netcode's numbers; what the connection `lost` shows
/// only once it lost something.
pub fn hud_text(hud: &Hud, game_line: &str, lost: &Counters, fps: f64) -> String {
    let mut out = String::new();
    if !game_line.is_empty() {
        let _ = writeln!(out, "{game_line}");
    }
    let rtt = hud.rtt.map_or_else(
        || "-".to_string(),
        |d| format!("{} ms", fixed(d.as_secs_f64() * 1000.0, 0)),
    );
    if hud.added_rtt > std::time::Duration::ZERO {
        // The conditioner's share apart: the base network is the rest.
        let added = fixed(hud.added_rtt.as_secs_f64() * 1000.0, 0);
        let _ = writeln!(out, "RTT {rtt} ({added} ms added by the conditioner)");
    } else {
        let _ = writeln!(out, "RTT {rtt}");
    }
    let tick = hud
        .server_tick
        .map_or_else(|| "-".to_string(), |t| fixed(t, 1));
    let _ = writeln!(out, "server tick {tick}");
    let _ = writeln!(out, "pending inputs {}", hud.pending);
    let _ = writeln!(
        out,
        "remote delay {} ms",
        fixed(hud.interpolation_delay.as_secs_f64() * 1000.0, 0)
    );
    let ms = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{} ms", fixed(v, 0)));
    let p = &hud.pacing;
    if p.scheduled {
        let _ = writeln!(
            out,
            "input slack {}  target {}\ndilation {} %",
            ms(p.slack_ms),
            ms(p.target_slack_ms),
            signed(p.dilation_pct, 1)
        );
        let _ = writeln!(
            out,
            "late {}  repeated {}  resyncs {}",
            p.late, p.repeated, p.resyncs
        );
    }
    let _ = writeln!(
        out,
        "last rewind {}",
        ms(p.last_rewind.map(|d| d.as_secs_f64() * 1000.0))
    );
    let _ = writeln!(
        out,
        "last correction {} u",
        fixed(f64::from(hud.last_correction), 2)
    );
    let _ = writeln!(
        out,
        "corrections {}  snaps {}  absorbed {}",
        hud.corrections, hud.snaps, hud.absorbed
    );
    let _ = writeln!(out, "lost up {}  down {}", hud.up.dropped, hud.down.dropped);
    let _ = writeln!(
        out,
        "bytes/s down {}  up {}",
        fixed(hud.down_rate, 0),
        fixed(hud.up_rate, 0)
    );
    if lost.any() {
        let _ = writeln!(
            out,
            "inbox dropped {}  bad datagrams {}\nfailed sends {}",
            lost.inbox_dropped, lost.undecodable, lost.failed_sends
        );
    }
    let _ = write!(out, "fps {}", fixed(fps, 0));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_graph_keeps_ten_seconds() {
        let mut g = Graph::default();
        for i in 0..1200 {
            g.push(f64::from(i) * 16.0, 1.0, 50.0, 30.0, 0.0);
        }
        // 10 s at one sample per 16 ms.
        assert_eq!(g.len(), 626);
    }

    #[test]
    fn hud_text_shows_authoritative_hp_and_counters() {
        let hud = Hud {
            alive: true,
            corrections: 3,
            snaps: 1,
            ..Hud::default()
        };
        let text = hud_text(&hud, "HP 80", &Counters::default(), 60.0);
        assert!(text.starts_with("HP 80\n"));
        assert!(text.contains("corrections 3  snaps 1"));
        assert!(!text.contains("input slack"), "protocol 1: no pacing lines");
        assert!(!text.contains("inbox dropped"), "nothing lost: no line");
    }

    #[test]
    fn hud_text_shows_what_the_connection_lost() {
        let lost = Counters {
            inbox_dropped: 4,
            undecodable: 1,
            failed_sends: 2,
        };
        let text = hud_text(&Hud::default(), "", &lost, 60.0);
        assert!(
            text.contains("inbox dropped 4  bad datagrams 1\nfailed sends 2\nfps 60"),
            "{text}"
        );
    }

    #[test]
    fn hud_text_shows_the_input_clock() {
        let hud = Hud {
            pacing: skirmish_core::PacingHud {
                scheduled: true,
                slack_ms: Some(42.4),
                target_slack_ms: Some(40.0),
                dilation_pct: -1.25,
                late: 2,
                repeated: 3,
                resyncs: 0,
                last_rewind: Some(std::time::Duration::from_millis(230)),
                input_to_ack: None,
                ..skirmish_core::PacingHud::default()
            },
            ..Hud::default()
        };
        let text = hud_text(&hud, "", &Counters::default(), 60.0);
        assert!(
            text.contains("input slack 42 ms  target 40 ms\ndilation -1.2 %"),
            "{text}"
        );
        assert!(text.contains("late 2  repeated 3  resyncs 0"), "{text}");
        assert!(text.contains("last rewind 230 ms"), "{text}");
    }
}
