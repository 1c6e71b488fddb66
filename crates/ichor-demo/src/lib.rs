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
//! - [`demo::ichor_ui`]: ichor-ui's Service, pod and Endpoints in `ichor-system`, which a
//!   client finds and port-forwards to as in a real cluster (`pods/portforward` over
//!   WebSocket, as kube-rs and kubectl speak it, and over SPDY/3.1). `forward_to` or
//!   `start(api, Some(addr))` say where the pod's `api` port (8080) leads; `restart`,
//!   `set_ready` and `remove` change the pod as a rollout, a failing probe or a deletion would.
//!   The same for any pod: [`apiserver::EmbeddedApi`]'s `set_forward`, `clear_forward`,
//!   `restart_pod`, `set_pod_ready` and `remove_pod`.
//!
//! Watches and Events, for clients that follow the cluster (kube-runtime's watcher and
//! reflector work against [`apiserver::EmbeddedApi::client`] as against kube-apiserver):
//! - every resource answers `?watch=true` (see the `apiserver::watch` module's documentation);
//!   [`apiserver::EmbeddedApi`]'s `watch_count` counts the open watches (apart from
//!   `request_count`, `request_count_of(user)` for one client's, and `requests_by()` by user,
//!   verb and resource, which a `demo-cluster` also answers at `GET /debug/ichor-demo/requests`),
//!   `set_bookmark_interval` and `set_history_limit` tune them, and `history_size` says what
//!   the change history holds.
//! - the controller records core Events (also served as `events.k8s.io/v1`), with the reasons
//!   of [`controller::reasons`] and the source [`controller::COMPONENT`]; users who may not
//!   read them: [`apiserver::auth::users::OPERATIONS_READER`].
//!
//! For tests, besides those:
//! - [`apiserver::EmbeddedApi`]: `default()` (the demo users, no objects) and `seed` (store an
//!   object as it is). [`demo::seed`] stores the demo data in it.
//! - [`controller::Controller`]: `new(client, speed)` and `reconcile(now)`, one pass at a time
//!   from lists; `run()` as the demo runs it, driven by its watches.
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
//! users and rules at run time; `compact` forgets the change history (a watch from an older
//! version is then 410 Gone) and `end_watches` ends every open watch (clients watch again). Without the feature none of them exists, the request path has
//! no fault code, and no write log is kept.

pub mod apiserver;
pub mod controller;
pub mod demo;
