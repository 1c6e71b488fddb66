use super::*;
use ichor_model::{Operation, OperationPage, PageDelta};
use ichor_service::feed::SharedPage;
use std::sync::Arc;

fn page(version: &str, names: &[&str]) -> OperationPage {
    OperationPage {
        operations: names
            .iter()
            .map(|n| Operation {
                namespace: "default".into(),
                name: n.to_string(),
                ..Operation::default()
            })
            .collect(),
        total: names.len(),
        version: version.into(),
        ..OperationPage::default()
    }
}

fn pool() -> DescriptorPool {
    DescriptorPool::decode(proto::FILE_DESCRIPTOR_SET).unwrap()
}

/// A thousand subscribers sent one shared update are sent the same bytes, made once: the same
/// allocation, in protobuf and in JSON.
#[test]
fn an_update_shared_by_many_is_encoded_once() {
    let (v1, v2) = (page("v1", &["b", "c"]), page("v2", &["a", "b"]));
    let delta = PageDelta::between(&v1, &v2).unwrap();
    let pool = pool();
    for part in [PagePart::Whole(v2.clone()), PagePart::Delta(delta)] {
        let shared = Arc::new(SharedPage::new(part));
        let pushed = |_| Pushed {
            page: Some(shared.clone()),
            ..Pushed::default()
        };
        let sent: Vec<Bytes> = (0..1000).map(|i| proto_bytes(&pushed(i))).collect();
        assert!(
            sent.iter()
                .all(|b| b.as_ptr() == sent[0].as_ptr() && *b == sent[0])
        );
        let json: Vec<Bytes> = (0..1000)
            .map(|i| json_bytes(&pushed(i), &pool).unwrap())
            .collect();
        assert!(json.iter().all(|b| b.as_ptr() == json[0].as_ptr()));
        // The bytes are the message the model's update makes.
        let expected = wire::watch_update_to_proto(&pushed(0).into_update());
        let decoded = proto::WatchOperationsResponse::decode(sent[0].clone()).unwrap();
        assert_eq!(decoded, expected);
    }
}

/// A subscriber's own fields follow the shared bytes: the message decodes to both.
#[test]
fn what_a_subscriber_has_of_its_own_follows_the_shared_bytes() {
    let shared = Arc::new(SharedPage::new(PagePart::Whole(page("v1", &["a"]))));
    let followed = Operation {
        namespace: "default".into(),
        name: "a".into(),
        ..Operation::default()
    };
    let pushed = Pushed {
        page: Some(shared.clone()),
        own: WatchUpdate {
            followed: Some(Ok(followed)),
            ..WatchUpdate::default()
        },
    };
    let bytes = proto_bytes(&pushed);
    let alone = proto_bytes(&Pushed {
        page: Some(shared),
        ..Pushed::default()
    });
    assert!(bytes.starts_with(&alone));
    let expected = wire::watch_update_to_proto(&pushed.into_update());
    let decoded = proto::WatchOperationsResponse::decode(bytes.clone()).unwrap();
    assert_eq!(decoded, expected);
    let heartbeat = Pushed {
        own: WatchUpdate {
            heartbeat: true,
            ..WatchUpdate::default()
        },
        ..Pushed::default()
    };
    let json = json_bytes(&heartbeat, &pool()).unwrap();
    assert_eq!(&json[..], br#"{"heartbeat":true}"#);
}
