//! The ichor resources, the embedded Kubernetes API, the simulated controller and the demo data.

pub mod apiserver;
pub mod controller;
pub mod demo;
pub mod resources;
