//! Fault injection for tests: failed, reset, delayed and conflicted requests, and hooks that
//! change the world between a service's read and its write. Compiled only with the `faults`
//! feature; without it a stand-in keeps no state and no request meets a fault.

#[cfg(feature = "faults")]
pub(crate) use self::injection::Faults;
#[cfg(feature = "faults")]
pub use self::injection::{Fault, FaultRule};
#[cfg(not(feature = "faults"))]
pub(crate) use self::stand_in::Faults;

#[cfg(feature = "faults")]
mod injection {
    use crate::apiserver::responses::{json_response, status_body};
    use crate::apiserver::routing::{Query, parse_path};
    use crate::apiserver::watch::query_bool;
    use crate::apiserver::{BoxError, EmbeddedApi};
    use bytes::Bytes;
    use http_body_util::Full;
    use std::collections::VecDeque;
    use std::time::Duration;

    /// A fault to inject into the next requests.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Fault {
        /// 503 Service Unavailable with a Status body.
        Unavailable,
        /// The connection is reset: the request fails without a response.
        Reset,
        /// The response is delayed (the request is then handled normally).
        Delay(Duration),
        /// The request is carried out, then the connection is reset before the answer: the client
        /// cannot know whether it happened.
        ResetAfterApply,
        /// Answered after the caller's deadline, then applied: the request is answered
        /// `504 Timeout` after `answer` (as kube-apiserver's handler timeout answers, while
        /// storage may still complete the write), and carried out after `apply`, whether or not
        /// anyone still waits for it.
        Late { answer: Duration, apply: Duration },
    }

    /// Which requests a targeted fault meets: `None` matches anything; dry runs never match.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct FaultRule {
        /// `get`, `list`, `watch`, `create`, `update`, `patch` or `delete`.
        pub verb: Option<String>,
        /// The resource plural (`/status` for the subresource).
        pub resource: Option<String>,
        /// Matching requests to let through before the fault applies.
        pub skip: usize,
    }

    impl FaultRule {
        /// Matches `verb` on `resource`.
        pub fn on(verb: &str, resource: &str) -> FaultRule {
            FaultRule {
                verb: Some(verb.to_string()),
                resource: Some(resource.to_string()),
                skip: 0,
            }
        }

        /// Lets `n` matching requests through first.
        pub fn after(mut self, n: usize) -> FaultRule {
            self.skip = n;
            self
        }

        fn matches(&self, (verb, resource): &RequestKind) -> bool {
            self.verb.as_deref().is_none_or(|v| v == *verb)
                && self
                    .resource
                    .as_deref()
                    .is_none_or(|x| x == resource.as_str())
        }
    }

    /// Something a test does to the world just before a matching request is handled.
    type Hook = Box<dyn FnOnce(&EmbeddedApi) + Send>;

    /// The verb and resource (`plural` or `plural/status`) of a request, as fault rules name them.
    type RequestKind = (&'static str, String);

    /// The faults, hooks and conflicts waiting for requests.
    #[derive(Default)]
    pub(crate) struct Faults {
        /// For the next requests, whatever they are.
        next: VecDeque<Fault>,
        targeted: Vec<(FaultRule, Fault)>,
        hooks: Vec<(FaultRule, Hook)>,
        /// Writes still to refuse with 409 Conflict.
        conflicts: u32,
    }

    impl Faults {
        /// Whether this write meets a forced conflict (consumed; dry runs never do).
        pub(crate) fn take_conflict(&mut self, dry_run: bool) -> bool {
            if self.conflicts > 0 && !dry_run {
                self.conflicts -= 1;
                return true;
            }
            false
        }

        /// The hook and the fault this request meets, if any (consumed). A fault for the next
        /// requests comes before a targeted one.
        fn take(&mut self, req: &http::Request<Bytes>) -> (Option<Hook>, Option<Fault>) {
            let kind = if self.hooks.is_empty() && self.targeted.is_empty() {
                None
            } else {
                request_kind(req)
            };
            let hook = kind
                .as_ref()
                .and_then(|k| take_matching(&mut self.hooks, k));
            let fault = self.next.pop_front().or_else(|| {
                kind.as_ref()
                    .and_then(|k| take_matching(&mut self.targeted, k))
            });
            (hook, fault)
        }
    }

    /// What the first rule that `kind` matches holds, once its skip is used up (then removed).
    fn take_matching<T>(rules: &mut Vec<(FaultRule, T)>, kind: &RequestKind) -> Option<T> {
        let idx = rules.iter().position(|(r, _)| r.matches(kind))?;
        let (rule, _) = &mut rules[idx];
        if rule.skip > 0 {
            rule.skip -= 1;
            return None;
        }
        Some(rules.remove(idx).1)
    }

    /// The kind of a request for fault rules (a review is a create of its plural); `None` for
    /// dry runs and paths that name no resource.
    fn request_kind(req: &http::Request<Bytes>) -> Option<RequestKind> {
        let query = Query::parse(req.uri().query());
        if query.dry_run() {
            return None;
        }
        let path = req.uri().path().trim_end_matches('/');
        if req.method() == http::Method::POST && crate::apiserver::authn::Review::at(path).is_some()
        {
            // A review (tokenreviews, selfsubjectaccessreviews, …) is a create of its plural.
            let plural = path.rsplit('/').next().unwrap_or_default();
            return Some(("create", plural.to_string()));
        }
        let target = parse_path(path).ok()?;
        let verb = match (req.method().as_str(), target.name.is_some()) {
            ("GET", true) => "get",
            ("GET", false) if query_bool(query.get("watch")) => "watch",
            ("GET", false) => "list",
            ("POST", _) => "create",
            ("PUT", _) => "update",
            ("PATCH", _) => "patch",
            ("DELETE", _) => "delete",
            _ => return None,
        };
        Some((verb, target.resource()))
    }

    /// The same request, to be carried out later.
    fn copy(req: &http::Request<Bytes>) -> http::Request<Bytes> {
        let mut late = http::Request::new(req.body().clone());
        *late.method_mut() = req.method().clone();
        *late.uri_mut() = req.uri().clone();
        *late.headers_mut() = req.headers().clone();
        late
    }

    fn connection_reset() -> BoxError {
        Box::new(std::io::Error::new(
            std::io::ErrorKind::ConnectionReset,
            "connection reset by peer",
        ))
    }

    impl EmbeddedApi {
        /// The next `n` requests meet `fault`.
        pub fn fail_next(&self, n: usize, fault: Fault) {
            let mut st = self.lock();
            st.faults.next.extend(std::iter::repeat_n(fault, n));
        }

        /// The next request that `rule` matches (after its `skip`) meets `fault`, once.
        pub fn fail_when(&self, rule: FaultRule, fault: Fault) {
            self.lock().faults.targeted.push((rule, fault));
        }

        /// Just before the next request that `rule` matches (after its `skip`) is handled, `hook`
        /// runs (once): a test changes the world between a service's read and its write.
        pub fn before(&self, rule: FaultRule, hook: impl FnOnce(&EmbeddedApi) + Send + 'static) {
            self.lock().faults.hooks.push((rule, Box::new(hook)));
        }

        /// The next `n` writes (create, update, patch; not dry runs) get 409 Conflict, as if
        /// someone wrote first.
        pub fn conflict_next_writes(&self, n: u32) {
            self.lock().faults.conflicts += n;
        }

        /// Runs the hook this request meets, then its fault: `Some` answer (or reset) when the
        /// fault decides it, `None` when the request is to be handled as usual (after a delay).
        pub(crate) async fn inject_fault(
            &self,
            req: &http::Request<Bytes>,
        ) -> Option<Result<http::Response<Full<Bytes>>, BoxError>> {
            let (hook, fault) = self.lock().faults.take(req);
            if let Some(hook) = hook {
                hook(self);
            }
            match fault? {
                Fault::Unavailable => {
                    let body = status_body(
                        503,
                        "ServiceUnavailable",
                        "the server is currently unable to handle the request",
                        None,
                    );
                    Some(Ok(json_response(503, &body)))
                }
                Fault::Reset => Some(Err(connection_reset())),
                Fault::Delay(d) => {
                    tokio::time::sleep(d).await;
                    None
                }
                Fault::ResetAfterApply => {
                    let _applied = self.answer(req);
                    Some(Err(connection_reset()))
                }
                Fault::Late { answer, apply } => {
                    let api = self.clone();
                    let late = copy(req);
                    let in_hand = crate::apiserver::InHand::new(self);
                    tokio::spawn(async move {
                        tokio::time::sleep(apply).await;
                        let _applied = api.answer(&late);
                        drop(in_hand);
                    });
                    tokio::time::sleep(answer).await;
                    let body = status_body(
                        504,
                        "Timeout",
                        "Timeout: request did not complete within the allowed duration",
                        None,
                    );
                    Some(Ok(json_response(504, &body)))
                }
            }
        }
    }
}

#[cfg(not(feature = "faults"))]
mod stand_in {
    use crate::apiserver::{BoxError, EmbeddedApi};
    use bytes::Bytes;
    use http_body_util::Full;

    /// No faults to keep.
    #[derive(Default)]
    pub(crate) struct Faults;

    impl Faults {
        /// No write meets a forced conflict.
        #[inline]
        pub(crate) fn take_conflict(&mut self, _dry_run: bool) -> bool {
            false
        }
    }

    impl EmbeddedApi {
        /// No request meets a fault: each is handled as usual.
        #[inline]
        pub(crate) async fn inject_fault(
            &self,
            _req: &http::Request<Bytes>,
        ) -> Option<Result<http::Response<Full<Bytes>>, BoxError>> {
            None
        }
    }
}
