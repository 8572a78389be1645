//! The fleet's series: whether it reaches its store, what it refused to believe, and what it
//! could not read in time.

use std::fmt;

use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;

use super::BreakerCollector;

impl BreakerCollector {
    /// `circuitbreaker_fleet_degraded`: whether this instance's fleet lost its store,
    /// `circuitbreaker_fleet_refused_total`: what it refused to believe, and
    /// `circuitbreaker_fleet_messages_dropped_total`: what it could not read in time; for
    /// the collectors of a registry a fleet joined ([`FleetBuilder::join`](crate::fleet::FleetBuilder::join)).
    pub(super) fn encode_fleet(
        &self,
        encoder: &mut DescriptorEncoder<'_>,
    ) -> Result<(), fmt::Error> {
        let help = "Whether this instance's fleet lost its store (1) and breakers judge alone, \
                    or reaches it (0).";
        let mut family = encoder.encode_descriptor(
            "circuitbreaker_fleet_degraded",
            help,
            None,
            MetricType::Gauge,
        )?;
        let fleet = crate::fleet::Fleet::of(self.registry);
        if let Some(fleet) = &fleet {
            let labels = [("fleet_instance", fleet.instance())];
            let degraded = i64::from(fleet.is_degraded());
            ConstGauge::new(degraded).encode(family.encode_family(&labels)?)?;
        }
        let help = "What this instance's fleet refused to believe: messages it could not read \
                    or whose signature was wrong, rows of the store it skipped or found forged.";
        let mut family = encoder.encode_descriptor(
            "circuitbreaker_fleet_refused",
            help,
            None,
            MetricType::Counter,
        )?;
        if let Some(fleet) = &fleet {
            let health = fleet.health();
            for (what, count) in [
                ("messages_malformed", health.messages_malformed),
                ("messages_forged", health.messages_forged),
                ("rows_skipped", health.rows_skipped),
                ("rows_forged", health.rows_forged),
            ] {
                let labels = [("fleet_instance", fleet.instance()), ("what", what)];
                ConstCounter::new(count).encode(family.encode_family(&labels)?)?;
            }
        }
        let help = "Messages this instance's fleet dropped unread because more than its backlog \
                    waited; it read its view anew from the store instead.";
        let mut family = encoder.encode_descriptor(
            "circuitbreaker_fleet_messages_dropped",
            help,
            None,
            MetricType::Counter,
        )?;
        if let Some(fleet) = &fleet {
            let labels = [("fleet_instance", fleet.instance())];
            let dropped = fleet.health().messages_dropped;
            ConstCounter::new(dropped).encode(family.encode_family(&labels)?)?;
        }
        Ok(())
    }
}
