error-unfinished-operation = Operation { $operation } on cluster { $cluster } has not completed ({ $phase }): wait for it to complete, or delete it, before starting another.
error-tracked-by-gitops = { $resource_kind } { $resource_name } is tracked by { $tool } ({ $object }). Make the change in Git: { $field }: { $current } → { $target }; merge it in the repository, then start with the { $kind ->
        [cni] kube-proxy mode
       *[other] version
    } the spec then names.
error-downgrade = { $target } is older than the current { $current }: downgrades are refused.
error-unsupported-jump = { $kind ->
        [talos] Talos
        [kubernetes] Kubernetes
        [ichor] ichor
       *[other] { $kind }
    } cannot go from { $current } to { $target } in one operation: from { $current } the supported targets are { $allowed }.
error-no-machines = No approved machine of cluster { $cluster } would be touched ({ $held } held).
error-invalid-version = “{ $value }” is not a version such as { $kind ->
        [kubernetes] v1.33.0
        [ichor] v0.15.0
       *[other] v1.9.3
    }.
error-invalid-kube-proxy-mode = The kube-proxy mode must be “enabled” or “replaced”, not “{ $value }”.
error-target-not-taken = This kind of operation takes no target (got “{ $value }”).
error-target-required = This kind of operation needs a target.
error-invalid-max-unavailable = Max unavailable must be 1 to { $max } (got { $value }).
error-cluster-required = Namespace { $namespace } has several clusters; choose one of: { $choices }.
error-cluster-not-found = Cluster { $cluster } was not found in namespace { $namespace }.
error-no-clusters = There is no TalosCluster in namespace { $namespace }.
error-installation-not-found = There is no IchorInstallation named ichor in namespace { $namespace }: there is no ichor installation to upgrade.
error-operation-not-found = Operation { $operation } was not found in namespace { $namespace }.
error-resume-after-failure = { $operation } was paused by a failed machine ({ $machine }): resuming does nothing. Nothing retries and nothing is rolled back: delete it and start again.
error-operation-finished = { $operation } is { $phase }: there is nothing to pause or resume.
error-spec-written-create-failed = { $field }: { $current } → { $target } was written on { $resource_kind } { $resource_name }, but creating the operation failed ({ $detail }).{ $annotation ->
        [left] {" "}The kube-proxy confirmation annotation is still on the cluster: remove it by hand (kubectl annotate taloscluster { $resource_name } ichor.maesh.dev/confirm-kube-proxy-switch-).
        [removed] {" "}The kube-proxy confirmation annotation was removed again.
       *[none] {""}
    } Start the same operation again to finish: the spec already names { $target }, so only the operation will be created.
error-annotation-not-removed = The operation was created, but the annotation { $annotation } could not be removed from cluster { $cluster } ({ $detail }). Remove it by hand: kubectl annotate taloscluster { $cluster } { $annotation }-
error-read-only = { $by ->
        [server] { $what }: this server is read-only (serve --read-only): it starts, pauses, resumes and deletes nothing.
       *[client] Read-only (--read-only, or the config marks the context read only): nothing can be changed from here.
    }
error-permission-denied = Permission denied: { $detail }
error-unauthenticated = { $via ->
        [no-token] The server needs a bearer token ({ $detail }): give one with --token-file FILE or the ICHOR_TOKEN variable.
        [token] The server did not accept the bearer token ({ $detail }): check the one in --token-file or ICHOR_TOKEN.
        [kubeconfig] Kubernetes did not accept the credentials of kubeconfig user { $user } ({ $detail }): log in again, or choose another context with --context.
       *[other] Not authenticated: { $detail }
    }
error-unavailable = The API did not answer: { $detail }
error-conflict = Someone changed it at the same time; try again: { $detail }
error-invalid = Kubernetes refused the request: { $detail }
error-internal = Internal error: { $detail }
code-permission-denied = Permission denied: { $detail }
code-not-found = Not found: { $detail }
code-unauthenticated = Not authenticated: { $detail }
code-unavailable = The API did not answer: { $detail }
code-invalid-argument = Invalid request: { $detail }
code-failed-precondition = Refused: { $detail }
code-other = Error: { $detail }
error-changed-since-confirmed = { $operation } changed since you confirmed: { $change ->
        [replaced] it was deleted and another operation of the same name took its place
        [finished] it has finished
        [unfinished] it is running again
        [paused] it was paused
        [resumed] it was resumed
       *[spec] its spec was changed
    } (now { $phase ->
        [Running] running
        [Paused] paused
        [Pending] pending
        [Completed] completed
        [Failed] failed
       *[other] new
    }). Nothing was written; look at it again and decide.
error-plan-changed = The plan changed since you reviewed it: nothing was written. The Review now shows the new plan; review it before you start.
error-start-in-progress = Another start on cluster { $cluster } is under way (by { $actor }): it is creating operation { $operation }. Wait for it to appear, then decide.
error-start-settling = A start on cluster { $cluster } (by { $actor }) got no answer to its create of operation { $operation }: its outcome is being settled until { $until }, and the cluster takes no other start until then. Then look at the list.
error-start-outcome-unknown = Whether the start on cluster { $cluster } happened is not known yet: the create got no answer ({ $detail }). It is being settled: the dashboard looks for it until { $until } and says what came of it. Do not start again.
error-claim-unreadable = The start claim of cluster { $cluster } (Lease { $lease }) cannot be read ({ $detail }): nothing was written. If no start is under way, delete it: kubectl delete lease { $lease } -n { $namespace }
error-request-id-reused = Request id { $request_id } was already sent for another start (another namespace, cluster, kind, target or user): nothing was written. A new start needs a new request id.
error-confirmation-removed = Cluster { $cluster } carried the kube-proxy confirmation ({ $annotation }) left by an earlier start that was stopped: this start removed it.
error-task-failed = Something went wrong inside the dashboard while { $what } ({ $detail }). Nothing more was done; press R to load again, or q to quit.
error-installation-busy = The ichor installation also serves cluster { $cluster }, where operation { $operation } has not completed ({ $phase }): an ichor upgrade waits until no cluster it serves has an unfinished operation.
error-not-permitted = { $scope ->
        [all] You may not { $verb } { $resource } across all namespaces (Kubernetes RBAC).
       *[namespace] You may not { $verb } { $resource } in namespace { $namespace } (Kubernetes RBAC).
    }
error-write-not-applied = { $action ->
        [start] The start on cluster { $operation }
        [pause] The pause of { $operation }
        [resume] The resume of { $operation }
       *[delete] The delete of { $operation }
    } { $late ->
        [refused] did not happen: the Kubernetes API answered that it was not carried out ({ $detail })
        [not-sent] did not happen: no connection to the server could be made ({ $detail })
        [yes] got no answer, and reading the cluster shows it did not happen (yet: the request may still arrive)
       *[no] got no answer, and reading the cluster shows it did not happen
    }. Nothing was retried: look again, and do it again if you still want it.
error-write-outcome-unknown = { $action ->
        [start] The start on cluster { $operation }
        [pause] The pause of { $operation }
        [resume] The resume of { $operation }
       *[delete] The delete of { $operation }
    } got no answer, and the cluster could not be read to find out whether it happened ({ $detail }). Nothing was retried: check the operations list when the API answers.
error-write-target-gone = { $action ->
        [start] The start on cluster { $operation }
        [pause] The pause of { $operation }
        [resume] The resume of { $operation }
       *[delete] The delete of { $operation }
    } got no answer, and reading the cluster shows the operation is gone: whether the { $action ->
        [start] start
        [pause] pause
        [resume] resume
       *[delete] delete
    } happened before it went cannot be known. Nothing was retried.
error-operation-replaced = { $operation } is no longer the operation you confirmed: it is gone, and the name now belongs to another operation ({ $phase }), which was not touched.
error-version-skew = This ichor-tui is { $client } and the server is { $server }: more than one minor version apart, so writes are refused (reads work). Upgrade the { $upgrade ->
        [client] dashboard (ichor-tui)
       *[server] server
    }.
error-write-abandoned = You stopped waiting for the { $action ->
        [start] start
        [pause] pause
        [resume] resume
       *[delete] delete
    }: it may still have happened. This Review shows the cluster as it is now.
error-max-unavailable-over-workers = Max unavailable { $value } is more than the { $workers } workers of cluster { $cluster }.
error-invalid-namespace = “{ $value }” is not a namespace: 1 to 63 of a-z, 0-9 and “-”, starting and ending with a letter or digit.
error-invalid-name = “{ $value }” is not { $what ->
        [cluster] a cluster name
       *[operation] an operation name
    }: 1 to 253 of a-z, 0-9, “-” and “.”, starting and ending with a letter or digit.
error-invalid-kind = The request names no kind of operation this server knows (kind { $value }).
error-invalid-request-id = “{ $value }” is not a request id: 1 to 64 letters, digits, “-”, “_” or “.”.
error-invalid-fingerprint = “{ $value }” is not the fingerprint of a plan: review the operation again.
error-invalid-confirmation = The confirmation carries an invalid { $field } (“{ $value }”): look at the operation again.
error-operation-unreadable = Operation { $operation } cannot be read ({ $detail }): nothing was written. Fix the object (or delete it with kubectl) first.
error-cluster-unreadable = Cluster { $cluster } cannot be read ({ $detail }): fix the TalosCluster object first.
error-machine-unreadable = Machine { $machine } of cluster { $cluster } cannot be read ({ $detail }): fix it before starting, so the plan shows every machine.
# A bound of serve's was reached: $limit names it (as serve's metrics do), $max is its number.
error-limit-reached = { $limit ->
        [calls_in_flight] The server is answering { $max } calls, its limit: try again in { $retry } s.
        [calls_per_person] You have { $max } calls being answered already, your share: try again in { $retry } s.
        [writes_in_flight] The server is carrying out { $max } writes, its limit: try again in { $retry } s.
        [writes_per_person] You have { $max } writes being carried out already, your share: try again in { $retry } s.
        [bodies] The server is reading { $max } requests' bodies, its limit: try again in { $retry } s.
        [bodies_per_person] The server is reading { $max } of your requests' bodies already, your share: send each body with its request, and try again in { $retry } s.
        [subscribing] The server is setting up { $max } subscriptions, its limit: try again in { $retry } s.
        [subscribing_per_person] You are setting up { $max } subscriptions already, your share: try again in { $retry } s.
        [connections_per_person] Your calls hold { $max } connections to the server already, your share: send them on the connections you hold.
        [token_reviews] The server is asking Kubernetes about { $max } tokens, its limit: try again in { $retry } s.
        [lists_in_flight] The server is reading { $max } whole lists from Kubernetes, its limit: try again in { $retry } s.
        [lists_per_person] The server is reading { $max } whole lists for you already, your share: try again in { $retry } s.
        [reflection_streams] The server holds { $max } reflection streams, its limit: try again in { $retry } s.
        [reflection_streams_per_person] You hold { $max } reflection streams already, your share: close one first.
        [streams] The server holds { $max } streams of updates, its limit: poll, and subscribe again later.
        [anonymous_streams] Callers without a token hold { $max } streams of updates together, their limit: send a token, or close one.
        [streams_per_caller] You hold { $max } streams of updates already: close one first.
        [live_queries] The server keeps { $max } distinct lists up to date, its limit: poll this one, or subscribe with a list someone already keeps.
        [live_queries_per_namespace] The server keeps { $max } distinct lists up to date in this namespace, its limit: poll this one, or subscribe with a list someone already keeps.
        [live_queries_per_caller] Your streams keep { $max } distinct lists up to date already: close one, or poll this one.
        [live_queries_per_caller_in_namespace] Your streams keep { $max } distinct lists up to date in this namespace already, your share: close one, or poll this one.
        [health_streams] The server holds { $max } health streams, its limit: check instead (grpc.health.v1.Health/Check).
        [watches] The server follows { $max } namespaces for streams already: poll this one.
       *[other] The server reached its limit of { $max } ({ $limit }): try again later.
    }
error-deadline-passed = { $during ->
        [claimed] Starting the operation took longer than { $limit } s after the cluster was claimed: stopped before writing, so the claim cannot lapse under it.
        [write] The call's deadline passed; a write once begun is carried to its end without you: read the operation to learn its outcome.
        [authentication] The call's deadline passed while its caller was being authenticated.
        [stream] The call's deadline passed: the stream ends there (subscribe again, with a later deadline or none).
       *[read] The call's deadline passed before the answer was ready.
    }
error-shutting-down = The server is shutting down: { $then ->
        [subscribe] subscribe again (another replica answers, or this one once it is back).
       *[call] call again (another replica answers, or this one once it is back).
    }
error-invalid-query = { $what ->
        [view] View { $value } is not one this server knows.
        [page_size] The page size must not be negative (it is { $value }).
        [order_by] The order is one of create_time, name and state, each with desc or not.
        [phases] Phase “{ $value }” is not one of Pending, Running, Paused, Completed, Failed.
        [filter] The filter must be at most { $max } characters, without control characters.
        [known_version] Version “{ $value }” is longer than { $max } characters: it is not one this server gave (send the one a page carried, or none).
        [page_token] The page token is not one this server gave for this query: ask for the first page again.
       *[other] The list's { $what } is not valid.
    }
