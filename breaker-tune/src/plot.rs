//! The picture: the trace's failure rate, its outages and slow stretches, over the states of
//! the defaults' breaker and of the recommended one, with a legend below the charts.

use std::error::Error;
use std::path::Path;

use breakerbox::State;
use plotters::prelude::*;

use super::replay::Run;
use super::report::plural;
use super::Tuning;

const CLOSED: RGBColor = RGBColor(200, 235, 200);
const HALF_OPEN: RGBColor = RGBColor(255, 225, 160);
const OPEN: RGBColor = RGBColor(245, 190, 190);
const OUTAGE: RGBColor = RGBColor(120, 0, 0);
const SLOW: RGBColor = RGBColor(110, 60, 170);

/// A state's band behind the timeline.
fn state_color(state: State) -> RGBColor {
    match state {
        State::Closed => CLOSED,
        State::HalfOpen => HALF_OPEN,
        _ => OPEN,
    }
}

/// The states of a run as `[from, to)` bands.
fn bands(run: &Run, end: f64) -> Vec<(f64, f64, State)> {
    let mut bands = Vec::new();
    let mut from = (0.0, State::Closed);
    for &(at, state) in &run.transitions {
        bands.push((from.0, at.as_secs_f64(), from.1));
        from = (at.as_secs_f64(), state);
    }
    bands.push((from.0, end, from.1));
    bands
}

/// Draws `t` as an SVG file at `path`.
pub fn plot(path: &Path, t: &Tuning) -> Result<(), Box<dyn Error>> {
    let root = SVGBackend::new(path, (960, 700)).into_drawing_area();
    root.fill(&WHITE)?;
    let (charts, legend) = root.split_vertically(650);
    let end = t.health.end.as_secs_f64().max(1.0);
    let panels = charts.split_evenly((2, 1));
    let runs = [
        ("current", t.current.clone(), t.current_scores),
        ("recommended", t.recommendation()?, t.recommended_scores()),
    ];
    for (area, (title, spec, scores)) in panels.iter().zip(runs) {
        let run = t.replay(&spec);
        let mut chart = ChartBuilder::on(area)
            .caption(
                format!(
                    "{title}: {} into outages, {} rejected while healthy, {}",
                    plural(scores.sent_into_outage, "call", "calls"),
                    plural(scores.healthy_rejected, "call", "calls"),
                    plural(scores.flaps, "flap", "flaps")
                ),
                ("sans-serif", 18),
            )
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(50)
            .build_cartesian_2d(0f64..end, 0f64..1.15)?;
        chart
            .configure_mesh()
            .x_desc("seconds")
            .y_desc("failure rate")
            .disable_mesh()
            .draw()?;
        chart.draw_series(bands(&run, end).into_iter().map(|(from, to, s)| {
            Rectangle::new([(from, 0.0), (to, 1.04)], state_color(s).filled())
        }))?;
        // The failure rate of each bucket where calls ran, as a step; none where none ran.
        let bucket = t.health.bucket.as_secs_f64();
        chart.draw_series(t.health.buckets.iter().filter_map(|b| {
            let (x, rate) = (t.health.start_of(b).as_secs_f64(), b.failure_rate()?);
            Some(PathElement::new(
                [(x, rate), (x + bucket, rate)],
                BLACK.stroke_width(2),
            ))
        }))?;
        chart.draw_series(t.health.outages.iter().map(|o| {
            let (from, to) = (o.start.as_secs_f64(), o.end.as_secs_f64());
            Rectangle::new([(from, 1.06), (to, 1.09)], OUTAGE.filled())
        }))?;
        chart.draw_series(t.health.slow.iter().map(|o| {
            let (from, to) = (o.start.as_secs_f64(), o.end.as_secs_f64());
            Rectangle::new([(from, 1.11), (to, 1.14)], SLOW.filled())
        }))?;
    }
    draw_legend(&legend)?;
    root.present()?;
    Ok(())
}

/// The legend, in its own strip below the charts, so it hides no data.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
) -> Result<(), Box<dyn Error>>
where
    DB::ErrorType: 'static,
{
    let style = ("sans-serif", 14).into_font().color(&BLACK);
    let entries: [(&str, RGBColor, bool); 6] = [
        ("closed", CLOSED, true),
        ("half-open", HALF_OPEN, true),
        ("open", OPEN, true),
        ("failure rate of the calls that ran", BLACK, false),
        ("outage (estimated)", OUTAGE, true),
        ("slow stretch", SLOW, true),
    ];
    let mut x = 20;
    for (label, color, filled) in entries {
        let y = 20;
        if filled {
            area.draw(&Rectangle::new(
                [(x, y - 6), (x + 20, y + 6)],
                color.filled(),
            ))?;
        } else {
            area.draw(&PathElement::new(
                [(x, y), (x + 20, y)],
                color.stroke_width(2),
            ))?;
        }
        area.draw(&Text::new(label, (x + 26, y - 7), style.clone()))?;
        x += 26 + 8 * label.len() as i32 + 18;
    }
    Ok(())
}
