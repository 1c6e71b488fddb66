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
