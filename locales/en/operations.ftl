operations-title = Operations ({ $n })
operations-title-loading = Operations
operations-filter = {" "}· filter: { $filter } ({ $n } shown)
operations-empty = No operations in namespace { $ns }.
operations-empty-all = No operations in any namespace.
operations-no-match = No operation matches the filter. Esc clears it.
col-namespace = NAMESPACE
col-name = NAME
col-kind = KIND
col-cluster = CLUSTER
col-state = STATE
col-progress = PROGRESS
col-age = AGE
col-actor = STARTED BY
col-machine = MACHINE
col-role = ROLE
col-phase = PHASE
col-elapsed = TIME
col-message = MESSAGE
operation-gone = Operation { $name } no longer exists.
# The page's state once a read says the operation no longer exists, and when it was last seen.
state-gone = Gone (last seen { $time })
state-gone-unseen = Gone
# Beside the state while the data may be out of date (the status bar says why); it brings its own
# space where its language puts one.
state-data-from = {" "}(data from { $time })
field-name = Name
field-state = State
field-target = Change
field-started-by = Started by
field-elapsed = Elapsed
field-progress = Progress
field-ca-pass = Stage
paused-by = paused by { $user } at { $time }
resumed-by = resumed by { $user } at { $time }
field-history = History
history-entry = { $time } { $said }
history-no-time = (time unknown)
history-start = started by { $user }
history-pause = pause asked by { $user }
history-resume = resume asked by { $user }
history-delete = delete asked by { $user }
history-confirm-kube-proxy = kube-proxy switch confirmed by { $user }
history-other = { $action } by { $user }
history-outcome = { $said } ({ $outcome })
history-earlier = { $n ->
    [one] 1 earlier entry (Enter: all)
   *[other] { $n } earlier entries (Enter: all)
}
machines-done = { $done }/{ $total } machines
machine-passes-done = { $done }/{ $total } machine passes
ca-preparing = Preparing: the new CAs are not saved yet
ca-pass = Pass { $pass } of { $passes }: { $stage }
ca-stage-accepting = Accepting
ca-stage-issuing = Issuing
ca-stage-awaitingcredentials = Awaiting credentials
ca-stage-dropping = Dropping
waiting-for-lock = Waiting for the cluster lock held by { $holder }
failure-machine = Machine { $machine } failed.
failure-machine-said = Machine { $machine } failed: { $message }
failure-operation = The operation failed, not a machine: { $reason }
failure-operation-no-reason = The operation failed, not a machine; the controller gave no reason.
ca-awaiting-credentials = The new credentials are ready: fetch them now with ichor cluster bundle-export { $name }. Your old ones stop working when the old CA is dropped, in the next pass.
ca-completed-bundle = The rotation is complete: the secrets bundle in the cluster was replaced and your copy is stale. Run ichor cluster bundle-export { $name }.
failure-reason = Reason: { $reason }
failure-advice = Nothing retries and nothing is rolled back: delete this operation (d) and start again.
failure-advice-gone = Nothing retries and nothing is rolled back. The operation is gone, so a new one can be started on this cluster.
no-machine-started = No machine has started yet.
no-machine-steps = This operation touches no machine.
pending-pause = Pausing { $name }… (sent once; Esc stops waiting)
pending-resume = Resuming { $name }… (sent once; Esc stops waiting)
pending-delete = Deleting { $name }… (sent once; Esc stops waiting)
abandoned-pause = Stopped waiting for the pause of { $name }: it may still have happened. The screen shows what the cluster holds.
abandoned-resume = Stopped waiting for the resume of { $name }: it may still have happened. The screen shows what the cluster holds.
abandoned-delete = Stopped waiting for the delete of { $name }: it may still have happened. The screen shows what the cluster holds.
done-pause = Paused { $name }: the machine under way finishes, then nothing else starts.
done-resume = Resumed { $name }.
done-delete = Deleted { $name }.
confirm-pause-title = Pause { $name }?
confirm-pause-body = The machines under way finish their step; no further machine starts until you resume.
confirm-pause-prompt = y pause · N keep running (default)
confirm-resume-title = Resume { $name }?
confirm-resume-body = The controller continues with the next machine in order.
confirm-resume-prompt = y resume · N keep paused (default)
confirm-delete-title = Delete { $name }?
confirm-delete-body = The operation has completed: deleting it removes it from the list and changes nothing on the machines.
confirm-delete-waiting = The operation has not started yet (it waits for the cluster lock or the controller): deleting it removes it before it touches any machine.
confirm-delete-paused = The operation is paused: deleting it removes it, and it does not go on. Nothing is rolled back: the machines already done stay as they are.
confirm-delete-paused-failed = A failed machine paused the operation: deleting it frees the cluster for a new start. Nothing is rolled back: the machines already done stay as they are, and so does the failed one.
confirm-delete-failed = The operation failed: deleting it removes it from the list. Nothing is rolled back: the machines already done stay as they are.
confirm-delete-running = The operation is still running: deleting it stops it after the current machine. Nothing is rolled back, and machines already done stay as they are.
confirm-delete-prompt = y delete · N keep (default)
resume-not-offered = Resume is not offered for { $name }: a failed machine paused it. Nothing retries and nothing is rolled back: delete it and start again.
operation-unreadable = This object cannot be read as a TalosOperation: { $why }
operation-unreadable-advice = Its progress is unknown and nothing can be done to it from here until it is fixed (kubectl edit), or deleted with kubectl. The rest of the list stays live, and this page follows it: it mends by itself once the object is fixed.
page-more = ↓ { $n } more lines: Enter shows it all
clusters-no-match = No cluster matches the filter. Esc clears it.
key-events = all events
# The events overlay's footer: the keys that do something now (the scroll keys while the
# events do not all fit, a while older events are not loaded), joined with " · ".
footer-events-scroll = ↑↓ scroll
footer-events-ends = g/Home first · G/End last
footer-events-load-all = a load all
footer-events-close = Esc close
events-heading = Events ({ $n } of { $n } loaded; e: all)
events-heading-none = Events
events-title = Events of { $name }, newest first
events-none = No events recorded for this operation or its machines.
events-forbidden = You may not read events in this namespace (RBAC), so what the executor recorded is not shown.
events-unavailable = This server does not list events.
events-unreadable = Events could not be read: { $why }
events-heading-capped = Events (the newest { $n } loaded, older events not loaded; e: all)
events-count = { $n ->
    [one] 1 event, loaded.
   *[other] { $n } events, all loaded.
}
events-count-capped = Older events not loaded: the newest { $n } are shown (the server sends at most { $n }).
# :ops CLUSTER: the list of one cluster's operations.
operations-cluster = {" "}· cluster { $cluster }
operations-empty-cluster = No operations of cluster { $cluster } here. :ops lists every cluster's.
col-target = TARGET
events-heading-known = Events ({ $n } of { $total } loaded, older events not loaded; e: all)
events-count-known = Older events not loaded: the newest { $n } of { $total } are shown. a: load all (at most { $max }).
events-count-loading-all = Loading all { $total } events (at most { $max }); the newest { $n } are shown meanwhile.
events-count-all-capped = The newest { $n } of { $total } events are loaded: at most { $max } are loaded.
key-load-all-events = load all events (at most 1000)

## How long (issue 38): the time in a phase, the pace so far, slow machines and the estimate.
state-for = { $state } for { $time }
state-since = { $state } since { $time }
state-slow = Slow
mphase-slow = Slow
field-estimate = Estimate
col-left = LEFT
estimate-about = about { $span } left { $basis }
estimate-none-yet = no estimate yet: no machine has finished
estimate-short = ~{ $time }
estimate-under-minute = under a minute left { $basis }
estimate-short-under-minute = <1m
estimate-short-slow = >{ $span }
pace-basis-so-far = at the pace so far
pace-basis-prior = at the pace of the last { $n ->
    [one] run
   *[other] { $n } runs
} of this kind on this cluster
estimate-then-about = about { $span } left
estimate-then-under-minute = under a minute left
estimate-after-slow = after { $machine }, slow for { $span }{ $more }; then { $then } { $basis }
estimate-slow-more = {" "}(and { $n ->
    [one] 1 more slow machine
   *[other] { $n } more slow machines
})
estimate-halted = { $n ->
    [one] 1 machine left
   *[other] { $n } machines left
}; no estimate while paused
estimate-halted-none-left = every machine is done; resuming completes it
machine-time-pace = { $time } of ~{ $pace }
machine-slow = { $machine } is slow: { $span } in this step; the pace so far is { $pace }, slow past { $bound }.
machine-slow-more = { $n } more machines are slow.
last-warning = Last warning ({ $time }): { $reason }: { $message }
waiting-for-lock-since = Waiting since { $time } for the cluster lock held by { $holder }
bundle-stale = The cluster's secrets bundle backup is stale since { $time }: { $message }. Run ichor cluster bundle-export { $name }.
key-report = report
report-saved = The report of { $name } was written to { $path }
report-failed = The report of { $name } could not be written: { $why }
