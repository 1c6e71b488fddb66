clusters-title = Clusters ({ $n })
clusters-title-loading = Clusters
clusters-empty = No TalosCluster here.
cluster-title = Cluster { $name }
cluster-machines = { $cp } cp, { $w } w
cluster-machines-short = { $cp }+{ $w }
cluster-held = , { $n } held
cluster-tracked = { $tool }: { $object }
cluster-not-tracked = not tracked
col-talos = TALOS
col-kubernetes = KUBERNETES
col-kube-proxy = KUBE-PROXY
col-kubernetes-short = K8S
col-kube-proxy-short = PROXY
col-machines = MACHINES
col-gitops = GITOPS
col-active = UNFINISHED
col-order = ORDER
col-approved = APPROVED
col-hold = HOLD
field-talos = Talos
field-kubernetes = Kubernetes
field-kube-proxy = kube-proxy
field-ichor = ichor
field-machines = Machines
field-gitops = GitOps
field-unfinished = Unfinished
new-title = New operation on { $cluster }
review-title = Review: { $kind } on { $cluster }
form-kind = What to do
effect-reboot = reboots each machine
effect-restart = restarts components on each machine
effect-stop = stops every machine
effect-none = touches no machine
effect-ca-rotation = rotates the cluster's CAs
form-version = Target version
form-kube-proxy = kube-proxy
form-current = now { $value }
form-target-required = Type the version to upgrade to, such as { $kind ->
        [kubernetes] v1.33.0
        [ichor] v0.15.0
       *[other] v1.9.3
    }.
form-invalid-version = “{ $value }” is not a version such as { $kind ->
        [kubernetes] v1.33.0
        [ichor] v0.15.0
       *[other] v1.9.3
    }.
form-invalid-max = Max unavailable is a whole number, at least 1.
form-kube-proxy-hint = Space or ←/→ chooses.
form-max-unavailable = Max unavailable
form-max-unavailable-hint = Workers handled at once; control planes always one at a time.
form-nothing-to-enter = Nothing to enter: Enter shows what will happen.
form-nothing-written = Nothing is written until you start it on the next screen.
review-effect-reboot = Each machine is upgraded and rebooted, one step at a time.
review-effect-restart = Components restart on each machine, one step at a time; no machine reboots.
review-effect-stop = Every machine is shut down: the workers together, then the control planes. The cluster stops.
review-effect-none = No machine is touched: only the ichor installation is upgraded.
review-effect-ca-rotation = The cluster's certificate authorities are rotated, machine by machine, in 5 passes.
review-count = { $machines } machines in { $steps } steps
review-spec-write = Start writes { $field }: { $from } → { $to } on { $kind } { $name }, then creates the operation.
review-no-spec-write = The spec already names { $target }: Start only creates the operation.
ca-note-passes = Each machine is reconfigured once per pass, without a reboot (5 passes).
ca-note-kubelet = The kubelet restarts on each machine in the passes that change the Kubernetes CA.
ca-note-bundle = When the rotation completes the secrets bundle is replaced and your copy is stale: run ichor cluster bundle-export { $name }.
review-held = Held, skipped ({ $n }):
review-planning = Asking for the plan (nothing is written)…
review-blocked = Start is not offered:
review-starting = Starting… (sent once; Esc stops waiting, the start may still happen)
review-denied = You may not start this:
review-shared = { $n ->
        [one] The ichor installation also serves cluster { $clusters }: it is upgraded too.
       *[other] The ichor installation also serves { $n } other clusters, upgraded too: { $clusters }.
    }
review-type-name = Type the cluster name { $name } to confirm:
review-name-ok = ✓ matches
review-name-mismatch = does not match yet
review-start = Nothing has been written yet. Enter starts it.
review-start-again = Enter starts it again: the spec already says so, so only the operation is created.
review-start-new = Enter starts it anew, against the cluster as it is now.
review-start-locked = Start is not offered until the name is typed exactly.
review-steps = In this order:
review-step = { $machines } ({ $role })
started = Started { $name }.
start-not-created = The start on cluster { $cluster } did not happen: no operation carries its request id, and the create can no longer land. You may start again.
start-settling = The start on cluster { $cluster }: outcome not known yet, looking for it until { $until }. Do not start again.
review-stray-confirmation = ⚠ Cluster { $cluster } carries the kube-proxy confirmation (ichor.maesh.dev/confirm-kube-proxy-switch) left by an earlier start that was stopped: this start removes it.
cluster-stray-confirmation = ⚠ The kube-proxy confirmation (ichor.maesh.dev/confirm-kube-proxy-switch) is on this cluster, left by a start that was stopped: the next start removes it (or: kubectl annotate taloscluster { $cluster } ichor.maesh.dev/confirm-kube-proxy-switch-).
started-spec-written = {" "}Wrote { $field }: { $from } → { $to }.
cluster-unreadable = ⚠ This object cannot be read as a TalosCluster: { $why }. Nothing can be started on it until it is fixed (kubectl edit).
machine-unreadable = ⚠ unreadable: { $why }
review-held-not-skipped = Held, but not skipped ({ $n }): { $kind ->
        [shutdown] a shutdown stops every machine.
       *[other] a machine left out would be locked out when the old CA is dropped.
    }
review-unapproved = Not approved, not touched ({ $n }):
review-not-offered = Start is not offered (the reason is at the top); nothing has been written.
review-settling = Start is not offered while the last start’s outcome is being settled (above): it may still create its operation.
ca-note-credentials = Your credentials for { $name } (kubeconfig, talosconfig) stop working when the old CA is dropped: when the rotation reaches “Awaiting credentials”, fetch the new ones with ichor cluster bundle-export { $name }.
started-ca-bundle = {" "}When it awaits credentials, and again when it completes, run ichor cluster bundle-export { $name }: your credentials and your copy of the secrets bundle go stale.
field-shutdown = Shut down
cluster-shutdown = { $time } by { $user } ({ $operation })
cluster-still-down = ⚠ Nothing was started on this cluster since: its machines are presumably still stopped.
review-shut-down = Cluster { $cluster } was shut down at { $time } by { $user } ({ $operation }) and nothing was started on it since: its machines are presumably stopped. Power them on before you start this: an operation cannot work on stopped machines.
versions-running-other = { $spec } ({ $n } of { $total } run { $running })
versions-running-other-short = { $spec } ({ $n } differ)
review-runs-target = { $n } of the { $total } machines already report { $target } ({ $machines }). The plan does not leave them out: they are in the steps, in the order the executor handles the machines. The executor takes the target from the spec when each machine's turn comes.
review-production = This is a production context: every start asks for the cluster's name typed.
