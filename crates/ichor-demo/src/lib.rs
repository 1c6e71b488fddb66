//! The embedded demo cluster: an in-memory Kubernetes API that kubectl and kube-rs accept, a
//! simulated ichor controller that really carries operations out, and the demo data. Behind
//! `ichor-tui --demo` and `ichor-tui demo-cluster`; never part of the product's own modules.
//!
//! # The public pieces
//!
//! For `--demo` and `demo-cluster`:
//! - [`demo::DemoCluster`]: `start(speed)` seeds the demo data into a fresh
//!   [`apiserver::EmbeddedApi`] (its `api` field) and runs the simulated controller until it
//!   is dropped. [`demo::NAMESPACE`] is where the data lives.
//! - [`apiserver::EmbeddedApi::client`]: a `kube::Client` that authenticates with a token of
//!   [`apiserver::auth::users`].
//! - [`apiserver::server`]: `check_listen`, `write_kubeconfig` and `serve` put the API on a
//!   TCP listener for kubectl.
//!
//! For tests, besides those:
//! - [`apiserver::EmbeddedApi`]: `default()` (the demo users, no objects) and `seed` (store an
//!   object as it is). [`demo::seed`] stores the demo data in it.
//! - [`controller::Controller`]: `new(client, speed)` and `reconcile(now)`, one pass at a time.
//! - [`apiserver::auth`]: the demo [`users`](apiserver::auth::users) and their tokens, and
//!   [`Rule`](apiserver::auth::Rule) / [`Subject`](apiserver::auth::Subject) for extra RBAC.
//! - [`demo::HOSTILE_ENV`] and [`demo::OPERATIONS_ENV`]: the environment variables that add a
//!   hostile cluster and a long history to `DemoCluster::start` (end-to-end tests, benchmarks).
//!
//! # The `faults` feature
//!
//! Test instruments, off in the product (the root package's dev-dependency turns them on):
//! `EmbeddedApi::fail_next`, `fail_when` with a `FaultRule`, `before` (a hook between a read
//! and a write) and `conflict_next_writes` inject `Fault`s; `edit`, `remove` and `object`
//! change and read the store as another writer would; `write_log`, `writes_by` and
//! `clear_write_log` read the `WriteRecord`s of stored writes; `add_token` and `add_rule` add
//! users and rules at run time. Without the feature none of them exists, the request path has
//! no fault code, and no write log is kept.

pub mod apiserver;
pub mod controller;
pub mod demo;
