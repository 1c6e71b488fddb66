//! ListOperations without a page size answers the server's default page (AIP-158), and the
//! dashboard's clients still read every operation by following the tokens.

use super::common::server::{Options, client_over, start};
use super::world;
use ichor_client::remote::Protocol;
use ichor_demo::apiserver::auth::users;
use ichor_model::OperationClient as _;
use ichor_model::{DEFAULT_PAGE_SIZE, ListQuery};

#[tokio::test]
async fn an_unpaged_list_is_a_default_page_and_our_clients_follow_the_tokens() {
    let api = world();
    let count = DEFAULT_PAGE_SIZE as usize * 2 + 7;
    for i in 0..count {
        api.seed(&super::common::op(&format!("op-{i:04}"), "c1", "talos", 1))
            .unwrap();
    }
    let server = start(&api, Options::default()).await;
    for protocol in [Protocol::Grpc, Protocol::Connect] {
        let c = client_over(&server.url(false), Some(users::VIEWER_TOKEN), protocol);
        let unpaged = ListQuery {
            namespace: Some("default".into()),
            ..ListQuery::default()
        };
        let first = c.list_page(&unpaged).await.unwrap();
        assert_eq!(
            first.operations.len(),
            DEFAULT_PAGE_SIZE as usize,
            "{protocol:?}"
        );
        assert_eq!(first.total, count, "{protocol:?}");
        assert!(first.next_page_token.is_some(), "{protocol:?}");
        let all = c.list_operations(Some("default")).await.unwrap();
        assert_eq!(
            all.len(),
            count,
            "{protocol:?}: every operation, page after page"
        );
    }
}
