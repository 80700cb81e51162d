//! Drawing a [`View`] on a 2D canvas: arena, obstacles, players with HP
//! bars, ghost outlines of the authoritative and predicted poses, tracers.
//!
//! The arena is scaled to fit the canvas and centred (the shell's `Fit`);
//! nothing here decides
//! anything, it only draws what core computed.

use skirmish_core::{PlayerId, Vec2, View};
use skirmish_tanks::{Pose, SimConfig, Tanks};
use web_sys::CanvasRenderingContext2d;

use skirmish_client::{Fit, Overlays};

const OWN: &str = "#4fc3f7";
const REMOTE: &str = "#ffb74d";
const DEAD: &str = "#666";

/// Draws one frame.
pub fn draw(
    ctx: &CanvasRenderingContext2d,
    width: f64,
    height: f64,
    sim: &SimConfig,
    view: &View<Tanks>,
    name_of: &dyn Fn(PlayerId) -> String,
    overlays: Overlays,
) {
    ctx.set_fill_style_str("#101418");
    ctx.fill_rect(0.0, 0.0, width, height);
    let fit = Fit::new(sim.arena, width, height);
    let (x0, y0) = fit.point(Vec2::ZERO);
    let (x1, y1) = fit.point(sim.arena);
    ctx.set_fill_style_str("#1b2128");
    ctx.fill_rect(x0, y0, x1 - x0, y1 - y0);
    ctx.set_stroke_style_str("#3a4450");
    ctx.set_line_width(2.0);
    ctx.stroke_rect(x0, y0, x1 - x0, y1 - y0);
    ctx.set_fill_style_str("#3a4450");
    for rect in &sim.obstacles {
        let (ax, ay) = fit.point(rect.min);
        let (bx, by) = fit.point(rect.max);
        ctx.fill_rect(ax, ay, bx - ax, by - ay);
    }

    for tracer in &view.effects {
        let (ax, ay) = fit.point(tracer.from);
        let (bx, by) = fit.point(tracer.to);
        ctx.set_stroke_style_str(&format!(
            "rgba(255, 241, 118, {})",
            skirmish_client::num::fixed(f64::from(tracer.fade), 3)
        ));
        ctx.set_line_width(2.0);
        ctx.begin_path();
        ctx.move_to(ax, ay);
        ctx.line_to(bx, by);
        ctx.stroke();
    }

    let radius = f64::from(sim.player_radius) * fit.scale;
    for remote in &view.remotes {
        let colour = if remote.alive { REMOTE } else { DEAD };
        player(ctx, &fit, &remote.visual, radius, colour);
        label(
            ctx,
            &fit,
            &remote.visual,
            radius,
            &name_of(remote.id),
            remote.state.hp,
        );
    }
    if let Some(own) = &view.own {
        if overlays.ghosts {
            if let Some(authoritative) = &own.authoritative {
                outline(ctx, &fit, authoritative, radius, "rgba(239, 83, 80, 0.9)");
            }
            outline(
                ctx,
                &fit,
                &own.predicted,
                radius,
                "rgba(129, 199, 132, 0.9)",
            );
        }
        let colour = if own.alive { OWN } else { DEAD };
        player(ctx, &fit, &own.visible, radius, colour);
        label(
            ctx,
            &fit,
            &own.visible,
            radius,
            &name_of(own.id),
            own.state.hp,
        );
        if !own.alive {
            ctx.set_fill_style_str("#eee");
            ctx.set_font("bold 28px system-ui, sans-serif");
            ctx.set_text_align("center");
            let _ = ctx.fill_text("You were hit. Respawning…", width / 2.0, height / 2.0);
        }
    }
}

/// A line from the centre along the heading; the canvas does the rotation,
/// so no trigonometry happens outside core.
fn heading(ctx: &CanvasRenderingContext2d, x: f64, y: f64, rotation: f32, length: f64) {
    ctx.save();
    let _ = ctx.translate(x, y);
    let _ = ctx.rotate(f64::from(rotation));
    ctx.move_to(0.0, 0.0);
    ctx.line_to(length, 0.0);
    ctx.restore();
}

fn player(ctx: &CanvasRenderingContext2d, fit: &Fit, pose: &Pose, radius: f64, colour: &str) {
    let (x, y) = fit.point(pose.position);
    ctx.set_fill_style_str(colour);
    ctx.begin_path();
    let _ = ctx.arc(x, y, radius, 0.0, std::f64::consts::TAU);
    ctx.fill();
    ctx.set_stroke_style_str(colour);
    ctx.set_line_width(3.0);
    ctx.begin_path();
    heading(ctx, x, y, pose.rotation, radius * 1.6);
    ctx.stroke();
}

fn outline(ctx: &CanvasRenderingContext2d, fit: &Fit, pose: &Pose, radius: f64, colour: &str) {
    let (x, y) = fit.point(pose.position);
    ctx.set_stroke_style_str(colour);
    ctx.set_line_width(1.5);
    ctx.begin_path();
    let _ = ctx.arc(x, y, radius, 0.0, std::f64::consts::TAU);
    ctx.stroke();
    ctx.begin_path();
    heading(ctx, x, y, pose.rotation, radius);
    ctx.stroke();
}

fn label(ctx: &CanvasRenderingContext2d, fit: &Fit, pose: &Pose, radius: f64, name: &str, hp: u16) {
    let (x, y) = fit.point(pose.position);
    let width = radius * 2.4;
    let top = y - radius - 12.0;
    ctx.set_fill_style_str("#333");
    ctx.fill_rect(x - width / 2.0, top, width, 5.0);
    ctx.set_fill_style_str(if hp > 40 { "#66bb6a" } else { "#ef5350" });
    ctx.fill_rect(
        x - width / 2.0,
        top,
        width * f64::from(hp.min(100)) / 100.0,
        5.0,
    );
    ctx.set_fill_style_str("#ddd");
    ctx.set_font("12px system-ui, sans-serif");
    ctx.set_text_align("center");
    let _ = ctx.fill_text(name, x, top - 4.0);
}
