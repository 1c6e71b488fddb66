### 表記の決まり: see the head of common.ftl (和欧間スペース, one term for each thing, 全角の括弧と約物).

error-unfinished-operation = クラスター { $cluster } のオペレーション { $operation } が完了していません（{ $phase ->
        [Pending] 待機中
        [Running] 実行中
        [Paused] 一時停止中
        [Completed] 完了
        [Failed] 失敗
       *[other] { $phase }
    }）。別のオペレーションを開始する前に、完了を待つか削除してください。
error-tracked-by-gitops = { $resource_kind } { $resource_name } は { $tool }（{ $object }）で管理されています。Git で変更してください：{ $field }: { $current } → { $target }。リポジトリでマージした後、spec に反映された{ $kind ->
        [cni] { " " }kube-proxy のモード
       *[other] バージョン
    }で開始してください。
error-downgrade = { $target } は現在の { $current } より古いバージョンです。ダウングレードはできません。
error-unsupported-jump = { $kind ->
        [talos] Talos
        [kubernetes] Kubernetes
        [ichor] ichor
       *[other] { $kind }
    } は 1 回のオペレーションで { $current } から { $target } には上げられません。{ $current } から対応しているのは { $allowed } です。
error-no-machines = クラスター { $cluster } には対象となる承認済みマシンがありません（保留中 { $held } 台）。
error-invalid-version = 「{ $value }」は { $kind ->
        [kubernetes] v1.33.0
        [ichor] v0.15.0
       *[other] v1.9.3
    } のようなバージョンではありません。
error-invalid-kube-proxy-mode = kube-proxy のモードは「enabled」か「replaced」です（「{ $value }」は使えません）。
error-target-not-taken = この種類のオペレーションには変更先を指定できません（「{ $value }」が指定されました）。
error-target-required = この種類のオペレーションには変更先が必要です。
error-invalid-max-unavailable = 最大同時処理数は 1 から { $max } の範囲にしてください（{ $value } が指定されました）。
error-cluster-required = ネームスペース { $namespace } には複数のクラスターがあります。次から選んでください：{ $choices }
error-cluster-not-found = ネームスペース { $namespace } にクラスター { $cluster } が見つかりません。
error-no-clusters = ネームスペース { $namespace } に TalosCluster がありません。
error-installation-not-found = ネームスペース { $namespace } に ichor という名前の IchorInstallation がありません。アップグレードする ichor のインストールがありません。
error-operation-not-found = ネームスペース { $namespace } にオペレーション { $operation } が見つかりません。
error-resume-after-failure = { $operation } はマシン { $machine } の失敗で停止しています。再開しても何も起きません。自動で再試行もロールバックもされないため、削除してやり直してください。
error-operation-finished = { $operation } は終了しています（{ $phase ->
        [Pending] 待機中
        [Running] 実行中
        [Paused] 一時停止中
        [Completed] 完了
        [Failed] 失敗
       *[other] { $phase }
    }）。一時停止も再開もできません。
error-spec-written-create-failed = { $resource_kind } { $resource_name } の { $field } を { $current } → { $target } に書き換えましたが、オペレーションの作成に失敗しました（{ $detail }）。{ $annotation ->
        [left] kube-proxy 切り替えの確認アノテーションがクラスターに残っています。手動で削除してください（kubectl annotate taloscluster { $resource_name } ichor.maesh.dev/confirm-kube-proxy-switch-）。
        [removed] kube-proxy 切り替えの確認アノテーションは削除しました。
       *[none] {""}
    }同じオペレーションをもう一度開始すると完了します。spec はすでに { $target } なので、作成されるのはオペレーションだけです。
error-annotation-not-removed = オペレーションは作成されましたが、クラスター { $cluster } からアノテーション { $annotation } を削除できませんでした（{ $detail }）。手動で削除してください（kubectl annotate taloscluster { $cluster } { $annotation }-）。
error-read-only = { $by ->
        [server] { $what }：このサーバーは読み取り専用（serve --read-only）のため、開始・一時停止・再開・削除は行いません。
       *[client] 読み取り専用のため（--read-only、または設定でコンテキストを読み取り専用に指定）、ここからは何も変更できません。
    }
error-permission-denied = 権限がありません：{ $detail }
error-unauthenticated = { $via ->
        [no-token] サーバーにはベアラートークンが必要です（{ $detail }）。--token-file FILE または環境変数 ICHOR_TOKEN で指定してください。
        [token] サーバーがベアラートークンを受け付けませんでした（{ $detail }）。--token-file または ICHOR_TOKEN のトークンを確認してください。
        [kubeconfig] Kubernetes が kubeconfig のユーザー { $user } の認証情報を受け付けませんでした（{ $detail }）。ログインし直すか、--context で別のコンテキストを選んでください。
       *[other] 認証されていません：{ $detail }
    }
error-unavailable = API が応答しません：{ $detail }
error-conflict = 同時に別の変更がありました。もう一度試してください：{ $detail }
error-invalid = Kubernetes がリクエストを拒否しました：{ $detail }
error-internal = 内部エラー：{ $detail }
code-permission-denied = 権限がありません：{ $detail }
code-not-found = 見つかりません：{ $detail }
code-unauthenticated = 認証されていません：{ $detail }
code-unavailable = API が応答しません：{ $detail }
code-invalid-argument = 不正なリクエスト：{ $detail }
code-failed-precondition = 拒否されました：{ $detail }
code-other = エラー：{ $detail }
error-changed-since-confirmed = 確認した後に { $operation } が変わりました：{ $change ->
        [replaced] 削除され、同じ名前の別のオペレーションに置き換わっています
        [finished] 終了しています
        [unfinished] 再び実行中です
        [paused] 一時停止されました
        [resumed] 再開されました
       *[spec] spec が変更されました
    }（現在は{ $phase ->
        [Running] 実行中
        [Paused] 一時停止中
        [Pending] 待機中
        [Completed] 完了
        [Failed] 失敗
       *[other] 新規
    }）。何も書き込んでいません。もう一度確認してから判断してください。
error-plan-changed = レビューした後に計画が変わりました。何も書き込んでいません。新しい計画を表示しているので、レビューしてから開始してください。
error-start-in-progress = クラスター { $cluster } では別の開始操作が進行中です（実行者：{ $actor }）。オペレーション { $operation } を作成しています。表示されるのを待ってから判断してください。
error-start-settling = クラスター { $cluster } の開始操作（実行者：{ $actor }）は、オペレーション { $operation } の作成に応答がありませんでした。{ $until } まで結果を確定中で、それまでこのクラスターでは他の開始操作を受け付けません。その後で一覧を確認してください。
error-start-outcome-unknown = クラスター { $cluster } の開始操作が行われたかどうか、まだわかりません。作成に応答がありませんでした（{ $detail }）。結果を確定中です。{ $until } までダッシュボードが確認し、結果を表示します。もう一度開始しないでください。
error-claim-unreadable = クラスター { $cluster } の開始クレーム（Lease { $lease }）を読み取れません（{ $detail }）。何も書き込んでいません。進行中の開始操作がなければ削除してください：kubectl delete lease { $lease } -n { $namespace }
error-request-id-reused = リクエスト ID { $request_id } は別の開始操作（別のネームスペース、クラスター、種類、変更先、ユーザー）に使われています。何も書き込んでいません。新しい開始操作には新しいリクエスト ID が必要です。
error-confirmation-removed = クラスター { $cluster } には、中断された以前の開始操作が残した kube-proxy の確認（{ $annotation }）が付いていました。この開始操作で削除しました。
error-task-failed = ダッシュボード内部で問題が起きました：{ $what }（{ $detail }）。それ以上は何もしていません。R で再読み込み、q で終了します。
error-installation-busy = ichor インストールはクラスター { $cluster } でも使われており、そこでオペレーション { $operation } が完了していません（{ $phase ->
        [Pending] 待機中
        [Running] 実行中
        [Paused] 一時停止中
        [Completed] 完了
        [Failed] 失敗
       *[other] { $phase }
    }）。ichor のアップグレードは、対象のどのクラスターにも未完了のオペレーションがなくなるまで待ちます。
error-not-permitted = { $scope ->
        [all] すべてのネームスペースの { $resource } に対する { $verb } の権限がありません（Kubernetes RBAC）。
       *[namespace] ネームスペース { $namespace } の { $resource } に対する { $verb } の権限がありません（Kubernetes RBAC）。
    }
error-write-not-applied = { $action ->
        [start] クラスター { $operation } での開始
        [pause] { $operation } の一時停止
        [resume] { $operation } の再開
       *[delete] { $operation } の削除
    }{ $late ->
        [refused] は実行されませんでした。Kubernetes API が実行しなかったと応答しました（{ $detail }）
        [not-sent] は実行されませんでした。サーバーに接続できませんでした（{ $detail }）
        [yes] は応答がなく、クラスターを読み直したところ実行されていませんでした（まだ届いていないだけかもしれません）
       *[no] は応答がなく、クラスターを読み直したところ実行されていませんでした
    }。再試行はしていません。状態を確認し、必要ならもう一度実行してください。
error-write-outcome-unknown = { $action ->
        [start] クラスター { $operation } での開始
        [pause] { $operation } の一時停止
        [resume] { $operation } の再開
       *[delete] { $operation } の削除
    }は応答がなく、実行されたかどうかを確認するためにクラスターを読むこともできませんでした（{ $detail }）。再試行はしていません。API が応答するようになったら一覧で確認してください。
error-write-target-gone = { $action ->
        [start] クラスター { $operation } での開始
        [pause] { $operation } の一時停止
        [resume] { $operation } の再開
       *[delete] { $operation } の削除
    }は応答がなく、クラスターを読むとオペレーションはもう存在しません。なくなる前に{ $action ->
        [start] 開始
        [pause] 一時停止
        [resume] 再開
       *[delete] 削除
    }が実行されたかどうかは分かりません。再試行はしていません。
error-operation-replaced = { $operation } は確認したオペレーションではなくなりました。確認したものは存在せず、同じ名前の別のオペレーション（{ $phase ->
        [Pending] 待機中
        [Running] 実行中
        [Paused] 一時停止中
        [Completed] 完了
        [Failed] 失敗
       *[other] { $phase }
    }）があります。そちらには何もしていません。
error-version-skew = この ichor-tui は { $client }、サーバーは { $server } で、マイナーバージョンが 2 つ以上離れているため書き込みはできません（読み取りはできます）。{ $upgrade ->
        [client] ダッシュボード（ichor-tui）
       *[server] サーバー
    }をアップグレードしてください。
error-write-abandoned = { $action ->
        [start] 開始
        [pause] 一時停止
        [resume] 再開
       *[delete] 削除
    }の応答待ちをやめました。実行されている可能性があります。このレビューは現在のクラスターの状態を表示しています。
error-max-unavailable-over-workers = 最大同時処理数 { $value } はクラスター { $cluster } のワーカー数（{ $workers } 台）を超えています。
error-invalid-namespace = 「{ $value }」はネームスペースとして使えません。英小文字・数字・「-」の 1〜63 文字で、先頭と末尾は英小文字か数字にしてください。
error-invalid-name = 「{ $value }」は{ $what ->
        [cluster] クラスター名
       *[operation] オペレーション名
    }として使えません。英小文字・数字・「-」・「.」の 1〜253 文字で、先頭と末尾は英小文字か数字にしてください。
error-invalid-kind = このサーバーが知らない種類のオペレーションが指定されました（kind { $value }）。
error-invalid-request-id = 「{ $value }」はリクエスト ID として使えません。英数字・「-」・「_」・「.」の 1〜64 文字にしてください。
error-invalid-fingerprint = 「{ $value }」は計画のフィンガープリントではありません。もう一度レビューしてください。
error-invalid-confirmation = 確認内容の { $field } が不正です（「{ $value }」）。オペレーションを見直してください。
error-operation-unreadable = オペレーション { $operation } を読み取れません（{ $detail }）。何も書き込んでいません。先にオブジェクトを修正してください（または kubectl で削除してください）。
error-cluster-unreadable = クラスター { $cluster } を読み取れません（{ $detail }）。先に TalosCluster オブジェクトを修正してください。
error-machine-unreadable = クラスター { $cluster } のマシン { $machine } を読み取れません（{ $detail }）。計画にすべてのマシンが表示されるよう、開始する前に修正してください。
# サーバーの上限に達した：$limit は上限の名前（serve のメトリクスと同じ）、$max はその数。
error-limit-reached = { $limit ->
        [calls_in_flight] サーバーは { $max } 件の呼び出しに応答中で、上限に達しています。{ $retry } 秒後にもう一度試してください。
        [calls_per_person] あなたの呼び出しがすでに { $max } 件応答中で、あなたの割り当ての上限です。{ $retry } 秒後にもう一度試してください。
        [writes_in_flight] サーバーは { $max } 件の書き込みを実行中で、上限に達しています。{ $retry } 秒後にもう一度試してください。
        [writes_per_person] あなたの書き込みがすでに { $max } 件実行中で、あなたの割り当ての上限です。{ $retry } 秒後にもう一度試してください。
        [bodies] サーバーは { $max } 件のリクエスト本文を受信中で、上限に達しています。{ $retry } 秒後にもう一度試してください。
        [bodies_per_person] サーバーはすでにあなたのリクエスト本文を { $max } 件受信中で、あなたの割り当ての上限です。本文はリクエストと一緒に送り、{ $retry } 秒後にもう一度試してください。
        [subscribing] サーバーは { $max } 件の購読を準備中で、上限に達しています。{ $retry } 秒後にもう一度試してください。
        [subscribing_per_person] あなたの購読がすでに { $max } 件準備中で、あなたの割り当ての上限です。{ $retry } 秒後にもう一度試してください。
        [connections_per_person] あなたの呼び出しがすでにサーバーへの接続を { $max } 本使っており、あなたの割り当ての上限です。使っている接続で呼び出してください。
        [token_reviews] サーバーは { $max } 件のトークンを Kubernetes に確認中で、上限に達しています。{ $retry } 秒後にもう一度試してください。
        [lists_in_flight] サーバーは Kubernetes から { $max } 件の一覧全体を読み込み中で、上限に達しています。{ $retry } 秒後にもう一度試してください。
        [lists_per_person] サーバーはすでにあなたのために { $max } 件の一覧全体を読み込み中で、あなたの割り当ての上限です。{ $retry } 秒後にもう一度試してください。
        [reflection_streams] サーバーが保持するリフレクションのストリームが上限の { $max } 本に達しています。{ $retry } 秒後にもう一度試してください。
        [reflection_streams_per_person] すでに { $max } 本のリフレクションのストリームを保持しており、あなたの割り当ての上限です。先に 1 本閉じてください。
        [streams] サーバーが保持する更新ストリームが上限の { $max } 本に達しています。定期取得に切り替え、しばらくしてから購読し直してください。
        [anonymous_streams] トークンなしの呼び出し元が保持する更新ストリームが、合わせて上限の { $max } 本に達しています。トークンを指定するか、ストリームを 1 本閉じてください。
        [streams_per_caller] すでに { $max } 本の更新ストリームを保持しています。先に 1 本閉じてください。
        [live_queries] サーバーが最新に保つ一覧（条件の異なるもの）が上限の { $max } 件に達しています。この一覧は定期取得にするか、ほかの人がすでに購読している一覧で購読してください。
        [live_queries_per_namespace] このネームスペースでサーバーが最新に保つ一覧（条件の異なるもの）が上限の { $max } 件に達しています。この一覧は定期取得にするか、ほかの人がすでに購読している一覧で購読してください。
        [live_queries_per_caller] あなたのストリームがすでに { $max } 件の異なる一覧を最新に保っています。1 本閉じるか、この一覧は定期取得にしてください。
        [live_queries_per_caller_in_namespace] このネームスペースであなたのストリームがすでに { $max } 件の異なる一覧を最新に保っており、あなたの割り当ての上限です。1 本閉じるか、この一覧は定期取得にしてください。
        [health_streams] サーバーが保持するヘルスチェックのストリームが上限の { $max } 本に達しています。代わりに grpc.health.v1.Health/Check で確認してください。
        [watches] サーバーはすでに { $max } 個のネームスペースをストリームのために監視しています。このネームスペースは定期取得にしてください。
       *[other] サーバーの上限（{ $limit }、{ $max }）に達しています。しばらくしてから試してください。
    }
error-deadline-passed = { $during ->
        [claimed] クラスターを確保してから開始操作に { $limit } 秒以上かかったため、書き込む前に止めました（確保の期限がその最中に切れないようにするためです）。
        [write] 呼び出しの期限が過ぎました。始まった書き込みは最後まで実行されます。結果はオペレーションを読み直して確認してください。
        [authentication] 呼び出し元の認証中に、呼び出しの期限が過ぎました。
        [stream] 呼び出しの期限が過ぎたため、ストリームはここで終わります（期限を延ばすか期限なしで購読し直してください）。
       *[read] 応答の準備ができる前に、呼び出しの期限が過ぎました。
    }
error-shutting-down = サーバーは終了処理中です。{ $then ->
        [subscribe] 購読し直してください（別のレプリカか、復帰後のこのサーバーが応答します）。
       *[call] もう一度呼び出してください（別のレプリカか、復帰後のこのサーバーが応答します）。
    }
error-invalid-query = { $what ->
        [view] 表示形式 { $value } はこのサーバーが扱えるものではありません。
        [page_size] ページサイズは負の値にできません（指定値：{ $value }）。
        [order_by] 並び順は create_time、name、state のいずれかで、それぞれ desc を付けられます。
        [phases] フェーズ「{ $value }」は Pending、Running、Paused、Completed、Failed のいずれでもありません。
        [filter] 絞り込みは { $max } 文字以内で、制御文字を含めないでください。
        [known_version] バージョン「{ $value }」は { $max } 文字を超えており、このサーバーが返したものではありません（ページに含まれていたものを送るか、何も送らないでください）。
        [page_token] このページトークンは、このクエリに対してこのサーバーが返したものではありません。最初のページから取得し直してください。
       *[other] 一覧の { $what } が正しくありません。
    }
