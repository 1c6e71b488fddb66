//! gRPC server reflection (v1 and v1alpha), as grpc-go answers it: a file is sent with every
//! file it imports that this stream has not sent yet (operation.proto comes with cluster.proto),
//! and a question it cannot answer (an unknown symbol or file) is answered in the stream with
//! an `ErrorResponse` (NOT_FOUND), which stays open for the next question. tonic-reflection
//! sends a file alone and ends the whole stream on an unknown symbol, which grpcurl and grpcio's
//! descriptor database cannot work with. Every service served is listed, both versions of
//! reflection among them; a symbol is any full name a file defines (grpc-go's
//! `FindDescriptorByName`): a message, enum, service, method, extension, and also a field, a
//! oneof and an enum value (`ichor.v1alpha1.PageDelta.base_version`,
//! `ichor.v1alpha1.OPERATION_KIND_TALOS`).

use anyhow::Context as _;
use futures::Stream;
use prost::Message as _;
use prost_reflect::{DescriptorPool, FileDescriptor};
use std::collections::HashSet;
use std::pin::Pin;
use std::sync::Arc;
use tonic::{Status, Streaming};

/// What a question gets.
enum Answer {
    Files(Vec<Vec<u8>>),
    Services(Vec<String>),
    NoExtensions(String),
    NotFound(String),
}

/// The descriptors the server serves.
#[derive(Clone)]
pub(crate) struct Reflection {
    pool: Arc<DescriptorPool>,
    services: Arc<Vec<String>>,
}

impl Reflection {
    /// The API's, health's and reflection's own descriptors.
    pub(crate) fn new() -> anyhow::Result<Reflection> {
        let mut pool = DescriptorPool::new();
        for (what, set) in [
            ("the API's", crate::wire::proto::FILE_DESCRIPTOR_SET),
            ("health's", crate::grpc_health::pb::FILE_DESCRIPTOR_SET),
            (
                "reflection's",
                tonic_reflection::pb::v1::FILE_DESCRIPTOR_SET,
            ),
            (
                "reflection v1alpha's",
                tonic_reflection::pb::v1alpha::FILE_DESCRIPTOR_SET,
            ),
        ] {
            pool.decode_file_descriptor_set(set)
                .with_context(|| format!("reading {what} descriptors for reflection"))?;
        }
        let services = pool.services().map(|s| s.full_name().to_string()).collect();
        Ok(Reflection {
            pool: Arc::new(pool),
            services: Arc::new(services),
        })
    }

    /// The file that defines `symbol` (a message, enum, service, method, extension, field,
    /// oneof or enum value).
    fn file_of(&self, symbol: &str) -> Option<FileDescriptor> {
        let p = &self.pool;
        if let Some(m) = p.get_message_by_name(symbol) {
            return Some(m.parent_file());
        }
        if let Some(e) = p.get_enum_by_name(symbol) {
            return Some(e.parent_file());
        }
        if let Some(s) = p.get_service_by_name(symbol) {
            return Some(s.parent_file());
        }
        if let Some(x) = p.get_extension_by_name(symbol) {
            return Some(x.parent_file());
        }
        if let Some(v) = p
            .all_enums()
            .flat_map(|e| e.values().collect::<Vec<_>>())
            .find(|v| v.full_name() == symbol)
        {
            return Some(v.parent_file());
        }
        let (parent, member) = symbol.rsplit_once('.')?;
        if let Some(m) = p.get_message_by_name(parent) {
            let has =
                m.get_field_by_name(member).is_some() || m.oneofs().any(|o| o.name() == member);
            return has.then(|| m.parent_file());
        }
        let service = p.get_service_by_name(parent)?;
        service
            .methods()
            .any(|m| m.name() == member)
            .then(|| service.parent_file())
    }

    /// `file` and what it imports, transitively, less what this stream has sent.
    fn with_dependencies(&self, file: FileDescriptor, sent: &mut HashSet<String>) -> Answer {
        let mut out = Vec::new();
        let mut todo = vec![file];
        while let Some(f) = todo.pop() {
            if !sent.insert(f.name().to_string()) {
                continue;
            }
            out.push(f.file_descriptor_proto().encode_to_vec());
            todo.extend(f.dependencies());
        }
        Answer::Files(out)
    }

    fn answer(&self, question: Question, sent: &mut HashSet<String>) -> Answer {
        match question {
            Question::File(name) => match self.pool.get_file_by_name(&name) {
                Some(f) => self.with_dependencies(f, sent),
                None => Answer::NotFound(format!(
                    "file {} not found",
                    ichor_model::error_text::quoted(&name)
                )),
            },
            Question::Symbol(name) => match self.file_of(&name) {
                Some(f) => self.with_dependencies(f, sent),
                None => Answer::NotFound(format!(
                    "symbol {} not found",
                    ichor_model::error_text::quoted(&name)
                )),
            },
            Question::Extension => Answer::NotFound("extensions are not supported".into()),
            Question::ExtensionNumbers(t) => Answer::NoExtensions(t),
            Question::Services => Answer::Services(self.services.to_vec()),
            Question::Unknown => Answer::NotFound("an empty question".into()),
        }
    }
}

/// A question, whichever version asked it.
enum Question {
    File(String),
    Symbol(String),
    Extension,
    ExtensionNumbers(String),
    Services,
    Unknown,
}

type Answers<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send>>;

/// The stream of answers to `requests`, one each, in order, until the caller closes its side.
fn answers<Q, A>(
    reflection: Reflection,
    requests: Streaming<Q>,
    ask: fn(&Q) -> Question,
    reply: fn(&Q, Answer) -> A,
) -> Answers<A>
where
    Q: Send + 'static,
    A: Send + 'static,
{
    let stream = futures::stream::unfold(
        (reflection, requests, HashSet::new()),
        move |(reflection, mut requests, mut sent)| async move {
            let request = match requests.message().await {
                Ok(Some(r)) => r,
                Ok(None) => return None,
                Err(status) => return Some((Err(status), (reflection, requests, sent))),
            };
            let answer = reflection.answer(ask(&request), &mut sent);
            Some((Ok(reply(&request, answer)), (reflection, requests, sent)))
        },
    );
    Box::pin(stream)
}

/// The v1 and v1alpha services: the same answers in each version's messages.
macro_rules! version {
    ($module:ident, $pb:path) => {
        pub(crate) mod $module {
            use super::{Answer, Answers, Question, Reflection, answers};
            use pb::server_reflection_request::MessageRequest as Q;
            use pb::server_reflection_response::MessageResponse as R;
            use $pb as pb;

            fn ask(r: &pb::ServerReflectionRequest) -> Question {
                match &r.message_request {
                    Some(Q::FileByFilename(f)) => Question::File(f.clone()),
                    Some(Q::FileContainingSymbol(s)) => Question::Symbol(s.clone()),
                    Some(Q::FileContainingExtension(_)) => Question::Extension,
                    Some(Q::AllExtensionNumbersOfType(t)) => Question::ExtensionNumbers(t.clone()),
                    Some(Q::ListServices(_)) => Question::Services,
                    None => Question::Unknown,
                }
            }

            fn reply(r: &pb::ServerReflectionRequest, a: Answer) -> pb::ServerReflectionResponse {
                let response = match a {
                    Answer::Files(file_descriptor_proto) => {
                        R::FileDescriptorResponse(pb::FileDescriptorResponse {
                            file_descriptor_proto,
                        })
                    }
                    Answer::Services(names) => R::ListServicesResponse(pb::ListServiceResponse {
                        service: names
                            .into_iter()
                            .map(|name| pb::ServiceResponse { name })
                            .collect(),
                    }),
                    Answer::NoExtensions(base_type_name) => {
                        R::AllExtensionNumbersResponse(pb::ExtensionNumberResponse {
                            base_type_name,
                            extension_number: Vec::new(),
                        })
                    }
                    Answer::NotFound(error_message) => R::ErrorResponse(pb::ErrorResponse {
                        error_code: tonic::Code::NotFound as i32,
                        error_message,
                    }),
                };
                pb::ServerReflectionResponse {
                    valid_host: r.host.clone(),
                    original_request: Some(r.clone()),
                    message_response: Some(response),
                }
            }

            #[tonic::async_trait]
            impl pb::server_reflection_server::ServerReflection for Reflection {
                type ServerReflectionInfoStream = Answers<pb::ServerReflectionResponse>;

                async fn server_reflection_info(
                    &self,
                    request: tonic::Request<tonic::Streaming<pb::ServerReflectionRequest>>,
                ) -> Result<tonic::Response<Self::ServerReflectionInfoStream>, tonic::Status>
                {
                    Ok(tonic::Response::new(answers(
                        self.clone(),
                        request.into_inner(),
                        ask,
                        reply,
                    )))
                }
            }

            /// The service.
            pub(crate) fn server(
                r: Reflection,
            ) -> pb::server_reflection_server::ServerReflectionServer<Reflection> {
                pb::server_reflection_server::ServerReflectionServer::new(r)
            }
        }
    };
}

version!(v1, tonic_reflection::pb::v1);
version!(v1alpha, tonic_reflection::pb::v1alpha);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_are_every_full_name_a_file_defines() {
        let r = Reflection::new().unwrap();
        let file = |s: &str| r.file_of(s).map(|f| f.name().to_string());
        let operation = Some("ichor/v1alpha1/operation.proto".to_string());
        for symbol in [
            "ichor.v1alpha1.PageDelta",
            "ichor.v1alpha1.PageDelta.base_version",
            "ichor.v1alpha1.OperationKind",
            "ichor.v1alpha1.OPERATION_KIND_TALOS",
            "ichor.v1alpha1.OperationService.ListOperations",
        ] {
            assert_eq!(file(symbol), operation, "{symbol}");
        }
        for unknown in [
            "ichor.v1alpha1.PageDelta.no_such_field",
            "OPERATION_KIND_TALOS",
            "ichor.v1alpha1.OperationService.Nope",
        ] {
            assert_eq!(file(unknown), None, "{unknown}");
        }
        for service in [
            "grpc.health.v1.Health",
            "grpc.reflection.v1.ServerReflection",
            "grpc.reflection.v1alpha.ServerReflection",
            "ichor.v1alpha1.OperationService",
            "ichor.v1alpha1.ClusterService",
        ] {
            assert!(r.services.iter().any(|s| s == service), "{service}");
        }
    }
}
