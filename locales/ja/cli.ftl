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
