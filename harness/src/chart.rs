//! Line charts a reader can read, as plain SVG (no dependency): axes with
//! round-numbered ticks and grid lines, the zero line drawn and labelled,
//! event marks labelled where they happen, and a legend below the plot
//! whose entries are spaced by their own length. The quality report's
//! plots (`docs/quality/*.svg`) are drawn with it.

use std::fmt::Write as _;

/// One line: its name, colour and points of (seconds, value).
pub type Line = (&'static str, &'static str, Vec<(f64, f64)>);

const WIDTH: f64 = 760.0;
const HEIGHT: f64 = 320.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 34.0;
/// Below the plot: tick labels, the axis title and the legend.
const BELOW: f64 = 70.0;
/// About how wide a character of the 11 px font is, for the legend.
const CHAR: f64 = 6.5;

/// A round step (1, 2 or 5 times a power of ten) that cuts `span` into
/// about `parts` intervals.
fn nice_step(span: f64, parts: f64) -> f64 {
    let raw = (span / parts).max(1e-9);
    let power = 10f64.powf(raw.log10().floor());
    let unit = raw / power;
    let nice = if unit <= 1.0 {
        1.0
    } else if unit <= 2.0 {
        2.0
    } else if unit <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * power
}

/// `v` with as many decimals as a tick step of `step` needs.
fn label(v: f64, step: f64) -> String {
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10().floor()) as usize
    };
    let v = if v.abs() < step * 1e-6 { 0.0 } else { v };
    format!("{v:.decimals$}")
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The ticks from `lo` to `hi` (both multiples of `step`).
fn ticks(lo: f64, hi: f64, step: f64) -> impl Iterator<Item = f64> {
    let n = ((hi - lo) / step).round() as i64;
    (0..=n).map(move |i| lo + step * i as f64)
}

/// A chart of `lines` over time, its y axis in `unit`, with labelled
/// dashed marks at the given seconds.
pub fn chart(title: &str, unit: &str, lines: &[Line], marks: &[(f64, &str)]) -> String {
    let points = lines
        .iter()
        .flat_map(|l| l.2.iter())
        .filter(|p| p.1.is_finite());
    let (mut t0, mut t1, mut lo, mut hi) = (f64::MAX, f64::MIN, 0.0_f64, f64::MIN);
    for &(t, v) in points {
        t0 = t0.min(t);
        t1 = t1.max(t);
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if t1 < t0 {
        (t0, t1) = (0.0, 1.0);
    }
    if t1 <= t0 {
        t1 = t0 + 1.0;
    }
    if hi <= lo {
        hi = lo + 1.0;
    }
    let y_step = nice_step(hi - lo, 5.0);
    let (lo, hi) = (
        (lo / y_step).floor() * y_step,
        (hi / y_step).ceil() * y_step,
    );
    let t_step = nice_step(t1 - t0, 8.0);
    let (right, bottom) = (WIDTH - RIGHT, HEIGHT - BELOW);
    let x = |t: f64| LEFT + (t - t0) / (t1 - t0) * (right - LEFT);
    let y = |v: f64| bottom - (v - lo) / (hi - lo) * (bottom - TOP);

    let mut out = String::new();
    let _ = writeln!(
        out,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" font-family="sans-serif" font-size="11"><rect width="100%" height="100%" fill="#fff"/><text x="{LEFT}" y="18" font-size="13">{}</text>"##,
        escape(title)
    );
    for v in ticks(lo, hi, y_step) {
        let zero = v.abs() < y_step * 1e-6;
        let (stroke, width) = if zero {
            ("#555", 1.2)
        } else {
            ("#e4e4e4", 1.0)
        };
        let _ = writeln!(
            out,
            r#"<line x1="{LEFT}" y1="{0:.1}" x2="{right}" y2="{0:.1}" stroke="{stroke}" stroke-width="{width}"/><text x="{1}" y="{2:.1}" text-anchor="end">{3} {unit}</text>"#,
            y(v),
            LEFT - 6.0,
            y(v) + 4.0,
            label(v, y_step)
        );
    }
    let first = (t0 / t_step).ceil() * t_step;
    let mut t = first;
    while t <= t1 + t_step * 1e-6 {
        let _ = writeln!(
            out,
            r##"<line x1="{0:.1}" y1="{bottom}" x2="{0:.1}" y2="{1}" stroke="#555"/><text x="{0:.1}" y="{2}" text-anchor="middle">{3}</text>"##,
            x(t),
            bottom + 5.0,
            bottom + 17.0,
            label(t, t_step)
        );
        t += t_step;
    }
    let _ = writeln!(
        out,
        r##"<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{bottom}" stroke="#555"/><line x1="{LEFT}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#555"/><text x="{0}" y="{1}" text-anchor="middle">time (s)</text>"##,
        f64::midpoint(LEFT, right),
        bottom + 32.0
    );
    for &(at, name) in marks {
        let _ = writeln!(
            out,
            r##"<line x1="{0:.1}" y1="{TOP}" x2="{0:.1}" y2="{bottom}" stroke="#888" stroke-dasharray="4 3"/><text x="{1:.1}" y="{2}" fill="#555">{3}</text>"##,
            x(at),
            x(at) + 4.0,
            TOP + 12.0,
            escape(name)
        );
    }
    let mut legend_x = LEFT;
    for (name, colour, points) in lines {
        let path: Vec<String> = points
            .iter()
            .filter(|p| p.1.is_finite())
            .map(|&(t, v)| format!("{:.1},{:.1}", x(t), y(v)))
            .collect();
        let _ = writeln!(
            out,
            r#"<polyline fill="none" stroke="{colour}" stroke-width="1.4" points="{}"/><rect x="{legend_x}" y="{1}" width="14" height="3" fill="{colour}"/><text x="{2}" y="{3}">{4}</text>"#,
            path.join(" "),
            HEIGHT - 14.0,
            legend_x + 19.0,
            HEIGHT - 9.0,
            escape(name)
        );
        legend_x += 19.0 + CHAR * name.chars().count() as f64 + 24.0;
    }
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_zero_is_labelled_and_the_legend_does_not_run_together() {
        let lines: Vec<Line> = vec![
            (
                "input-to-ack p50",
                "#1f77b4",
                vec![(0.0, 120.0), (45.0, 283.0)],
            ),
            ("slack p50", "#2ca02c", vec![(0.0, -12.0), (45.0, 60.0)]),
        ];
        let svg = chart(
            "RTT step",
            "ms",
            &lines,
            &[(15.0, "RTT up"), (30.0, "RTT down")],
        );
        for tick in [">-100 ms<", ">0 ms<", ">100 ms<", ">200 ms<", ">300 ms<"] {
            assert!(svg.contains(tick), "{tick} in {svg}");
        }
        for t in [">0<", ">10<", ">20<", ">40<"] {
            assert!(svg.contains(t), "time tick {t}");
        }
        assert!(svg.contains("time (s)"));
        assert!(svg.contains(">RTT up<") && svg.contains(">RTT down<"));
        assert_eq!(
            svg.matches("stroke=\"#555\" stroke-width=\"1.2\"").count(),
            1,
            "one zero line"
        );
        // The second legend entry starts after the first one's text ends.
        let first = svg.find(">input-to-ack p50<").expect("first entry");
        let second = svg.find(">slack p50<").expect("second entry");
        assert!(first < second);
        let x_of = |name: &str| -> f64 {
            let at = svg.find(&format!(">{name}<")).expect("entry");
            let start = svg[..at].rfind("<text x=\"").expect("its text") + 9;
            svg[start..]
                .split('"')
                .next()
                .and_then(|v| v.parse().ok())
                .expect("x")
        };
        let gap = x_of("slack p50") - x_of("input-to-ack p50");
        assert!(gap > CHAR * 16.0, "entries {gap} px apart");
    }

    #[test]
    fn small_steps_get_decimals_and_an_empty_chart_still_draws() {
        assert_eq!(nice_step(0.9, 5.0), 0.2);
        assert_eq!(label(0.4, 0.2), "0.4");
        assert_eq!(nice_step(370.0, 5.0), 100.0);
        let svg = chart("empty", "%", &[], &[]);
        assert!(svg.starts_with("<svg") && svg.contains(">0.0 %<"), "{svg}");
    }
}
