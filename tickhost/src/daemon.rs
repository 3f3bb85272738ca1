//! The per-user daemon: instances, routing, latest state, watch deliveries.
