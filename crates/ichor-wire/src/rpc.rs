//! The API's calls, written once: [`with_rpcs!`] is the table, and every use is made from it —
//! [`Rpc`] here (paths, the labels of `serve`'s metrics, what writes, what streams), the
//! Connect protocol's routing in `serve` (`crates/ichor-server/src/connect.rs`), the handlers'
//! names, and the remote client's paths. A test reads the proto's descriptor set and fails when
//! the proto has a call the table lacks, or the table one the proto lacks; tonic's generated
//! traits make the handlers implement each one.

/// Calls the macro `$then!` with the table of the API's calls, in two groups:
///
/// ```text
/// unary { Service Method handler_fn (Request => Response) read|write, … }
/// streaming { Service Method handler_fn (Request => Response), … }
/// ```
///
/// `Service` is the service's name in `ichor.v1alpha1` (and tonic's trait of that name),
/// `Method` the method's, `handler_fn` the trait's function; the messages are named in
/// `ichor.v1alpha1` too. A new call of the proto is added here, then where the compiler and
/// the test of this module point (ARCHITECTURE.md, "Add an RPC").
#[macro_export]
macro_rules! with_rpcs {
    ($then:ident) => {
        $then! {
            unary {
                OperationService ListOperations list_operations (ListOperationsRequest => ListOperationsResponse) read,
                OperationService GetOperation get_operation (GetOperationRequest => GetOperationResponse) read,
                OperationService PlanOperation plan_operation (PlanOperationRequest => PlanOperationResponse) read,
                OperationService CreateOperation create_operation (CreateOperationRequest => CreateOperationResponse) write,
                OperationService SetOperationPaused set_operation_paused (SetOperationPausedRequest => SetOperationPausedResponse) write,
                OperationService DeleteOperation delete_operation (DeleteOperationRequest => DeleteOperationResponse) write,
                OperationService GetPermissions get_permissions (GetPermissionsRequest => GetPermissionsResponse) read,
                OperationService ListOperationEvents list_operation_events (ListOperationEventsRequest => ListOperationEventsResponse) read,
                ClusterService ListClusters list_clusters (ListClustersRequest => ListClustersResponse) read,
                ClusterService GetCluster get_cluster (GetClusterRequest => GetClusterResponse) read,
            }
            streaming {
                OperationService WatchOperations watch_operations (WatchOperationsRequest => WatchOperationsResponse),
            }
        }
    };
}

/// `true` for a call that writes.
macro_rules! writes {
    (read) => {
        false
    };
    (write) => {
        true
    };
}

/// [`Rpc`] from the table.
macro_rules! rpc_enum {
    (
        unary { $( $us:ident $um:ident $uf:ident ($ureq:ident => $uresp:ident) $effect:ident, )* }
        streaming { $( $ss:ident $sm:ident $sf:ident ($sreq:ident => $sresp:ident), )* }
    ) => {
        /// One call of the API (package `ichor.v1alpha1`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Rpc {
            $( $um, )*
            $( $sm, )*
        }

        impl Rpc {
            /// Every call, the unary ones first.
            pub const ALL: &'static [Rpc] = &[ $( Rpc::$um, )* $( Rpc::$sm, )* ];

            /// The service's full name (`ichor.v1alpha1.OperationService`).
            pub const fn service(self) -> &'static str {
                match self {
                    $( Rpc::$um => concat!("ichor.v1alpha1.", stringify!($us)), )*
                    $( Rpc::$sm => concat!("ichor.v1alpha1.", stringify!($ss)), )*
                }
            }

            /// The method's name (`ListOperations`).
            pub const fn method(self) -> &'static str {
                match self {
                    $( Rpc::$um => stringify!($um), )*
                    $( Rpc::$sm => stringify!($sm), )*
                }
            }

            /// The path it is called at, the same on Connect, gRPC and gRPC-Web
            /// (`/ichor.v1alpha1.OperationService/ListOperations`).
            pub const fn path(self) -> &'static str {
                match self {
                    $( Rpc::$um => concat!("/ichor.v1alpha1.", stringify!($us), "/", stringify!($um)), )*
                    $( Rpc::$sm => concat!("/ichor.v1alpha1.", stringify!($ss), "/", stringify!($sm)), )*
                }
            }

            /// The request message's full name (for the JSON mapping).
            pub const fn request(self) -> &'static str {
                match self {
                    $( Rpc::$um => concat!("ichor.v1alpha1.", stringify!($ureq)), )*
                    $( Rpc::$sm => concat!("ichor.v1alpha1.", stringify!($sreq)), )*
                }
            }

            /// The response message's full name.
            pub const fn response(self) -> &'static str {
                match self {
                    $( Rpc::$um => concat!("ichor.v1alpha1.", stringify!($uresp)), )*
                    $( Rpc::$sm => concat!("ichor.v1alpha1.", stringify!($sresp)), )*
                }
            }

            /// Whether the call writes (a start, a pause or resume, a delete).
            pub const fn writes(self) -> bool {
                match self {
                    $( Rpc::$um => writes!($effect), )*
                    $( Rpc::$sm => false, )*
                }
            }

            /// Whether the server answers with a stream.
            pub const fn streams(self) -> bool {
                match self {
                    $( Rpc::$um => false, )*
                    $( Rpc::$sm => true, )*
                }
            }
        }
    };
}

with_rpcs!(rpc_enum);

impl Rpc {
    /// The call at `path`, if the API has one there.
    pub fn of_path(path: &str) -> Option<Rpc> {
        Rpc::ALL.iter().copied().find(|r| r.path() == path)
    }

    /// The service's full name when `name` is one of the API's services.
    pub fn service_named(name: &str) -> Option<&'static str> {
        Rpc::ALL
            .iter()
            .map(|r| r.service())
            .find(|service| *service == name)
    }
}

impl std::fmt::Display for Rpc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.method())
    }
}

#[cfg(test)]
mod tests {
    use super::Rpc;
    use prost_reflect::DescriptorPool;
    use std::collections::BTreeSet;

    /// Each call as the proto's descriptor set has it: (path, request, response, streams).
    fn of_the_proto() -> BTreeSet<(String, String, String, bool)> {
        let pool = DescriptorPool::decode(crate::proto::FILE_DESCRIPTOR_SET).unwrap();
        let mut calls = BTreeSet::new();
        for service in pool.services() {
            for m in service.methods() {
                assert!(!m.is_client_streaming(), "{}: no call streams up", m.name());
                calls.insert((
                    format!("/{}/{}", service.full_name(), m.name()),
                    m.input().full_name().to_string(),
                    m.output().full_name().to_string(),
                    m.is_server_streaming(),
                ));
            }
        }
        calls
    }

    fn of_the_table() -> BTreeSet<(String, String, String, bool)> {
        Rpc::ALL
            .iter()
            .map(|r| {
                (
                    r.path().to_string(),
                    r.request().to_string(),
                    r.response().to_string(),
                    r.streams(),
                )
            })
            .collect()
    }

    #[test]
    fn the_table_has_every_call_of_the_proto_and_no_other() {
        let proto = of_the_proto();
        let table = of_the_table();
        let missing: Vec<_> = proto.difference(&table).collect();
        let extra: Vec<_> = table.difference(&proto).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "the proto's calls the table lacks (with_rpcs! in crates/ichor-wire/src/rpc.rs): {missing:?}; the table's the proto lacks: {extra:?}"
        );
        assert!(proto.len() >= 11, "{proto:?}");
    }

    #[test]
    fn a_path_names_its_call() {
        for rpc in Rpc::ALL {
            assert_eq!(Rpc::of_path(rpc.path()), Some(*rpc));
            assert_eq!(
                rpc.path(),
                format!("/{}/{}", rpc.service(), rpc.method()),
                "{rpc:?}"
            );
        }
        assert_eq!(Rpc::of_path("/ichor.v1alpha1.OperationService/Nope"), None);
        assert_eq!(
            Rpc::service_named("ichor.v1alpha1.ClusterService"),
            Some("ichor.v1alpha1.ClusterService")
        );
        assert_eq!(Rpc::service_named("grpc.health.v1.Health"), None);
        let writes: Vec<_> = Rpc::ALL.iter().filter(|r| r.writes()).collect();
        assert_eq!(
            writes,
            [
                &Rpc::CreateOperation,
                &Rpc::SetOperationPaused,
                &Rpc::DeleteOperation
            ]
        );
    }
}
