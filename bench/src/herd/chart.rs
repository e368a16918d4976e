//! [`log_log_chart`]: a line chart on log-log axes, drawn by `plotters` as a standalone SVG
//! document (the herd benchmark's `--plot`).
//!
//! What is ours is the look, chosen so that overlapping series stay readable: the
//! colour-blind-safe Okabe–Ito palette, solid and dashed lines alternating, circle markers
//! that shrink from the first series to the last (coinciding points show as rings), and the
//! legend beside the plot. The axes span whole decades around the data, with a labelled tick
//! at 1, 2 and 5 times each power of ten and a light grid line at every multiple.
//!
//! Invariants: points with a non-positive or non-finite coordinate cannot sit on a log axis
//! and are left out; a series keeps its legend entry even with no point left.

use plotters::coord::combinators::{BindKeyPoints, IntoLogRange, LogCoord, WithKeyPoints};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::error::Result;

/// One line of the chart.
#[derive(Debug, Clone)]
pub struct Series {
    /// Shown in the legend.
    pub name: String,
    /// `(x, y)` points, drawn in x order.
    pub points: Vec<(f64, f64)>,
}

const WIDTH: u32 = 860;
const HEIGHT: u32 = 540;
/// The legend's column, right of the plot.
const LEGEND: u32 = 235;
const FONT: &str = "sans-serif";

/// A font size in SVG pixels, as `plotters` takes it: its SVG backend writes every size
/// divided by 1.24 (its point-to-pixel guess), so that is undone here.
fn px(size: f64) -> f64 {
    size * 1.24
}

/// Colour-blind-safe palette (Okabe–Ito), then black.
const COLOURS: [RGBColor; 8] = [
    RGBColor(0x00, 0x72, 0xB2),
    RGBColor(0xD5, 0x5E, 0x00),
    RGBColor(0x00, 0x9E, 0x73),
    RGBColor(0xCC, 0x79, 0xA7),
    RGBColor(0xE6, 0x9F, 0x00),
    RGBColor(0x56, 0xB4, 0xE9),
    RGBColor(0x00, 0x00, 0x00),
    RGBColor(0xF0, 0xE4, 0x42),
];

/// A decade range `[10^lo, 10^hi]` covering every value, at least one decade wide; with
/// `pad`, a value on a power of ten gets the decade below it too, so that it does not sit on
/// the axis.
fn decades(values: impl Iterator<Item = f64>, pad: bool) -> (i32, i32) {
    let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values {
        min = min.min(v);
        max = max.max(v);
    }
    if !min.is_finite() || !max.is_finite() {
        return (0, 1);
    }
    // Without padding, a hair of slack keeps an exact power of ten inside its own decade.
    let slack = if pad { -0.05 } else { 1e-9 };
    let lo = (min.log10() + slack).floor() as i32;
    let mut hi = (max.log10() - 1e-9).ceil() as i32;
    if hi <= lo {
        hi = lo + 1;
    }
    (lo, hi)
}

/// `mantissa × 10^exp`, with as many decimals as it needs and no more.
fn tick_label(exp: i32, mantissa: u32) -> String {
    let v = f64::from(mantissa) * 10f64.powi(exp);
    if exp >= 0 {
        format!("{v:.0}")
    } else {
        let digits = usize::try_from(-exp).unwrap_or(0);
        format!("{v:.digits$}")
    }
}

/// The label of a tick at `v` (a multiple of a power of ten).
fn label_of(v: f64) -> String {
    let exp = (v.log10() + 1e-9).floor() as i32;
    let mantissa = (v / 10f64.powi(exp)).round() as u32;
    tick_label(exp, mantissa)
}

/// A log axis over `[10^lo, 10^hi]`: bold (labelled) key points at 1, 2 and 5 per decade,
/// light ones at every multiple.
fn axis(lo: i32, hi: i32) -> WithKeyPoints<LogCoord<f64>> {
    let multiples = |keep: fn(u32) -> bool| {
        (lo..=hi)
            .flat_map(move |exp| (1..=9u32).filter(move |&m| keep(m)).map(move |m| (exp, m)))
            .filter(move |&(exp, m)| exp < hi || m == 1)
            .map(|(exp, m)| f64::from(m) * 10f64.powi(exp))
            .collect::<Vec<_>>()
    };
    (10f64.powi(lo)..10f64.powi(hi))
        .log_scale()
        .with_key_points(multiples(|m| matches!(m, 1 | 2 | 5)))
        .with_light_points(multiples(|_| true))
}

/// Renders the chart as a standalone SVG document.
///
/// # Errors
/// [`Error::Plot`](super::Error::Plot) if `plotters` fails to draw into its in-memory document.
pub fn log_log_chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
) -> Result<String> {
    let mut svg = String::new();
    draw(&mut svg, title, x_label, y_label, series)?;
    Ok(svg)
}

fn draw(
    svg: &mut String,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
) -> Result<()> {
    let valid = |&(x, y): &(f64, f64)| x > 0.0 && y > 0.0 && x.is_finite() && y.is_finite();
    let lines: Vec<Vec<(f64, f64)>> = series
        .iter()
        .map(|s| {
            let mut points: Vec<(f64, f64)> = s.points.iter().copied().filter(valid).collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            points
        })
        .collect();
    let (x_lo, x_hi) = decades(lines.iter().flatten().map(|p| p.0), false);
    let (y_lo, y_hi) = decades(lines.iter().flatten().map(|p| p.1), true);

    let root = SVGBackend::with_string(svg, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    let (plot_area, legend_area) = root.split_horizontally(WIDTH - LEGEND);
    let mut chart = ChartBuilder::on(&plot_area)
        .caption(title, (FONT, px(18.0)).into_font().style(FontStyle::Bold))
        .margin(12)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d(axis(x_lo, x_hi), axis(y_lo, y_hi))?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .axis_desc_style((FONT, px(14.0)))
        .label_style((FONT, px(12.0)))
        .bold_line_style(RGBColor(0xbb, 0xbb, 0xbb))
        .light_line_style(RGBColor(0xee, 0xee, 0xee))
        .x_label_formatter(&|v| label_of(*v))
        .y_label_formatter(&|v| label_of(*v))
        .draw()?;
    // The mesh draws the left and bottom axes only; the frame closes the plot.
    let (x_ends, y_ends) = (
        10f64.powi(x_lo)..10f64.powi(x_hi),
        10f64.powi(y_lo)..10f64.powi(y_hi),
    );
    chart.draw_series([Rectangle::new(
        [(x_ends.start, y_ends.start), (x_ends.end, y_ends.end)],
        BLACK.stroke_width(1),
    )])?;

    for (i, (s, points)) in series.iter().zip(&lines).enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let line = colour.stroke_width(2);
        // Earlier series get larger markers, so that coinciding points show as rings.
        let radius = 3 + (6 * (series.len() - 1 - i)) as u32 / 5;
        if i % 2 == 1 {
            chart.draw_series(DashedLineSeries::new(points.clone(), 7, 4, line))?;
        } else {
            chart.draw_series(LineSeries::new(points.clone(), line))?;
        }
        chart.draw_series(points.iter().flat_map(|&p| marker(p, radius, colour)))?;

        let (lx, ly) = (12, 60 + 24 * i as i32);
        let ends = [(lx, ly), (lx + 32, ly)];
        if i % 2 == 1 {
            legend_area.draw(&DashedPathElement::new(ends, 7, 4, line))?;
        } else {
            legend_area.draw(&PathElement::new(ends, line))?;
        }
        for element in marker((lx + 16, ly), radius, colour) {
            legend_area.draw(&element)?;
        }
        let text = (FONT, px(13.0))
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Left, VPos::Center));
        legend_area.draw(&Text::new(s.name.as_str(), (lx + 40, ly), text))?;
    }
    root.present()?;
    Ok(())
}

/// A filled circle with a thin white ring, so that a marker stands out from the lines.
fn marker<C: Copy>(at: C, radius: u32, colour: RGBColor) -> [Circle<C, u32>; 2] {
    [
        Circle::new(at, radius, colour.filled()),
        Circle::new(at, radius, WHITE.stroke_width(1)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decades_cover_the_data() {
        assert_eq!(decades([2.0, 1000.0].into_iter(), false), (0, 3));
        assert_eq!(decades([1.0].into_iter(), false), (0, 1));
        assert_eq!(decades([1.0, 50.0].into_iter(), true), (-1, 2));
        assert_eq!(decades([0.5, 3.0].into_iter(), false), (-1, 1));
        assert_eq!(tick_label(-1, 5), "0.5");
        assert_eq!(tick_label(2, 1), "100");
        assert_eq!(label_of(0.2), "0.2");
        assert_eq!(label_of(500.0), "500");
        assert_eq!(label_of(1000.0), "1000");
    }

    #[test]
    fn chart_is_a_document_with_every_series() {
        let svg = log_log_chart(
            "t&t",
            "x",
            "y",
            &[
                Series {
                    name: "a<b".into(),
                    points: vec![(2.0, 1.0), (10.0, 5.0), (0.0, 3.0)],
                },
                Series {
                    name: "c".into(),
                    points: vec![(2.0, 1.0)],
                },
            ],
        )
        .unwrap();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        // Names are escaped, and each series has its legend entry.
        // Text is escaped, and each series has its legend entry (plotters puts every text on
        // a line of its own).
        let lines: Vec<&str> = svg.lines().collect();
        for text in ["t&amp;t", "a&lt;b", "c", "x", "y"] {
            assert!(lines.contains(&text), "{text}");
        }
        // Two valid points of the first series, one of the second: three markers, and one
        // in each legend entry, each a disc and a ring.
        assert_eq!(svg.matches("<circle").count(), 2 * (3 + 2));
    }
}
