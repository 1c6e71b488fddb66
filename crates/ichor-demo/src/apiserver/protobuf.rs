//! The protobuf request bodies kubectl 1.32+ posts for the review kinds
//! (`Content-Type: application/vnd.kubernetes.protobuf`): kube's envelope, the 4 bytes
//! `k8s\0` and a `runtime.Unknown` whose `raw` is the object's own message. Decoded here into
//! the JSON form the reviews read; the answer is JSON, which client-go accepts (it decodes by
//! the response's media type).
//!
//! The messages are written here with prost's derive, field numbers from
//! `k8s.io/api/authorization/v1/generated.proto` and `apimachinery/pkg/runtime/generated.proto`,
//! and only the fields the reviews read: the generated crate (k8s-pb) is not in the tree, and
//! would bring every kind of the API for the four messages read here.

use super::responses::{Failure, fail};
use prost::Message;
use serde_json::{Map, Value, json};

/// The protobuf media type.
pub(crate) const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";

const MAGIC: &[u8] = b"k8s\0";

#[derive(Clone, PartialEq, Message)]
struct Unknown {
    #[prost(message, optional, tag = "1")]
    type_meta: Option<TypeMeta>,
    #[prost(bytes = "vec", optional, tag = "2")]
    raw: Option<Vec<u8>>,
}

#[derive(Clone, PartialEq, Message)]
struct TypeMeta {
    #[prost(string, optional, tag = "1")]
    api_version: Option<String>,
    #[prost(string, optional, tag = "2")]
    kind: Option<String>,
}

/// SelfSubjectAccessReview and SelfSubjectRulesReview: their spec (field 2) is all that is
/// read.
#[derive(Clone, PartialEq, Message)]
struct Review {
    #[prost(bytes = "vec", optional, tag = "2")]
    spec: Option<Vec<u8>>,
}

#[derive(Clone, PartialEq, Message)]
struct AccessReviewSpec {
    #[prost(message, optional, tag = "1")]
    resource_attributes: Option<ResourceAttributes>,
    #[prost(message, optional, tag = "2")]
    non_resource_attributes: Option<NonResourceAttributes>,
}

#[derive(Clone, PartialEq, Message)]
struct ResourceAttributes {
    #[prost(string, optional, tag = "1")]
    namespace: Option<String>,
    #[prost(string, optional, tag = "2")]
    verb: Option<String>,
    #[prost(string, optional, tag = "3")]
    group: Option<String>,
    #[prost(string, optional, tag = "4")]
    version: Option<String>,
    #[prost(string, optional, tag = "5")]
    resource: Option<String>,
    #[prost(string, optional, tag = "6")]
    subresource: Option<String>,
    #[prost(string, optional, tag = "7")]
    name: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
struct NonResourceAttributes {
    #[prost(string, optional, tag = "1")]
    path: Option<String>,
    #[prost(string, optional, tag = "2")]
    verb: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
struct RulesReviewSpec {
    #[prost(string, optional, tag = "1")]
    namespace: Option<String>,
}

fn undecodable(what: impl std::fmt::Display) -> Failure {
    fail(
        400,
        "BadRequest",
        format!("the body of the request could not be decoded: {what}"),
    )
}

/// The fields that are set, as JSON.
fn fields(pairs: &[(&str, &Option<String>)]) -> Value {
    let m: Map<String, Value> = pairs
        .iter()
        .filter_map(|(k, v)| v.as_ref().map(|v| (k.to_string(), json!(v))))
        .collect();
    Value::Object(m)
}

/// A review posted as protobuf, as the JSON object it stands for.
pub(crate) fn decode_review(body: &[u8]) -> Result<Value, Failure> {
    let inner = body
        .strip_prefix(MAGIC)
        .ok_or_else(|| undecodable("no protobuf envelope"))?;
    let unknown = Unknown::decode(inner).map_err(undecodable)?;
    let tm = unknown.type_meta.unwrap_or_default();
    let kind = tm.kind.unwrap_or_default();
    let review = Review::decode(unknown.raw.unwrap_or_default().as_slice()).map_err(undecodable)?;
    let spec_bytes = review.spec.unwrap_or_default();
    let spec = match kind.as_str() {
        "SelfSubjectAccessReview" => {
            let s = AccessReviewSpec::decode(spec_bytes.as_slice()).map_err(undecodable)?;
            let mut spec = Map::new();
            if let Some(r) = s.resource_attributes {
                spec.insert(
                    "resourceAttributes".into(),
                    fields(&[
                        ("namespace", &r.namespace),
                        ("verb", &r.verb),
                        ("group", &r.group),
                        ("version", &r.version),
                        ("resource", &r.resource),
                        ("subresource", &r.subresource),
                        ("name", &r.name),
                    ]),
                );
            }
            if let Some(n) = s.non_resource_attributes {
                spec.insert(
                    "nonResourceAttributes".into(),
                    fields(&[("path", &n.path), ("verb", &n.verb)]),
                );
            }
            Value::Object(spec)
        }
        "SelfSubjectRulesReview" => {
            let s = RulesReviewSpec::decode(spec_bytes.as_slice()).map_err(undecodable)?;
            fields(&[("namespace", &s.namespace)])
        }
        _ => {
            return Err(undecodable(
                "not a review this server decodes from protobuf",
            ));
        }
    };
    Ok(json!({
        "apiVersion": tm.api_version.unwrap_or_default(),
        "kind": kind,
        "metadata": {},
        "spec": spec,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A SelfSubjectAccessReview as kubectl 1.32 encodes it.
    fn encoded(verb: &str, resource: &str) -> Vec<u8> {
        let spec = AccessReviewSpec {
            resource_attributes: Some(ResourceAttributes {
                namespace: Some("default".into()),
                verb: Some(verb.into()),
                resource: Some(resource.into()),
                ..ResourceAttributes::default()
            }),
            non_resource_attributes: None,
        };
        let review = Review {
            spec: Some(spec.encode_to_vec()),
        };
        let unknown = Unknown {
            type_meta: Some(TypeMeta {
                api_version: Some("authorization.k8s.io/v1".into()),
                kind: Some("SelfSubjectAccessReview".into()),
            }),
            raw: Some(review.encode_to_vec()),
        };
        [MAGIC, &unknown.encode_to_vec()].concat()
    }

    #[test]
    fn an_access_review_decodes_to_its_json() {
        let v = decode_review(&encoded("get", "talosoperations")).unwrap();
        assert_eq!(v["kind"], "SelfSubjectAccessReview");
        assert_eq!(
            v["spec"]["resourceAttributes"],
            json!({"namespace": "default", "verb": "get", "resource": "talosoperations"})
        );
        assert_eq!(decode_review(b"{}").err().map(|f| f.0), Some(400));
    }
}
