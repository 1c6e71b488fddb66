# The command line (ichor-tui operation|upgrade|cni|cluster): questions, follow lines, exit words.
cli-needs-yes = { $command } asks before it writes, and standard input is not a terminal: nothing was written. Add --yes to confirm without the question.
cli-yes-no = [y/N]
cli-ask-start = Start the { $kind } on cluster { $cluster }?
cli-declined = Nothing was written.
cli-name-mismatch = “{ $typed }” is not { $name }: nothing was written.
cli-plan-title = Plan: { $kind } on cluster { $cluster }
cli-failure-advice = Nothing retries and nothing is rolled back: delete it (ichor-tui operation delete { $name }) and start again.
cli-following = Following { $name } until it ends (Ctrl-C stops following; the operation goes on).
cli-completed = { $name } completed.
cli-exit-failed = { $name } stopped on a failure: exit code 3.
cli-machine-line = { $machine }: { $phase }
cli-paused-by = paused by { $user }
cli-no-machines = No machine steps.
cli-plan-changed = Run the command again to see the new plan.
cli-asking-ichor-ui = Looking for ichor-ui ({ $service }) through { $server }: each question may take { $seconds } s.
cli-reading-directly = { $why }: the cluster is read directly.
# A command that waited for an API that did not answer says, once it answers again, since when it did not.
cli-answers-again = { $side } answers again (it did not answer from { $since }).


## A run's report (operation report, and w on an operation's page).
report-title = Report: { $kind } on cluster { $cluster } ({ $name })
report-created = Created
report-started = Started
report-finished = Finished
report-max-unavailable = Max unavailable
report-order = The plan's order
report-skipped = Skipped: { $machines }
report-machines = Machines
report-col-step = STEP
report-col-started = STARTED
report-col-finished = FINISHED
report-col-result = RESULT
report-warnings = Warnings
report-no-warnings = No warning was recorded.
report-events-unread = The events could not be read, so the warnings are not known: { $why }
report-failure = Failure
report-at-end = What the machines run
report-cluster-unread = The cluster could not be read: what the machines run is not known.
report-totals = Totals
report-count = { $machines ->
    [one] { $machines } machine
   *[other] { $machines } machines
}: { $done } done, { $failed } failed, { $skipped } skipped, { $left } not done
report-took = Took { $time }, from its start to its end
report-took-so-far = Not finished: { $time } since its start, when this report was made
report-order-machine = { $machine } ({ $role })
report-timeline = Timeline
report-timeline-empty = Nothing was recorded.
report-timeline-started = the controller started it
report-timeline-machine-failed = machine { $machine } failed
report-timeline-completed = completed
report-timeline-failed = failed
report-pace = Pace of a { $role } machine (the median of those that were not slow): { $span }
report-warning-count = { $n ->
    [one] { $n } warning
   *[other] { $n } warnings
}
report-made = Report made { $time } by ichor-tui.
cli-production = Context { $context } is production: the cluster's name is asked for before every write.
cli-needs-confirm-cluster = Context { $context } is production: --yes writes only with --confirm-cluster NAME naming the cluster. Nothing was written.
cli-confirm-cluster-mismatch = --confirm-cluster { $typed } is not { $cluster }, the cluster of this write: nothing was written.
cli-production-server = Context { $context } reaches API server { $server }, which is production: the cluster's name is asked for before every write.
cli-needs-confirm-cluster-server = Context { $context } reaches API server { $server }, which is production: --yes writes only with --confirm-cluster NAME naming the cluster. Nothing was written.
# ichor-tui version: this binary, the route the flags reach, the server's and Kubernetes' versions.
version-client = Client Version: { $version }
version-commit = Commit: { $commit }
version-built = Build Date: { $date }
version-route = Route: { $route }
version-route-server = the server { $url }
version-route-tunnel = ichor-ui ({ $service }) through a port-forward
version-route-in-process = in-process, context { $context }
version-server = Server Version: { $version }
version-server-in-process = Server Version: { $version } (the service runs in this process)
version-server-unnamed = Server Version: not named by the server
version-kubernetes = Kubernetes Version: { $version }
version-server-unreached = the server's version: not reached
