# コマンドライン（ichor-tui operation|upgrade|cni|cluster）：確認、追跡の行、終了時の文言。
cli-needs-yes = { $command } は書き込む前に確認しますが、標準入力が端末ではありません。何も書き込んでいません。確認なしで実行するには --yes を付けてください。
cli-yes-no = [y/N]
cli-ask-start = クラスター { $cluster } で「{ $kind }」を開始しますか？
cli-declined = 何も書き込んでいません。
cli-name-mismatch = 「{ $typed }」は { $name } ではありません。何も書き込んでいません。
cli-plan-title = 計画：{ $kind } · クラスター { $cluster }
cli-failure-advice = 自動で再試行もロールバックもされません。このオペレーションを削除して（ichor-tui operation delete { $name }）やり直してください。
cli-following = { $name } を終了まで追跡します（Ctrl-C で追跡をやめます。オペレーションは続きます）。
cli-completed = { $name } が完了しました。
cli-exit-failed = { $name } は失敗で停止しました。終了コードは 3 です。
cli-machine-line = { $machine }：{ $phase }
cli-paused-by = { $user } が一時停止
cli-no-machines = マシンのステップはありません。
cli-plan-changed = 新しい計画を見るには、コマンドをもう一度実行してください。
cli-asking-ichor-ui = { $server } を通じて ichor-ui（{ $service }）を探しています。各問い合わせは { $seconds } 秒まで待ちます。
cli-reading-directly = { $why }。クラスターを直接読みます。
# A command that waited for an API that did not answer says, once it answers again, since when it did not.
cli-answers-again = 応答が戻りました（{ $side }、{ $since } から応答がありませんでした）。


## 実行レポート（operation report、オペレーション画面の w）。
report-title = レポート：{ $kind } · クラスター { $cluster }（{ $name }）
report-created = 作成
report-started = 開始
report-finished = 終了
report-max-unavailable = 最大同時処理数
report-order = 計画の順序
report-skipped = スキップ：{ $machines }
report-machines = マシン
report-col-step = 手順
report-col-started = 開始
report-col-finished = 終了
report-col-result = 結果
report-warnings = 警告
report-no-warnings = 警告は記録されていません。
report-events-unread = イベントを読み取れなかったため、警告は不明です：{ $why }
report-failure = 失敗
report-at-end = マシンが稼働しているバージョン
report-cluster-unread = クラスターを読み取れなかったため、マシンが稼働しているバージョンは不明です。
report-totals = 合計
report-count = マシン { $machines } 台：完了 { $done } 台、失敗 { $failed } 台、スキップ { $skipped } 台、未完了 { $left } 台
report-took = 所要時間 { $time }
report-pace = { $role } マシンの所要時間の中央値：{ $time }
report-warning-count = 警告 { $n } 件
report-made = { $time } に ichor-tui で作成したレポートです。
cli-production = コンテキスト { $context } は本番環境です。書き込みの前に毎回クラスター名の入力を求めます。
cli-needs-confirm-cluster = コンテキスト { $context } は本番環境です。--yes で書き込むには、クラスターを --confirm-cluster NAME で指定してください。何も書き込んでいません。
cli-confirm-cluster-mismatch = --confirm-cluster { $typed } は、この書き込みのクラスター { $cluster } ではありません。何も書き込んでいません。
# ichor-tui version：このバイナリ、フラグで届く経路、サーバーと Kubernetes のバージョン。
version-client = クライアントのバージョン：{ $version }
version-commit = コミット：{ $commit }
version-built = ビルド日時：{ $date }
version-route = 経路：{ $route }
version-route-server = サーバー { $url }
version-route-tunnel = ポートフォワード経由の ichor-ui（{ $service }）
version-route-in-process = プロセス内、コンテキスト { $context }
version-server = サーバーのバージョン：{ $version }
version-server-in-process = サーバーのバージョン：{ $version }（サービスはこのプロセス内で動作）
version-server-unnamed = サーバーのバージョン：サーバーが名乗っていません
version-kubernetes = Kubernetes のバージョン：{ $version }
version-server-unreached = サーバーのバージョン：届きませんでした
