//! Arbitrary requests, generated: only OK or a refusal a person can act on, and a refusal
//! writes nothing.

use super::*;

/// A string as a hostile client sends it: sometimes valid, often not, up to a few KB.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => Just("default".to_string()),
        6 => Just("c1".to_string()),
        2 => Just("v1.9.3".to_string()),
        1 => Just(String::new()),
        1 => Just("../kube-system".to_string()),
        1 => Just("staging/../x".to_string()),
        1 => Just("\x1b[2J\n".to_string()),
        1 => "[a-z0-9.-]{0,70}",
        1 => "\\PC{0,40}",
        1 => any::<String>(),
        1 => proptest::collection::vec(any::<char>(), 0..5000).prop_map(String::from_iter),
    ]
}

fn number() -> impl Strategy<Value = i32> {
    prop_oneof![
        Just(1),
        Just(0),
        Just(-1),
        Just(i32::MAX),
        Just(i32::MIN),
        1..8i32,
        any::<i32>()
    ]
}

#[derive(Clone, Debug)]
enum Hostile {
    List(Option<String>),
    Get(String, String),
    Plan(OperationRequest),
    Create(OperationRequest),
    Pause(String, String, bool, Option<Confirmed>),
    Delete(String, String, Option<Confirmed>),
    Permissions(String),
    ListClusters(Option<String>),
    GetCluster(String, String),
}

fn request() -> impl Strategy<Value = OperationRequest> {
    (
        text(),
        proptest::option::of(text()),
        0..OperationKind::ALL.len(),
        proptest::option::of(text()),
        proptest::option::of(number()),
        proptest::option::of(text()),
        proptest::option::of(text()),
    )
        .prop_map(
            |(namespace, cluster, kind, target, max_unavailable, request_id, confirmed_plan)| {
                OperationRequest {
                    namespace,
                    cluster,
                    kind: OperationKind::ALL[kind],
                    target,
                    max_unavailable,
                    request_id,
                    confirmed_plan,
                }
            },
        )
}

fn confirmed() -> impl Strategy<Value = Option<Confirmed>> {
    proptest::option::of(
        (text(), any::<i64>(), any::<bool>(), any::<bool>()).prop_map(
            |(uid, generation, finished, paused)| Confirmed {
                uid,
                generation,
                finished,
                paused,
            },
        ),
    )
}

fn hostile() -> impl Strategy<Value = Hostile> {
    prop_oneof![
        proptest::option::of(text()).prop_map(Hostile::List),
        (text(), text()).prop_map(|(a, b)| Hostile::Get(a, b)),
        request().prop_map(Hostile::Plan),
        request().prop_map(Hostile::Create),
        (text(), text(), any::<bool>(), confirmed())
            .prop_map(|(a, b, p, c)| Hostile::Pause(a, b, p, c)),
        (text(), text(), confirmed()).prop_map(|(a, b, c)| Hostile::Delete(a, b, c)),
        text().prop_map(Hostile::Permissions),
        proptest::option::of(text()).prop_map(Hostile::ListClusters),
        (text(), text()).prop_map(|(a, b)| Hostile::GetCluster(a, b)),
    ]
}

async fn send(c: &dyn OperationClient, h: &Hostile) -> Result<(), ApiError> {
    match h {
        Hostile::List(ns) => c.list_operations(ns.as_deref()).await.map(drop),
        Hostile::Get(ns, name) => c.get_operation(ns, name).await.map(drop),
        Hostile::Plan(r) => c.plan_operation(r).await.map(drop),
        Hostile::Create(r) => c.create_operation(r).await.map(drop),
        Hostile::Pause(ns, name, p, conf) => c
            .set_operation_paused(ns, name, *p, conf.as_ref())
            .await
            .map(drop),
        Hostile::Delete(ns, name, conf) => c.delete_operation(ns, name, conf.as_ref()).await,
        Hostile::Permissions(ns) => c.permissions(ns).await.map(drop),
        Hostile::ListClusters(ns) => c.list_clusters(ns.as_deref()).await.map(drop),
        Hostile::GetCluster(ns, name) => c.get_cluster(ns, name).await.map(drop),
    }
}

/// Arbitrary requests on every path: the only answers are OK and the refusals a person can act
/// on, never a code that is retried or says the server broke; a refusal writes nothing.
#[test]
fn arbitrary_requests_get_only_ok_or_a_refusal_and_a_refusal_writes_nothing() {
    // The calls are driven with block_on on this thread: give it the stack a runtime worker has.
    std::thread::Builder::new()
        .stack_size(16 << 20)
        .spawn(arbitrary_requests)
        .unwrap()
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p));
}

fn arbitrary_requests() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let api = world();
    let clients: Vec<(Path, Arc<dyn OperationClient>)> = rt.block_on(async {
        let mut clients = Vec::new();
        for path in [Path::InProcess, Path::Impersonated, Path::Grpc] {
            clients.push((path, connect(path, &api, User::Operator).await));
        }
        clients
    });
    let config = ProptestConfig {
        cases: 96,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let seen = std::cell::RefCell::new(std::collections::BTreeMap::<String, usize>::new());
    proptest!(config, |(h in hostile(), which in 0..3usize)| {
        let (path, client) = &clients[which];
        api.clear_write_log();
        let result = rt.block_on(send(client.as_ref(), &h));
        let outcome = match &result {
            Ok(()) => "OK".to_string(),
            Err(e) => format!("{:?}", e.code),
        };
        *seen.borrow_mut().entry(outcome).or_default() += 1;
        if let Err(e) = result {
            prop_assert!(
                matches!(
                    e.code,
                    Code::InvalidArgument
                        | Code::FailedPrecondition
                        | Code::NotFound
                        | Code::PermissionDenied
                ),
                "{path:?} {h:?}: {e:?}"
            );
            prop_assert!(api.write_log().is_empty(), "{path:?} {h:?} wrote {:?}", api.write_log());
            if e.code == Code::InvalidArgument {
                prop_assert!(e.message.len() < 200, "{path:?}: {}", e.message);
            }
        }
    });
    let seen = seen.into_inner();
    eprintln!("outcomes: {seen:?}");
    assert!(
        seen.contains_key("OK") && seen.contains_key("InvalidArgument"),
        "{seen:?}"
    );
}
