//! What the examples that draw a breaker's states share.

use breakerbox::State;
use plotters::prelude::*;

/// A state's band behind a timeline: green closed, amber half-open, red open.
pub fn state_color(state: State) -> RGBColor {
    match state {
        State::Closed => RGBColor(200, 235, 200),
        State::HalfOpen => RGBColor(255, 225, 160),
        _ => RGBColor(245, 190, 190),
    }
}

/// Draws the legend of a chart's series in its upper right corner.
pub fn draw_legend<'a, DB, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    DB: DrawingBackend + 'a,
    X: Ranged,
    Y: Ranged,
{
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
}
