//! Writes the trace of the recovery simulation's downstream, down from 20 s to 40 s, recorded
//! through the defaults: `docs/trace.csv` (or the path given), the trace the README tunes
//! with `breakerbox-tune`.

use std::error::Error;
use std::path::PathBuf;

use breaker_workspace::simulation::{classic, record, Scenario};

fn main() -> Result<(), Box<dyn Error>> {
    let path = std::env::args()
        .nth(1)
        .map_or_else(|| PathBuf::from("docs/trace.csv"), PathBuf::from);
    let recording = record(classic(), &Scenario::outage());
    recording.write_csv(&path)?;
    println!(
        "{} calls of the recovery simulation written to {}",
        recording.calls().len(),
        path.display()
    );
    Ok(())
}
