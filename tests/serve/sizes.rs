//! Requests and headers over the size limits are refused, and the server goes on.

use super::*;

/// The generated client on one connection to `server` (which allows anonymous calls).
async fn raw_client(
    server: &common::server::Running,
) -> ichor_server::wire::proto::operation_service_client::OperationServiceClient<
    tonic::transport::Channel,
> {
    let channel = tonic::transport::Endpoint::from_shared(server.url(false))
        .unwrap()
        .connect()
        .await
        .unwrap();
    ichor_server::wire::proto::operation_service_client::OperationServiceClient::new(channel)
}

fn list_default() -> ichor_server::wire::proto::ListOperationsRequest {
    ichor_server::wire::proto::ListOperationsRequest {
        namespace: "default".into(),
        ..Default::default()
    }
}

#[tokio::test]
async fn a_request_over_the_size_limit_is_refused_and_the_server_goes_on() {
    use ichor_server::MAX_REQUEST_BYTES;
    use ichor_server::wire::proto::GetOperationRequest;
    let api = world();
    let server = start_anonymous(&api).await;
    let mut raw = raw_client(&server).await;
    let huge = GetOperationRequest {
        namespace: "default".into(),
        name: "x".repeat(MAX_REQUEST_BYTES + 1),
        manifest: false,
    };
    let e = raw.get_operation(huge).await.unwrap_err();
    // tonic refuses it while decoding, before any handler runs: OUT_OF_RANGE.
    assert_eq!(e.code(), tonic::Code::OutOfRange, "{e:?}");
    assert!(
        e.message()
            .contains(&format!("the limit is: {MAX_REQUEST_BYTES} bytes")),
        "{}",
        e.message()
    );
    // The same connection answers the next call.
    let ops = raw.list_operations(list_default()).await.unwrap();
    assert!(ops.into_inner().operations.is_empty());
    // Just under the limit, the request is decoded and the service decides.
    let e = raw
        .get_operation(GetOperationRequest {
            namespace: "default".into(),
            name: "x".repeat(MAX_REQUEST_BYTES - 64),
            manifest: false,
        })
        .await
        .unwrap_err();
    assert_ne!(e.code(), tonic::Code::OutOfRange, "{e:?}");
}

#[tokio::test]
async fn an_oversized_header_is_refused_and_the_server_goes_on() {
    use ichor_server::MAX_HEADER_LIST_BYTES;
    let api = world();
    let server = start_anonymous(&api).await;
    let mut raw = raw_client(&server).await;
    for header in ["x-padding", "authorization"] {
        let mut req = tonic::Request::new(list_default());
        let value = format!("Bearer {}", "a".repeat(MAX_HEADER_LIST_BYTES as usize));
        req.metadata_mut().insert(header, value.parse().unwrap());
        let e = raw.list_operations(req).await.unwrap_err();
        // HTTP/2 answers 431 and resets the stream; no gRPC status, so tonic says UNKNOWN.
        assert_eq!(e.code(), tonic::Code::Unknown, "{header}: {e:?}");
        assert!(e.message().contains("431"), "{header}: {e:?}");
        // The next call, on the same client, is answered.
        raw.list_operations(list_default()).await.unwrap();
    }
    // Under the limit, a large header is taken.
    let mut req = tonic::Request::new(list_default());
    req.metadata_mut().insert(
        "x-padding",
        "a".repeat(MAX_HEADER_LIST_BYTES as usize / 2)
            .parse()
            .unwrap(),
    );
    raw.list_operations(req).await.unwrap();
}
