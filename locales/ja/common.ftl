### 表記の決まり — how the Japanese is written (every file of locales/ja follows it; tests/typography.rs checks it
### over every ja snapshot and every ja message):
###
### 1. 和欧間スペース: one half-width space between Japanese (kana, kanji) and Latin text — letters, digits,
###    commands, flags, and every { $variable } that holds a name, a version or a number:
###    「API に接続できません」「{ $n } 秒」「クラスター { $cluster } の」「--read-only で起動」.
###    None next to Japanese punctuation and brackets, which carry their own space:
###    「理由：{ $reason }」「（{ $since } から）」「{ $name } を開始しました。」.
### 2. 一つのものに一つの語: CA 入れ替え (never ローテーション: it is also short enough for the
###    kind column of an 80-column list), コントロールプレーン and ワーカー, 一時停止 (a pause that
###    resume undoes) and 停止 (what does not go on by itself: a shutdown, a machine stopped, an
###    operation a failed machine stopped — 失敗で停止, which resuming does not undo),
###    レビュー (the Review) and 確認 (a y/N question),
###    計画 (a plan, never プラン), プロキシ, 管理元 (what tracks a cluster: GitOps).
### 3. 括弧と約物は全角: （）「」：、。 — wrapped lines follow the kinsoku rules (views/text.rs).

too-small = 端末が小さすぎます（{ $w }×{ $h } 以上が必要）
too-small-keys = 大きくするまでキーは効きません。q で終了します。
status-all-namespaces = 全ネームスペース
status-namespace = ネームスペース { $ns }
status-all-namespaces-short = 全 NS
status-namespace-short = NS { $ns }
status-user = ユーザー { $user }
status-updated = 最終更新 { $age }前
status-updated-now = 最終更新 たった今
status-live = リアルタイム
status-never-updated = 未更新
badge-read-only = 読み取り専用
badge-stale = 古いデータ
badge-live-off = リアルタイム更新オフ
badge-ichor-ui-not-reached = ichor-ui に未接続
dur-seconds = { $n } 秒
dur-minutes = { $n } 分
dur-hours = { $n } 時間
dur-days = { $n } 日
banner-retrying = { $since } から応答がありません（{ $side }）。{ $n } 秒後に再試行します。
banner-retrying-again = { $since } から応答がありません（{ $side }）。{ $n } 秒後に再試行します（{ $round } 回目）。
banner-retrying-now = { $since } から応答がありません（{ $side }）。再試行しています。
banner-gave-up = { $since } から応答がありません（{ $side }）。再試行を打ち切りました。R で再試行します。
banner-tunnel-retrying = { $since } から ichor-ui へのトンネルが閉じています。{ $n } 秒後に再接続します。
banner-tunnel-retrying-again = { $since } から ichor-ui へのトンネルが閉じています。{ $n } 秒後に再接続します（{ $round } 回目）。
banner-tunnel-retrying-now = { $since } から ichor-ui へのトンネルが閉じています。再接続しています。
banner-tunnel-gave-up = { $since } から ichor-ui へのトンネルが閉じています。再接続を打ち切りました。R で再試行します。
footer-filter = 入力で絞り込み · Enter 確定 · Esc 解除
footer-confirm = y はい · N いいえ（既定）
footer-help = ↑↓ スクロール · Esc 閉じる
footer-resume-after-failure = 再開不可（失敗で停止）
help-title = キー操作
help-confirm = 確認に答える（既定は「いいえ」）
list-more = ほか { $n } 件
list-above = ↑ 上に { $n } 件
lines-more = ほか { $n } 行
lines-above = ↑ 上に { $n } 行
key-up = 上へ
key-down = 下へ
key-top = 先頭へ
key-bottom = 末尾へ
key-page-up = 前のページ
key-page-down = 次のページ
key-open = 開く
key-filter = 絞り込み
key-clear-filter = 絞り込みを解除
key-pause = 一時停止
key-resume = 再開
key-delete = 削除
key-scroll-up = 上にスクロール
key-scroll-down = 下にスクロール
key-back = 戻る
key-operations = オペレーション一覧
key-refresh = 更新
key-help = ヘルプ
key-quit = 終了
key-suspend = シェルに戻る（fg で復帰）
loading = 読み込み中…
unknown = 不明
kind-talos = Talos アップグレード
kind-kubernetes = Kubernetes アップグレード
kind-ichor = ichor アップグレード
kind-cni = kube-proxy 切り替え
kind-shutdown = シャットダウン
kind-ca-rotation = CA 入れ替え
kind-short-talos = Talos
kind-short-kubernetes = Kubernetes
kind-short-ichor = ichor
kind-short-cni = kube-proxy
kind-short-shutdown = シャットダウン
kind-short-ca-rotation = CA 入れ替え
state-waiting-lock = ロック待ち
phase-new = 新規
phase-pending = 待機中
phase-running = 実行中
phase-paused = 一時停止中
phase-completed = 完了
phase-failed = 失敗
phase-other = 不明
state-paused-failed = 失敗で停止
state-pausing = 一時停止待ち
state-deleting = 削除中
state-deleting-waiting = 削除中（{ $finalizers } の完了待ち）
mphase-pending = 待機中
mphase-running = 実行中
mphase-completed = 完了
mphase-failed = 失敗
mphase-skipped = スキップ
role-controlplane = コントロールプレーン
role-worker = ワーカー
why-read-only = 読み取り専用です（--read-only で起動、または設定でこのコンテキストを読み取り専用に指定）。ここからは何も変更できません。
why-nothing-selected = オペレーションが選択されていません。
why-finished = このオペレーションは終了しています。一時停止も再開もできません。
why-already-paused = このオペレーションはすでに一時停止しています。
why-resume-after-failure = マシンの失敗で停止したオペレーションです。再開しても何も起きません。削除してやり直してください。
why-not-paused = このオペレーションは一時停止していません。
key-switch = オペレーションとクラスターの切り替え
key-clusters = クラスター一覧
key-new = 新しいオペレーション
key-choose = 選択
key-next-field = 次の項目
key-prev-field = 前の項目
key-review = レビューへ
key-cancel = キャンセル
key-start = 開始
key-edit = 入力に戻る
why-no-cluster = クラスターが選択されていません。
approved-yes = ✓ はい
approved-no = ✗ いいえ
why-not-permitted = Kubernetes RBAC の権限がないため、ここでは実行できません。
why-write-pending = 書き込みの応答を待っています。待つか、Esc で応答待ちをやめてください。
footer-stop-waiting = Esc 応答待ちをやめる
key-replan = 再レビュー
status-data-from = { $time } 時点のデータ
status-data-from-side = { $time } 時点のデータ（応答なし：{ $side }）
status-no-data-side = データなし（応答なし：{ $side }）
side-kubernetes = Kubernetes API
side-tunnel = ichor-ui（トンネル経由）
side-server = ichor-ui サーバー
why-unreadable = このオブジェクトは読み取れないため、ここからは操作できません。先に修正してください（kubectl edit）。
why-gone = このオペレーションはもう存在しないため、一時停止・再開・削除はできません。
kind-unreadable = 読み取り不可
state-unreadable = 読み取り不可
route-demo = デモ
route-tunnel = ichor-ui 経由（トンネル）
route-in-process = 直接接続（{ $context }）
route-fallback = { $route }：{ $why }
# Beside the route: the kubeconfig context and the Kubernetes API server it reaches (in production the
# label names the context: the server alone).
route-in-process-here = 直接接続
status-reaches = コンテキスト { $context } · API { $server }
status-reaches-short = { $context } · API { $server }
status-api-server = API { $server }
fallback-chosen = 指定
fallback-not-found = ichor-ui が見つかりません
fallback-not-ready = ichor-ui が準備できていません
fallback-no-port = ichor-ui にそのポートがありません
fallback-no-token = 転送できるトークンがありません（{ $how }）
fallback-forbidden = ichor-ui に到達できません（権限なし）
fallback-not-answering = ichor-ui が応答しません
fallback-here-not-found = ここには ichor-ui がデプロイされていません
fallback-here-not-ready = ここの ichor-ui には準備のできた Pod がありません
fallback-here-no-port = ここの ichor-ui にそのポートはありません
fallback-here-no-token = ichor-ui に転送できるトークンがありません（{ $how }）
fallback-here-forbidden = ここの ichor-ui には接続できません
fallback-here-not-answering = ここでは ichor-ui が動いていません
server-version = サーバー { $version }
server-version-unknown = サーバーのバージョン不明
banner-credentials-rotated = CA 入れ替え { $operation } で { $cluster } の CA が替わり、Kubernetes がこのダッシュボードの認証情報を拒否しています。ichor cluster bundle-export { $cluster } で新しい認証情報を取得し、その新しい認証情報で ichor-tui を起動し直してください。
banner-credentials-refused = Kubernetes がこのダッシュボードの認証情報を受け付けなくなりました。CA 入れ替えの後であれば ichor cluster bundle-export CLUSTER で新しい認証情報を取得し、そうでなければログインし直してから、ichor-tui を起動し直してください。
unknown-command = :{ $command } というコマンドはありません。:ops [CLUSTER]、:clusters、:ns NAME、:ctx NAME、:help、:q が使えます（Tab で補完）。
footer-command = Tab 補完 · Enter 実行 · Esc キャンセル
key-command = コマンドライン（コマンドは下記）
key-yaml = YAML 表示
key-whole-text = 全文
key-close = 閉じる
reading-yaml-title = { $name } · YAML（読み取り専用）
reading-whole-title = { $name } · 全文
reading-conditions = コンディション：
reading-machines = マシン：
reading-hold = 保留：{ $reason }
field-namespace = ネームスペース
field-kind = 種類
field-cluster = クラスター
notify-title = ichor-tui
notify-completed = { $name } が完了しました（クラスター { $cluster }）
notify-failed = { $name } は失敗で停止しました（クラスター { $cluster }）
notify-awaits-credentials = { $name } は認証情報の取得を待っています（クラスター { $cluster }）
key-clear-text = 入力したテキストを消去
key-delete-word = カーソル前の単語を削除

# What Kubernetes RBAC does not let the caller do, named as a Review names it.
why-not-permitted-patch = Kubernetes RBAC により、ネームスペース { $namespace } の talosoperations を patch できません。一時停止と再開にはこの権限が必要です。
why-not-permitted-delete = Kubernetes RBAC により、ネームスペース { $namespace } の talosoperations を delete できません。
why-not-permitted-start = Kubernetes RBAC により、ネームスペース { $namespace } ではオペレーションを開始できません。開始には talosoperations の create と leases の create・update の権限が必要です。
# Between the names of a list (clusters).
list-separator = 、
# A cluster's unfinished operation: its kind, phase and name.
cluster-active = { $kind } · { $phase }（{ $name }）
# A row of a list that cannot be read, and why.
row-unreadable = ⚠ 読み取り不可：{ $why }
# The command line's :ns, and R's answer.
namespace-usage = ネームスペース { $ns } を表示しています。:ns NAME で別のネームスペース、:ns all で全ネームスペースを表示します。
namespace-usage-all = 全ネームスペースを表示しています。:ns NAME で 1 つのネームスペースを表示します。
namespace-invalid = 「{ $value }」はネームスペース名ではありません。英小文字・数字・「-」の 1〜63 文字で、先頭と末尾は英小文字か数字です。:ns all で全ネームスペースを表示します。
refreshed = 更新しました。
context-usage = kubeconfig のコンテキスト { $current } を使用中です。:ctx NAME で { $contexts } のいずれかに切り替えます。
context-unknown = kubeconfig にコンテキスト「{ $value }」はありません。コンテキスト：{ $contexts }。
context-none = 切り替える kubeconfig のコンテキストがありません（サーバーまたはデモに接続しています）。
context-busy = 書き込みまたは開始の結果を待っている間はコンテキストを切り替えません。確定してからもう一度実行してください。
context-switching = コンテキスト { $name } に接続しています…
context-switched = コンテキスト { $name } に切り替えました（経路・ユーザー・権限を確認し直しました）。
context-failed = コンテキスト { $name } に接続できませんでした。{ $current } のままです：{ $why }
# On the Operations list: where new operations start.
footer-to-clusters = 2 クラスター（n 新しいオペレーション）
# A text read (YAML, the page whole) and its search (/, n, N).
footer-reading = ↑↓ スクロール · / 検索 · Esc 閉じる
footer-search-typing = /{ $text }▏ · Enter 検索 · Esc キャンセル
footer-search = /{ $text }：{ $n } 行 · n 次へ · N 前へ · Esc 検索を解除
footer-search-none = /{ $text }：見つかりません · / 検索し直す · Esc 検索を解除
# ? lists these: the sort keys of the Operations list, the command line's commands (under :),
# Tab on the command line, and the search of a text read (YAML, a page whole).
key-sort-name = 名前で並べ替え（もう一度押すと逆順）
key-sort-age = 経過時間で並べ替え（もう一度押すと逆順）
key-sort-state = 状態で並べ替え（もう一度押すと逆順）
key-cmd-ops = オペレーション一覧（CLUSTER を指定するとそのクラスターのみ）
key-cmd-ns = ネームスペース NAME を表示（all ですべて）
key-cmd-ctx = kubeconfig のコンテキストを切り替え
key-cmd-clusters = クラスター一覧
key-cmd-help = このキー一覧
key-cmd-quit = 終了
key-complete = コマンドを補完（コマンドライン）
key-search = 検索（Enter で検索、Esc で解除）
key-search-next = 次の一致行
key-search-prev = 前の一致行

## 本番コンテキストと遅延の通知（issue 38）。
badge-production = 本番環境 { $context }
badge-production-alone = 本番環境
help-estimate = 残り・見込み：役割ごとのペース（遅延しなかったマシンの中央値）で算出。一時停止中は出しません
help-since = 実行中は開始・再開から、一時停止待ちは要求から、一時停止中は効いた時から数えます
help-production = 本番コンテキスト { $context }：一時停止・再開・削除・開始のたびに、クラスター名の入力と Enter を求めます。
confirm-type-name = 本番環境です。確認のため、クラスター名 { $cluster } を入力して Enter を押してください。
footer-typed-confirm = 名前を入力 · Enter 確定 · Esc キャンセル
name-not-typed = 実行していません：クラスター名 { $cluster } が入力されませんでした。何も書き込んでいません。
notify-slow = { $name } が遅れています：ほかのマシンよりかなり時間がかかっています（クラスター { $cluster }）
dur-hours-minutes = { $h } 時間 { $m } 分
