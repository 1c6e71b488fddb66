### 表記の決まり: see the head of common.ftl (和欧間スペース, one term for each thing, 全角の括弧と約物).

clusters-title = クラスター（{ $n } 件）
clusters-title-loading = クラスター
clusters-empty = ここには TalosCluster がありません。
cluster-title = クラスター { $name }
cluster-machines = コントロールプレーン { $cp }・ワーカー { $w }
cluster-machines-short = { $cp }+{ $w }
cluster-held = ・保留 { $n }
cluster-tracked = { $tool }：{ $object }
cluster-not-tracked = なし
col-talos = Talos
col-kubernetes = Kubernetes
col-kube-proxy = kube-proxy
col-kubernetes-short = K8s
col-kube-proxy-short = プロキシ
col-machines = マシン
col-gitops = 管理元
col-active = 未完了
col-order = 順序
col-approved = 承認
col-hold = 保留理由
field-talos = Talos
field-kubernetes = Kubernetes
field-kube-proxy = kube-proxy
field-ichor = ichor
field-machines = マシン
field-gitops = 管理元
field-unfinished = 未完了
new-title = 新しいオペレーション · クラスター { $cluster }
review-title = レビュー：{ $kind } · クラスター { $cluster }
form-kind = 実行する内容
effect-reboot = 各マシンを再起動
effect-restart = 各マシンでコンポーネントを再起動
effect-stop = すべてのマシンをシャットダウン
effect-none = マシンには触れない
effect-ca-rotation = クラスターの CA を入れ替え
form-version = 目標バージョン
form-kube-proxy = kube-proxy
form-current = 現在 { $value }
form-target-required = { $kind ->
        [kubernetes] v1.33.0
        [ichor] v0.15.0
       *[other] v1.9.3
    } のようにアップグレード先のバージョンを入力してください。
form-invalid-version = 「{ $value }」は { $kind ->
        [kubernetes] v1.33.0
        [ichor] v0.15.0
       *[other] v1.9.3
    } のようなバージョンではありません。
form-invalid-max = 最大同時処理数は 1 以上の整数です。
form-kube-proxy-hint = スペースか ←/→ で選びます。
form-max-unavailable = 最大同時処理数
form-max-unavailable-hint = 同時に処理するワーカーの数です。コントロールプレーンは常に 1 台ずつです。
form-nothing-to-enter = 入力する項目はありません。Enter で実行内容をレビューします。
form-nothing-written = 次の画面で開始するまで、何も書き込みません。
review-effect-reboot = 各マシンを 1 ステップずつアップグレードし、再起動します。
review-effect-restart = 各マシンのコンポーネントを 1 ステップずつ再起動します。マシンは再起動しません。
review-effect-stop = すべてのマシンをシャットダウンします。ワーカーをまとめてシャットダウンした後、コントロールプレーンをシャットダウンします。クラスターは止まります。
review-effect-none = マシンには触れません。ichor インストールだけをアップグレードします。
review-effect-ca-rotation = クラスターの認証局（CA）を、マシンごとに 5 ラウンドで入れ替えます。
review-count = { $machines } 台を { $steps } ステップで
review-spec-write = 開始すると { $kind } { $name } の { $field } を { $from } → { $to } に書き換えてから、オペレーションを作成します。
review-no-spec-write = spec はすでに { $target } です。開始してもオペレーションを作成するだけです。
ca-note-passes = 各マシンはラウンドごとに 1 回、再起動せずに設定し直されます（全 5 ラウンド）。
ca-note-kubelet = Kubernetes の CA を変えるラウンドでは、各マシンの kubelet が再起動します。
ca-note-bundle = 完了するとシークレットバンドルが置き換わり、手元のコピーは古くなります。ichor cluster bundle-export { $name } を実行してください。
review-held = 保留のため対象外（{ $n } 台）：
review-planning = 計画を問い合わせています（何も書き込みません）…
review-blocked = 開始できません：
review-starting = 開始しています…（送信は一度だけ。Esc で応答待ちをやめますが、開始される可能性があります）
review-denied = 開始する権限がありません：
review-shared = ichor インストールは他の { $n } 件のクラスター（{ $clusters }）でも使われており、それらのクラスターの ichor も同時にアップグレードされます。
review-type-name = 確認のため、クラスター名 { $name } を入力してください：
review-name-ok = ✓ 一致
review-name-mismatch = まだ一致しません
review-start = まだ何も書き込んでいません。Enter で開始します。
review-start-again = Enter でもう一度開始します。spec は書き換え済みなので、作成されるのはオペレーションだけです。
review-start-new = Enter で、現在のクラスターの状態に対して新たに開始します。
review-start-locked = クラスター名を正確に入力するまで開始できません。
review-steps = 実行順：
review-step = { $machines }（{ $role }）
started = { $name } を開始しました。
start-not-created = クラスター { $cluster } の開始操作は行われませんでした。リクエスト ID を持つオペレーションはなく、作成がこれから届くこともありません。もう一度開始できます。
start-settling = クラスター { $cluster } の開始操作：結果はまだわかりません。{ $until } まで確認します。もう一度開始しないでください。
review-stray-confirmation = ⚠ クラスター { $cluster } には、中断された以前の開始操作が残した kube-proxy の確認（ichor.maesh.dev/confirm-kube-proxy-switch）が付いています。この開始操作で削除します。
cluster-stray-confirmation = ⚠ このクラスターには、中断された開始操作が残した kube-proxy の確認（ichor.maesh.dev/confirm-kube-proxy-switch）が付いています。次の開始操作で削除されます（または：kubectl annotate taloscluster { $cluster } ichor.maesh.dev/confirm-kube-proxy-switch-）。
started-spec-written = { $field } を { $from } → { $to } に書き換えました。
cluster-unreadable = ⚠ このオブジェクトは TalosCluster として読み取れません：{ $why }。修正されるまで（kubectl edit）オペレーションは開始できません。
machine-unreadable = ⚠ 読み取り不可：{ $why }
review-held-not-skipped = 保留中ですが対象に含めます（{ $n } 台）：{ $kind ->
        [shutdown] シャットダウンはすべてのマシンが対象のためです。
       *[other] 対象から外したマシンは、旧 CA を削除した時点でクラスターから締め出されるためです。
    }
review-unapproved = 未承認のため対象外（{ $n } 台）：
review-not-offered = 開始できません（理由は先頭に表示）。何も書き込んでいません。
review-settling = 前回の開始操作の結果を確定中のため、開始できません（上を参照）。そのオペレーションがこれから作成される可能性があります。
ca-note-credentials = { $name } の認証情報（kubeconfig、talosconfig）は旧 CA を削除した時点で使えなくなります。CA 入れ替えが「認証情報の引き渡し待ち」になったら、ichor cluster bundle-export { $name } で新しい認証情報を取得してください。
started-ca-bundle = 認証情報の引き渡し待ちになったとき、そして完了したときに ichor cluster bundle-export { $name } を実行してください。認証情報も手元のシークレットバンドルも古くなります。
field-shutdown = シャットダウン
cluster-shutdown = { $time }、{ $user }（{ $operation }）
cluster-still-down = ⚠ その後このクラスターで開始されたオペレーションはありません。マシンは今も停止していると思われます。
review-shut-down = クラスター { $cluster } は { $time } に { $user } がシャットダウンし（{ $operation }）、その後は何も開始されていません。マシンは今も停止していると思われます。開始する前に電源を入れてください。停止したマシンにはオペレーションを実行できません。
versions-running-other = { $spec }（{ $total } 台中 { $n } 台は { $running } で稼働）
versions-running-other-short = { $spec }（{ $n } 台相違）
review-runs-target = { $total } 台中 { $n } 台（{ $machines }）はすでに { $target } を報告しています。計画はこれらも除外せず、実行側がマシンを処理する順に手順へ含めています。実行側は各マシンの順番が来たときに spec から目標バージョンを読み取ります。
review-production = 本番コンテキストです。開始のたびにクラスター名の入力を求めます。
