too-small = terminal too small (need { $w }×{ $h })
# Under it: what keys do meanwhile.
too-small-keys = Keys are off until it is larger; q quits.
status-all-namespaces = all namespaces
status-namespace = namespace { $ns }
# The same where the status bar is narrow.
status-all-namespaces-short = all ns
status-namespace-short = ns { $ns }
status-user = user { $user }
status-updated = updated { $age } ago
status-updated-now = updated just now
status-live = live
status-never-updated = not updated yet
badge-read-only = READ-ONLY
badge-stale = STALE
badge-live-off = live updates off
# An ichor-ui named by --ichor-ui (or the config file) could not be reached: the service runs in-process.
badge-ichor-ui-not-reached = ichor-ui not reached
dur-seconds = { $n }s
dur-minutes = { $n }m
dur-hours = { $n }h
dur-days = { $n }d
# The status bar says the time of the data on screen meanwhile.
banner-retrying = { $side } not answering, retrying in { $n } s (since { $since })
# A later countdown of the same outage ({ $round }: which one, 2, 3, …): a new wait, said as one.
banner-retrying-again = { $side } not answering, retry { $round } in { $n } s (since { $since })
# The countdown reached zero: the try is under way.
banner-retrying-now = { $side } not answering, retrying now (since { $since })
banner-gave-up = { $side } not answering since { $since }: gave up; R to retry
banner-tunnel-retrying = tunnel to ichor-ui closed, reopening in { $n } s (since { $since })
banner-tunnel-retrying-again = tunnel to ichor-ui closed, reopening it (try { $round }) in { $n } s (since { $since })
banner-tunnel-retrying-now = tunnel to ichor-ui closed, reopening it now (since { $since })
banner-tunnel-gave-up = tunnel to ichor-ui closed since { $since }: gave up reopening it; R to retry
footer-filter = type to filter · Enter keep · Esc clear
footer-confirm = y yes · N no (default)
footer-help = ↑↓ scroll · Esc close
footer-resume-after-failure = resume (machine failed)
help-title = Keys
help-confirm = answer a question (No is the default)
list-more = +{ $n } more
list-above = ↑ { $n } above
# The same, for lines of text that scroll (help, a Review, a text read whole).
lines-more = +{ $n } more lines
lines-above = ↑ { $n } lines above
key-up = move up
key-down = move down
key-top = first
key-bottom = last
key-page-up = page up
key-page-down = page down
key-open = open
key-filter = filter
key-clear-filter = clear the filter
key-pause = pause
key-resume = resume
key-delete = delete
key-scroll-up = scroll up
key-scroll-down = scroll down
key-back = back
key-operations = operations
key-refresh = refresh
key-help = help
key-quit = quit
key-suspend = back to the shell (fg returns)
loading = Loading…
unknown = unknown
kind-talos = Talos upgrade
kind-kubernetes = Kubernetes upgrade
kind-ichor = ichor upgrade
kind-cni = kube-proxy switch
kind-shutdown = Shutdown
kind-ca-rotation = CA rotation
kind-short-talos = Talos
kind-short-kubernetes = Kubernetes
kind-short-ichor = ichor
kind-short-cni = kube-proxy
kind-short-shutdown = Shutdown
kind-short-ca-rotation = CA rotation
state-waiting-lock = Waiting: lock
phase-new = New
phase-pending = Pending
phase-running = Running
phase-paused = Paused
phase-completed = Completed
phase-failed = Failed
phase-other = Unknown
state-paused-failed = Paused: failed
state-pausing = Pausing
state-deleting = deleting
state-deleting-waiting = deleting (waiting for { $finalizers })
mphase-pending = Pending
mphase-running = Running
mphase-completed = Done
mphase-failed = Failed
mphase-skipped = Skipped
role-controlplane = control
role-worker = worker
why-read-only = Read-only: ichor-tui was started with --read-only or the config marks this context read only, so nothing can be changed from here.
why-nothing-selected = No operation is selected.
why-finished = The operation has finished: there is nothing to pause or resume.
why-already-paused = The operation is already paused.
why-resume-after-failure = A failed machine paused this operation: resuming does nothing. Delete it and start again.
why-not-paused = The operation is not paused.
key-switch = switch between operations and clusters
key-clusters = clusters
key-new = new operation
key-choose = choose
key-next-field = next field
key-prev-field = previous field
key-review = review
key-cancel = cancel
key-start = start
key-edit = edit
why-no-cluster = No cluster is selected.
approved-yes = ✓ yes
approved-no = ✗ no
why-not-permitted = Kubernetes RBAC does not let you do this here.
why-write-pending = A write is waiting for its answer: wait for it, or press Esc to stop waiting.
footer-stop-waiting = Esc stop waiting
key-replan = review again
status-data-from = data from { $time }
# The data on screen, and which side does not answer ({ $side }: a side-* word).
status-data-from-side = data from { $time } · { $side } not answering
status-no-data-side = no data · { $side } not answering
side-kubernetes = Kubernetes API
side-tunnel = ichor-ui (tunnel)
side-server = ichor-ui server
why-unreadable = This object cannot be read, so nothing can be done to it from here: fix it first (kubectl edit).
why-gone = This operation no longer exists: there is nothing to pause, resume or delete.
kind-unreadable = unreadable
state-unreadable = Unreadable
route-demo = demo
route-tunnel = via ichor-ui (tunnel)
route-in-process = in-process ({ $context })
route-fallback = { $route }: { $why }
# Beside the route: the kubeconfig context and the Kubernetes API server it reaches (in production the
# label names the context: the server alone).
route-in-process-here = in-process
status-reaches = context { $context } · API { $server }
status-reaches-short = { $context } · API { $server }
status-api-server = API { $server }
fallback-chosen = chosen
fallback-not-found = ichor-ui not found
fallback-not-ready = ichor-ui not ready
fallback-no-port = ichor-ui has no such port
fallback-no-token = no token to forward ({ $how })
fallback-forbidden = ichor-ui not reachable (forbidden)
fallback-not-answering = ichor-ui not answering
# The usual fallback, when no ichor-ui was asked for by name: what is true here, no alarm.
fallback-here-not-found = ichor-ui is not deployed here
fallback-here-not-ready = ichor-ui has no ready pod here
fallback-here-no-port = ichor-ui here has no such port
fallback-here-no-token = no token to forward to ichor-ui ({ $how })
fallback-here-forbidden = ichor-ui here is not open to you
fallback-here-not-answering = ichor-ui is not serving here
server-version = server { $version }
server-version-unknown = server version unknown
banner-credentials-rotated = Kubernetes no longer accepts this dashboard's credentials: CA rotation { $operation } replaced the CAs of { $cluster }. Run ichor cluster bundle-export { $cluster } and start ichor-tui with the new ones.
banner-credentials-refused = Kubernetes no longer accepts this dashboard's credentials. After a CA rotation, fetch new ones with ichor cluster bundle-export CLUSTER; else log in again. Then start ichor-tui again.
unknown-command = There is no command :{ $command }. Try :ops [CLUSTER], :clusters, :ns NAME, :ctx NAME, :help or :q (Tab completes).
footer-command = Tab complete · Enter run · Esc cancel
key-command = command line (its commands below)
key-yaml = YAML
key-whole-text = read all
key-close = close
reading-yaml-title = { $name } · YAML (read only)
reading-whole-title = { $name } · all of it
reading-conditions = Conditions:
reading-machines = Machines:
reading-hold = held: { $reason }
field-namespace = Namespace
field-kind = Kind
field-cluster = Cluster
notify-title = ichor-tui
notify-completed = { $name } completed (cluster { $cluster })
notify-failed = { $name } stopped on a failure (cluster { $cluster })
notify-awaits-credentials = { $name } awaits credentials: fetch them now (cluster { $cluster })
key-clear-text = clear the text typed
key-delete-word = delete the word before the cursor

# What Kubernetes RBAC does not let the caller do, named as a Review names it.
why-not-permitted-patch = Kubernetes RBAC does not let you patch talosoperations in namespace { $namespace }: pause and resume need it.
why-not-permitted-delete = Kubernetes RBAC does not let you delete talosoperations in namespace { $namespace }.
why-not-permitted-start = Kubernetes RBAC does not let you start operations in namespace { $namespace }: a start needs create on talosoperations and create and update on leases.
# Between the names of a list (clusters).
list-separator = {", "}
# A cluster's unfinished operation: its kind, phase and name.
cluster-active = { $kind } · { $phase } ({ $name })
# A row of a list that cannot be read, and why.
row-unreadable = ⚠ Unreadable: { $why }
# The command line's :ns, and R's answer.
namespace-usage = Listing namespace { $ns }. :ns NAME lists another one; :ns all lists every namespace.
namespace-usage-all = Listing every namespace. :ns NAME lists one namespace.
namespace-invalid = "{ $value }" is not a namespace name: 1 to 63 of a-z, 0-9 and -, starting and ending with a letter or digit. :ns all lists every namespace.
refreshed = Refreshed.
context-usage = Using kubeconfig context { $current }. :ctx NAME switches to another of { $contexts }.
context-unknown = The kubeconfig has no context "{ $value }". Its contexts: { $contexts }.
context-none = There is no kubeconfig context to switch: this dashboard reaches a server or the demo.
context-busy = The context is not switched while a write or a start's outcome is awaited: try again once it is settled.
context-switching = Reaching context { $name }…
context-switched = Context { $name }: the route, the user and the permissions were asked again.
context-failed = Context { $name } could not be reached; still on { $current }: { $why }
# On the Operations list: where new operations start.
footer-to-clusters = 2 clusters (n new operation)
# A text read (YAML, the page whole) and its search (/, n, N).
footer-reading = ↑↓ scroll · / search · Esc close
footer-search-typing = /{ $text }▏ · Enter find · Esc cancel
footer-search = /{ $text }: { $n ->
        [one] 1 line
       *[other] { $n } lines
    } · n next · N previous · Esc clear
footer-search-none = /{ $text }: not found · / search again · Esc clear
# ? lists these: the sort keys of the Operations list, the command line's commands (under :),
# Tab on the command line, and the search of a text read (YAML, a page whole).
key-sort-name = sort by name (again: the other way)
key-sort-age = sort by age (again: the other way)
key-sort-state = sort by state (again: the other way)
key-cmd-ops = the operations list (of CLUSTER alone, if named)
key-cmd-ns = list namespace NAME (all: every namespace)
key-cmd-ctx = switch kubeconfig context
key-cmd-clusters = the clusters list
key-cmd-help = these keys
key-cmd-quit = quit
key-complete = complete a command (command line)
key-search = search (Enter finds; Esc clears)
key-search-next = next line found
key-search-prev = previous line found

## Production contexts and the slow notification (issue 38).
badge-production = PRODUCTION { $context }
badge-production-alone = PRODUCTION
help-estimate = LEFT and Estimate: each role at its pace, the median of its machines that were not slow; none while paused
help-since = Running for: since the start or the last resume; Pausing: since asked; Paused: since it took effect
help-production = Production context { $context }: every pause, resume, delete and start asks for the cluster's name typed, then Enter.
confirm-type-name = Production: type the cluster name { $cluster } to confirm, then Enter.
footer-typed-confirm = type the name · Enter confirm · Esc cancel
name-not-typed = Not done: the cluster name { $cluster } was not typed. Nothing was written.
notify-slow = { $name } is slow: a machine takes far longer than its peers (cluster { $cluster })
dur-hours-minutes = { $h }h { $m }m
