<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="ja">
<context>
    <name>CheckpointGridLayout</name>
    <message>
        <source>Its layout does not read: %1</source>
        <translation>レイアウトを読み取れません: %1</translation>
    </message>
    <message>
        <source>Its layout names no rows, no columns or no cell size.</source>
        <translation>レイアウトに行、列、またはセルの大きさがありません。</translation>
    </message>
    <message>
        <source>%1 cannot be read: %2</source>
        <translation>%1 を読み込めません: %2</translation>
    </message>
    <message>
        <source>%1 is no checkpoint grid: it has no layout.</source>
        <translation>%1 はチェックポイントグリッドではありません: レイアウトがありません。</translation>
    </message>
    <message>
        <source>%1: its layout (%2 x %3 cells of %4x%5) does not match the picture (%6x%7).</source>
        <translation>%1: レイアウト (%4x%5 のセルが %2 x %3) が画像 (%6x%7) と一致しません。</translation>
    </message>
</context>
<context>
    <name>CompileInfo</name>
    <message>
        <source>Fullgraph is refused with split attention: turn off one of them.</source>
        <translation>フルグラフは分割アテンションと併用できません: どちらかをオフにしてください。</translation>
    </message>
    <message>
        <source>With block swapping, the swapped blocks&apos; weights stay out of capture (their Linear layers run uncaptured).</source>
        <translation>ブロックスワップ使用時、スワップされるブロックの重みはキャプチャ対象外になります(その Linear 層はキャプチャされずに実行されます)。</translation>
    </message>
    <message>
        <source>Memory plan</source>
        <translation>メモリ計画</translation>
    </message>
    <message>
        <source>Set the model family to SDXL or FLUX to see the plan for this budget.</source>
        <translation>この予算の計画を表示するには、モデルファミリーを SDXL または FLUX に設定してください。</translation>
    </message>
    <message>
        <source>Estimated for the full-size %1 (the runner&apos;s dry run plans with the checkpoint&apos;s own sizes):</source>
        <translation>フルサイズの %1 での見積もり(ランナーのドライランはチェックポイント自身のサイズで計画します):</translation>
    </message>
</context>
<context>
    <name>ConfigDocument</name>
    <message>
        <source>Untitled</source>
        <translation>無題</translation>
    </message>
    <message>
        <source>Could not write %1: %2</source>
        <translation>%1 を書き込めませんでした: %2</translation>
    </message>
</context>
<context>
    <name>Option</name>
    <message>
        <source>Model family</source>
        <translation>モデルファミリー</translation>
    </message>
    <message>
        <source>SDXL, FLUX.1, SD 1.5, SD 2.x or SD 3.x (SD 3 Medium, SD 3.5 Medium or Large). Auto detects it from the checkpoint&apos;s tensor names.</source>
        <translation>SDXL、FLUX.1、SD 1.5、SD 2.x、SD 3.x(SD 3 Medium、SD 3.5 Medium、Large)のいずれか。auto はチェックポイントのテンソル名から判定します。</translation>
    </message>
    <message>
        <source>Training type</source>
        <translation>学習タイプ</translation>
    </message>
    <message>
        <source>LoRA network, DreamBooth, full fine-tune or textual inversion (an embedding for a new token; SD 1.x, SD 2.x and SDXL). Sinter&apos;s own key; sd-scripts ignores it.</source>
        <translation>LoRA ネットワーク、DreamBooth、フルファインチューニング、またはテキスト反転（新しいトークンの埋め込み。SD 1.x、SD 2.x、SDXL）。Sinter 独自のキーで、sd-scripts は無視します。</translation>
    </message>
    <message>
        <source>Token string</source>
        <translation>トークン文字列</translation>
    </message>
    <message>
        <source>The new token the embedding is trained for; it must not be in the tokenizer&apos;s vocabulary. Captions and sample prompts use it; the output name when that is unset.</source>
        <translation>埋め込みを学習する新しいトークン。トークナイザーの語彙にない文字列にしてください。キャプションとサンプルプロンプトで使います。出力名が未設定のときは出力名にもなります。</translation>
    </message>
    <message>
        <source>Initial word</source>
        <translation>初期化単語</translation>
    </message>
    <message>
        <source>Words whose token embeddings the new vectors start from (repeated or cut to the number of vectors); unset: the mean of the vocabulary&apos;s embeddings.</source>
        <translation>新しいベクトルの初期値にするトークン埋め込みの単語（ベクトル数に合わせて繰り返しまたは切り捨て）。未設定の場合は語彙の埋め込みの平均です。</translation>
    </message>
    <message>
        <source>Vectors per token</source>
        <translation>トークンあたりのベクトル数</translation>
    </message>
    <message>
        <source>How many token embeddings the embedding holds: the token string and token_string1, token_string2, ... take one each.</source>
        <translation>埋め込みが持つトークン埋め込みの数。トークン文字列と token_string1、token_string2、… がそれぞれ 1 つずつ持ちます。</translation>
    </message>
    <message>
        <source>Embedding weights</source>
        <translation>埋め込みの重み</translation>
    </message>
    <message>
        <source>An embedding file to continue training from: emb_params (SD 1.x/2.x) or clip_l and clip_g (SDXL), as A1111, Forge and ComfyUI load them.</source>
        <translation>学習を続ける埋め込みファイル。emb_params（SD 1.x/2.x）または clip_l と clip_g（SDXL）で、A1111、Forge、ComfyUI が読む形式です。</translation>
    </message>
    <message>
        <source>Object templates</source>
        <translation>物体用テンプレート</translation>
    </message>
    <message>
        <source>Ignore the captions: each image is captioned with one of sd-scripts&apos; object templates (&quot;a photo of a {}&quot;, ...) holding the token.</source>
        <translation>キャプションを使わず、トークンを入れた sd-scripts の物体用テンプレート（&quot;a photo of a {}&quot; など）のいずれかを各画像のキャプションにします。</translation>
    </message>
    <message>
        <source>Style templates</source>
        <translation>スタイル用テンプレート</translation>
    </message>
    <message>
        <source>Ignore the captions: each image is captioned with one of sd-scripts&apos; style templates (&quot;a painting in the style of {}&quot;, ...) holding the token. The object templates win when both are set, as in sd-scripts.</source>
        <translation>キャプションを使わず、トークンを入れた sd-scripts のスタイル用テンプレート（&quot;a painting in the style of {}&quot; など）のいずれかを各画像のキャプションにします。両方を設定すると sd-scripts と同じく物体用テンプレートが優先されます。</translation>
    </message>
    <message>
        <source>Pretrained model</source>
        <translation>事前学習済みモデル</translation>
    </message>
    <message>
        <source>The base checkpoint: a single .safetensors file (SDXL, SD, SD 3.x) or the FLUX transformer.</source>
        <translation>ベースとなるチェックポイント: 単一の .safetensors ファイル(SDXL、SD、SD 3.x)または FLUX のトランスフォーマー。</translation>
    </message>
    <message>
        <source>VAE</source>
        <translation>VAE</translation>
    </message>
    <message>
        <source>A separate VAE to use instead of the checkpoint&apos;s own.</source>
        <translation>チェックポイント内蔵の VAE の代わりに使う別の VAE。</translation>
    </message>
    <message>
        <source>Autoencoder (ae)</source>
        <translation>オートエンコーダー (ae)</translation>
    </message>
    <message>
        <source>FLUX autoencoder file, ae.safetensors.</source>
        <translation>FLUX のオートエンコーダーファイル ae.safetensors。</translation>
    </message>
    <message>
        <source>CLIP-L</source>
        <translation>CLIP-L</translation>
    </message>
    <message>
        <source>Model type</source>
        <translation>モデルタイプ</translation>
    </message>
    <message>
        <source>flux: FLUX.1; chroma: Chroma1-HD / Chroma1-Base, FLUX.1&apos;s blocks with T5-XXL alone (no CLIP-L; apply_t5_attn_mask required; sd-scripts suggests guidance_scale 0). A Chroma checkpoint is recognised from its keys either way.</source>
        <translation>flux: FLUX.1、chroma: Chroma1-HD / Chroma1-Base（FLUX.1 のブロックに T5-XXL のみ。CLIP-L なし、apply_t5_attn_mask が必要、sd-scripts は guidance_scale 0 を推奨）。Chroma のチェックポイントはどちらの場合もキーから認識されます。</translation>
    </message>
    <message>
        <source>CLIP-L text encoder file: FLUX.1&apos;s (not used by Chroma), or SD 3.x&apos;s (unset: the checkpoint&apos;s own).</source>
        <translation>CLIP-L テキストエンコーダーファイル: FLUX.1 用(Chroma では使いません)、または SD 3.x 用(未設定ならチェックポイント内のものを使います)。</translation>
    </message>
    <message>
        <source>T5-XXL</source>
        <translation>T5-XXL</translation>
    </message>
    <message>
        <source>T5-XXL text encoder file (FLUX.1, SD 3.x).</source>
        <translation>T5-XXL テキストエンコーダーファイル(FLUX.1、SD 3.x)。</translation>
    </message>
    <message>
        <source>CLIP-G</source>
        <translation>CLIP-G</translation>
    </message>
    <message>
        <source>SD 3.x CLIP-G (OpenCLIP bigG) text encoder file; the checkpoint&apos;s own when unset.</source>
        <translation>SD 3.x の CLIP-G(OpenCLIP bigG)テキストエンコーダーファイル。未設定ならチェックポイント内のものを使います。</translation>
    </message>
    <message>
        <source>CLIP tokenizer</source>
        <translation>CLIP トークナイザー</translation>
    </message>
    <message>
        <source>Folder with the CLIP tokenizer (vocab.json and merges.txt, or tokenizer.json); unset: the CLIP tokenizer that ships with Sinter. Nothing is downloaded.</source>
        <translation>CLIP トークナイザーのフォルダー(vocab.json と merges.txt、または tokenizer.json)。未設定なら Sinter に同梱の CLIP トークナイザーを使います。ダウンロードは行いません。</translation>
    </message>
    <message>
        <source>bundled</source>
        <translation>同梱</translation>
    </message>
    <message>
        <source>T5 tokenizer</source>
        <translation>T5 トークナイザー</translation>
    </message>
    <message>
        <source>V-parameterization</source>
        <translation>v-パラメータ化</translation>
    </message>
    <message>
        <source>Train with the v-prediction target (SD 2.x 768-v and v-pred SDXL models).</source>
        <translation>v 予測を目標に学習します(SD 2.x の 768-v モデルや v-pred の SDXL モデル)。</translation>
    </message>
    <message>
        <source>Output folder</source>
        <translation>出力フォルダー</translation>
    </message>
    <message>
        <source>Where trained models, states and samples are written.</source>
        <translation>学習済みモデル、状態、サンプルの保存先。</translation>
    </message>
    <message>
        <source>Output name</source>
        <translation>出力名</translation>
    </message>
    <message>
        <source>Base name of the saved files; &quot;last&quot; when empty.</source>
        <translation>保存ファイルのベース名。空の場合は &quot;last&quot;。</translation>
    </message>
    <message>
        <source>Save model as</source>
        <translation>モデルの保存形式</translation>
    </message>
    <message>
        <source>File format of saved models. This build writes safetensors.</source>
        <translation>保存するモデルのファイル形式。このビルドは safetensors で保存します。</translation>
    </message>
    <message>
        <source>Save precision</source>
        <translation>保存精度</translation>
    </message>
    <message>
        <source>Precision of the saved weights; the training precision when unset.</source>
        <translation>保存する重みの精度。未設定なら学習時の精度。</translation>
    </message>
    <message>
        <source>Training comment</source>
        <translation>学習コメント</translation>
    </message>
    <message>
        <source>Stored in the saved file&apos;s metadata (ss_training_comment).</source>
        <translation>保存ファイルのメタデータ(ss_training_comment)に記録されます。</translation>
    </message>
    <message>
        <source>No metadata</source>
        <translation>メタデータなし</translation>
    </message>
    <message>
        <source>Write only the minimum metadata into saved files.</source>
        <translation>保存ファイルには最小限のメタデータだけを書き込みます。</translation>
    </message>
    <message>
        <source>Image folder</source>
        <translation>画像フォルダー</translation>
    </message>
    <message>
        <source>Folder whose subfolders are named &lt;repeats&gt;_&lt;class tokens&gt;, e.g. 10_sks dog.</source>
        <translation>&lt;繰り返し回数&gt;_&lt;クラストークン&gt; という名前のサブフォルダーを含むフォルダー(例: 10_sks dog)。</translation>
    </message>
    <message>
        <source>Regularisation folder</source>
        <translation>正則化フォルダー</translation>
    </message>
    <message>
        <source>Regularisation images, in the same &lt;repeats&gt;_&lt;class tokens&gt; layout.</source>
        <translation>正則化画像。同じ &lt;繰り返し回数&gt;_&lt;クラストークン&gt; 構成。</translation>
    </message>
    <message>
        <source>Metadata file</source>
        <translation>メタデータファイル</translation>
    </message>
    <message>
        <source>Fine-tune captions: sd-scripts&apos; metadata JSON (image key to caption and tags) for the images in the image folder.</source>
        <translation>ファインチューン用キャプション: 画像フォルダー内の画像に対する sd-scripts のメタデータ JSON(画像キーからキャプションとタグ)。</translation>
    </message>
    <message>
        <source>Dataset config</source>
        <translation>データセット設定</translation>
    </message>
    <message>
        <source>A dataset TOML ([general], [[datasets]], [[datasets.subsets]]) instead of the folders.</source>
        <translation>フォルダーの代わりに使うデータセット TOML([general]、[[datasets]]、[[datasets.subsets]])。</translation>
    </message>
    <message>
        <source>Resolution</source>
        <translation>解像度</translation>
    </message>
    <message>
        <source>Training resolution, &quot;1024,1024&quot; (width,height) or &quot;1024&quot;.</source>
        <translation>学習解像度。&quot;1024,1024&quot;(幅,高さ)または &quot;1024&quot;。</translation>
    </message>
    <message>
        <source>Enable buckets</source>
        <translation>バケットを有効化</translation>
    </message>
    <message>
        <source>Group images by aspect ratio instead of cropping them all to one size.</source>
        <translation>すべての画像を同じサイズに切り抜く代わりに、縦横比ごとにグループ化します。</translation>
    </message>
    <message>
        <source>Minimum bucket resolution</source>
        <translation>最小バケット解像度</translation>
    </message>
    <message>
        <source>Smallest bucket side in pixels.</source>
        <translation>バケットの最小辺(ピクセル)。</translation>
    </message>
    <message>
        <source>Maximum bucket resolution</source>
        <translation>最大バケット解像度</translation>
    </message>
    <message>
        <source>Largest bucket side in pixels.</source>
        <translation>バケットの最大辺(ピクセル)。</translation>
    </message>
    <message>
        <source>Bucket resolution steps</source>
        <translation>バケット解像度の刻み</translation>
    </message>
    <message>
        <source>Bucket sides are multiples of this; 64 is recommended.</source>
        <translation>バケットの辺はこの値の倍数になります。64 を推奨。</translation>
    </message>
    <message>
        <source>No upscaling in buckets</source>
        <translation>バケットで拡大しない</translation>
    </message>
    <message>
        <source>Never enlarge an image to fill a bucket; small images get their own smaller bucket.</source>
        <translation>バケットを埋めるために画像を拡大しません。小さい画像には専用の小さなバケットが使われます。</translation>
    </message>
    <message>
        <source>Caption extension</source>
        <translation>キャプションの拡張子</translation>
    </message>
    <message>
        <source>Extension of the caption file beside each image.</source>
        <translation>各画像の横に置くキャプションファイルの拡張子。</translation>
    </message>
    <message>
        <source>Shuffle captions</source>
        <translation>キャプションをシャッフル</translation>
    </message>
    <message>
        <source>Shuffle the comma-separated tags of each caption every time it is used.</source>
        <translation>使用のたびに、各キャプションのカンマ区切りタグをシャッフルします。</translation>
    </message>
    <message>
        <source>Keep tokens</source>
        <translation>固定トークン数</translation>
    </message>
    <message>
        <source>Number of leading tags kept in place when shuffling or dropping tags.</source>
        <translation>タグのシャッフルやドロップ時に先頭で固定しておくタグの数。</translation>
    </message>
    <message>
        <source>Caption dropout rate</source>
        <translation>キャプションドロップアウト率</translation>
    </message>
    <message>
        <source>Probability of training an image with an empty caption.</source>
        <translation>空のキャプションで画像を学習する確率。</translation>
    </message>
    <message>
        <source>Tag dropout rate</source>
        <translation>タグドロップアウト率</translation>
    </message>
    <message>
        <source>Probability of dropping each tag (after keep_tokens).</source>
        <translation>各タグを落とす確率(keep_tokens の後のタグ)。</translation>
    </message>
    <message>
        <source>Flip augmentation</source>
        <translation>反転による拡張</translation>
    </message>
    <message>
        <source>Randomly mirror images horizontally.</source>
        <translation>画像をランダムに左右反転します。</translation>
    </message>
    <message>
        <source>Random crop</source>
        <translation>ランダムクロップ</translation>
    </message>
    <message>
        <source>Crop at a random position instead of the centre. Not with cached latents.</source>
        <translation>中央ではなくランダムな位置で切り抜きます。潜在変数のキャッシュとは併用できません。</translation>
    </message>
    <message>
        <source>Colour augmentation</source>
        <translation>色の拡張</translation>
    </message>
    <message>
        <source>sd-scripts&apos; weak colour jitter: a third of the images get a small hue shift or gamma. Not with cached latents.</source>
        <translation>sd-scripts の弱い色ジッター: 画像の 3 分の 1 に小さな色相シフトまたはガンマをかけます。潜在変数のキャッシュとは併用できません。</translation>
    </message>
    <message>
        <source>Cache latents</source>
        <translation>潜在変数をキャッシュ</translation>
    </message>
    <message>
        <source>Encode every image once with the VAE and keep the latents in memory.</source>
        <translation>すべての画像を VAE で一度だけエンコードし、潜在変数をメモリに保持します。</translation>
    </message>
    <message>
        <source>Cache latents to disk</source>
        <translation>潜在変数をディスクにキャッシュ</translation>
    </message>
    <message>
        <source>Keep cached latents in files beside the images, reused while image and settings match.</source>
        <translation>キャッシュした潜在変数を画像の横のファイルに保存し、画像と設定が同じ間は再利用します。</translation>
    </message>
    <message>
        <source>Cache text encoder outputs</source>
        <translation>テキストエンコーダー出力をキャッシュ</translation>
    </message>
    <message>
        <source>Encode captions once. Needs frozen text encoders; not with caption shuffling or dropout.</source>
        <translation>キャプションを一度だけエンコードします。テキストエンコーダーの凍結が必要で、キャプションのシャッフルやドロップアウトとは併用できません。</translation>
    </message>
    <message>
        <source>Cache text encoder outputs to disk</source>
        <translation>テキストエンコーダー出力をディスクにキャッシュ</translation>
    </message>
    <message>
        <source>Keep cached text encoder outputs in files beside the captions.</source>
        <translation>キャッシュしたテキストエンコーダー出力をキャプションの横のファイルに保存します。</translation>
    </message>
    <message>
        <source>VAE batch size</source>
        <translation>VAE バッチサイズ</translation>
    </message>
    <message>
        <source>Images encoded at once while caching latents.</source>
        <translation>潜在変数のキャッシュ時に一度にエンコードする画像の数。</translation>
    </message>
    <message>
        <source>Data loader workers</source>
        <translation>データローダーのワーカー数</translation>
    </message>
    <message>
        <source>Threads that load and prepare images.</source>
        <translation>画像を読み込み準備するスレッドの数。</translation>
    </message>
    <message>
        <source>Prior loss weight</source>
        <translation>事前保存損失の重み</translation>
    </message>
    <message>
        <source>Loss weight of regularisation images.</source>
        <translation>正則化画像の損失の重み。</translation>
    </message>
    <message>
        <source>Max token length</source>
        <translation>最大トークン長</translation>
    </message>
    <message>
        <source>Caption length in tokens: 75 when unset, or 150 or 225 (encoded in 75-token chunks).</source>
        <translation>キャプションのトークン長: 未設定なら 75、または 150 か 225(75 トークン単位でエンコード)。</translation>
    </message>
    <message>
        <source>Batch size</source>
        <translation>バッチサイズ</translation>
    </message>
    <message>
        <source>Images per step.</source>
        <translation>1 ステップあたりの画像数。</translation>
    </message>
    <message>
        <source>Max train steps</source>
        <translation>最大学習ステップ数</translation>
    </message>
    <message>
        <source>Total optimisation steps; max_train_epochs overrides it.</source>
        <translation>最適化ステップの総数。max_train_epochs が優先されます。</translation>
    </message>
    <message>
        <source>Max train epochs</source>
        <translation>最大学習エポック数</translation>
    </message>
    <message>
        <source>Train for this many epochs instead of max_train_steps.</source>
        <translation>max_train_steps の代わりにこのエポック数だけ学習します。</translation>
    </message>
    <message>
        <source>Gradient accumulation steps</source>
        <translation>勾配累積ステップ数</translation>
    </message>
    <message>
        <source>Batches whose gradients are summed before each optimiser step.</source>
        <translation>各オプティマイザステップの前に勾配を合算するバッチの数。</translation>
    </message>
    <message>
        <source>Mixed precision</source>
        <translation>混合精度</translation>
    </message>
    <message>
        <source>Compute precision: no (fp32), fp16 or bf16.</source>
        <translation>演算精度: no(fp32)、fp16、bf16。</translation>
    </message>
    <message>
        <source>Full bf16</source>
        <translation>完全 bf16</translation>
    </message>
    <message>
        <source>Keep trained weights and gradients in bf16 too (needs mixed_precision bf16).</source>
        <translation>学習する重みと勾配も bf16 で保持します(mixed_precision bf16 が必要)。</translation>
    </message>
    <message>
        <source>Full fp16</source>
        <translation>完全 fp16</translation>
    </message>
    <message>
        <source>Keep trained weights and gradients in fp16 too (needs mixed_precision fp16).</source>
        <translation>学習する重みと勾配も fp16 で保持します(mixed_precision fp16 が必要)。</translation>
    </message>
    <message>
        <source>fp8 base model</source>
        <translation>fp8 ベースモデル</translation>
    </message>
    <message>
        <source>Store the frozen base model in fp8 to save memory.</source>
        <translation>凍結したベースモデルを fp8 で保持してメモリを節約します。</translation>
    </message>
    <message>
        <source>Gradient checkpointing</source>
        <translation>勾配チェックポイント</translation>
    </message>
    <message>
        <source>Recompute activations in the backward pass: less memory, slower steps.</source>
        <translation>逆伝播時に活性化を再計算します: メモリは減り、ステップは遅くなります。</translation>
    </message>
    <message>
        <source>Seed</source>
        <translation>シード</translation>
    </message>
    <message>
        <source>Random seed; the same seed gives the same run. Random when unset.</source>
        <translation>乱数シード。同じシードなら同じ実行結果になります。未設定ならランダム。</translation>
    </message>
    <message>
        <source>Max gradient norm</source>
        <translation>最大勾配ノルム</translation>
    </message>
    <message>
        <source>Clip gradients to this global norm; 0 disables clipping.</source>
        <translation>勾配をこの全体ノルムでクリップします。0 でクリップ無効。</translation>
    </message>
    <message>
        <source>Noise offset</source>
        <translation>ノイズオフセット</translation>
    </message>
    <message>
        <source>Adds a per-channel offset to the noise (helps very dark or bright images), e.g. 0.0357.</source>
        <translation>ノイズにチャンネルごとのオフセットを加えます(非常に暗い/明るい画像に有効)。例: 0.0357。</translation>
    </message>
    <message>
        <source>Multi-resolution noise iterations</source>
        <translation>マルチ解像度ノイズの反復回数</translation>
    </message>
    <message>
        <source>Pyramid noise levels, e.g. 6-10; 0 or unset: off, as in sd-scripts.</source>
        <translation>ピラミッドノイズの段数。例: 6〜10。0 または未設定: オフ (sd-scripts と同じ)。</translation>
    </message>
    <message>
        <source>Multi-resolution noise discount</source>
        <translation>マルチ解像度ノイズの減衰</translation>
    </message>
    <message>
        <source>Weight of each coarser noise level.</source>
        <translation>粗いノイズ段ごとの重み。</translation>
    </message>
    <message>
        <source>Min-SNR gamma</source>
        <translation>Min-SNR ガンマ</translation>
    </message>
    <message>
        <source>Min-SNR loss weighting; 5 is the paper&apos;s recommendation.</source>
        <translation>Min-SNR による損失の重み付け。論文の推奨値は 5。</translation>
    </message>
    <message>
        <source>Loss type</source>
        <translation>損失の種類</translation>
    </message>
    <message>
        <source>l2 (MSE), l1, huber or smooth_l1.</source>
        <translation>l2(MSE)、l1、huber、smooth_l1。</translation>
    </message>
    <message>
        <source>Huber c</source>
        <translation>Huber c</translation>
    </message>
    <message>
        <source>Huber loss parameter.</source>
        <translation>Huber 損失のパラメーター。</translation>
    </message>
    <message>
        <source>Input perturbation noise gamma</source>
        <translation>入力摂動ノイズのガンマ</translation>
    </message>
    <message>
        <source>Input perturbation noise, e.g. 0.1.</source>
        <translation>入力摂動ノイズ。例: 0.1。</translation>
    </message>
    <message>
        <source>Min timestep</source>
        <translation>最小タイムステップ</translation>
    </message>
    <message>
        <source>Lowest timestep sampled (0 when unset).</source>
        <translation>サンプリングする最小のタイムステップ(未設定なら 0)。</translation>
    </message>
    <message>
        <source>Max timestep</source>
        <translation>最大タイムステップ</translation>
    </message>
    <message>
        <source>Timesteps are sampled below this (1000 when unset).</source>
        <translation>タイムステップはこの値未満からサンプリングされます(未設定なら 1000)。</translation>
    </message>
    <message>
        <source>Scaled dot-product attention</source>
        <translation>スケールド・ドット積アテンション</translation>
    </message>
    <message>
        <source>Use fused scaled dot-product attention (Sinter uses the fastest attention it has either way).</source>
        <translation>融合されたスケールド・ドット積アテンションを使います(いずれにせよ Sinter は利用可能な最速のアテンションを使います)。</translation>
    </message>
    <message>
        <source>xformers</source>
        <translation>xformers</translation>
    </message>
    <message>
        <source>sd-scripts&apos; xformers switch; Sinter uses its own fused attention instead.</source>
        <translation>sd-scripts の xformers スイッチ。Sinter は代わりに独自の融合アテンションを使います。</translation>
    </message>
    <message>
        <source>Split attention</source>
        <translation>分割アテンション</translation>
    </message>
    <message>
        <source>Compute attention one sample at a time to save memory. Not with fullgraph compile.</source>
        <translation>メモリ節約のためサンプルごとにアテンションを計算します。フルグラフのコンパイルとは併用できません。</translation>
    </message>
    <message>
        <source>Blocks to swap</source>
        <translation>スワップするブロック数</translation>
    </message>
    <message>
        <source>FLUX or SD 3.x blocks kept in CPU memory and swapped in when needed (FLUX: 16/22/28 for 12/10/8 GB GPUs).</source>
        <translation>CPU メモリに置き、必要時に入れ替える FLUX または SD 3.x のブロック数(FLUX:12/10/8 GB の GPU では 16/22/28)。</translation>
    </message>
    <message>
        <source>Split mode (deprecated)</source>
        <translation>分割モード(非推奨)</translation>
    </message>
    <message>
        <source>sd-scripts&apos; deprecated FLUX option: blocks to swap 18 when that is not set.</source>
        <translation>sd-scripts の非推奨の FLUX オプション:スワップするブロック数が未設定なら 18 にします。</translation>
    </message>
    <message>
        <source>CLIP skip</source>
        <translation>CLIP スキップ</translation>
    </message>
    <message>
        <source>Use the output of this many layers from the end of the text encoder.</source>
        <translation>テキストエンコーダーの最後からこの層数分さかのぼった出力を使います。</translation>
    </message>
    <message>
        <source>Train text encoders</source>
        <translation>テキストエンコーダーを学習</translation>
    </message>
    <message>
        <source>Learning rate TE1</source>
        <translation>学習率 TE1</translation>
    </message>
    <message>
        <source>Learning rate of CLIP-L; learning_rate when unset.</source>
        <translation>CLIP-L の学習率。未設定なら learning_rate。</translation>
    </message>
    <message>
        <source>Learning rate TE2</source>
        <translation>学習率 TE2</translation>
    </message>
    <message>
        <source>Learning rate of the second text encoder (SDXL&apos;s OpenCLIP bigG, SD 3.x&apos;s CLIP-G); learning_rate when unset.</source>
        <translation>2 番目のテキストエンコーダー（SDXL の OpenCLIP bigG、SD 3.x の CLIP-G）の学習率。未設定時は learning_rate。</translation>
    </message>
    <message>
        <source>Train T5-XXL</source>
        <translation>T5-XXL を学習</translation>
    </message>
    <message>
        <source>SD 3.x: also train T5-XXL whole, at learning_rate_te3 (with train_text_encoder; its outputs are not cached).</source>
        <translation>SD 3.x：T5-XXL 全体も learning_rate_te3 で学習します（train_text_encoder と併用。出力はキャッシュしません）。</translation>
    </message>
    <message>
        <source>Learning rate TE3</source>
        <translation>学習率 TE3</translation>
    </message>
    <message>
        <source>Learning rate of SD 3.x&apos;s T5-XXL with train_t5xxl; learning_rate when unset, 0 leaves it as it is.</source>
        <translation>train_t5xxl 時の SD 3.x の T5-XXL の学習率。未設定時は learning_rate、0 なら学習しません。</translation>
    </message>
    <message>
        <source>Guidance scale</source>
        <translation>ガイダンススケール</translation>
    </message>
    <message>
        <source>FLUX.1-dev guidance value fed to the model while training.</source>
        <translation>学習中にモデルへ与える FLUX.1-dev のガイダンス値。</translation>
    </message>
    <message>
        <source>Timestep sampling</source>
        <translation>タイムステップのサンプリング</translation>
    </message>
    <message>
        <source>How FLUX timesteps are drawn.</source>
        <translation>FLUX のタイムステップの抽出方法。</translation>
    </message>
    <message>
        <source>Sigmoid scale</source>
        <translation>シグモイドスケール</translation>
    </message>
    <message>
        <source>Scale for sigmoid and shift timestep sampling.</source>
        <translation>sigmoid と shift のタイムステップサンプリングで使うスケール。</translation>
    </message>
    <message>
        <source>Huber schedule</source>
        <translation>Huber スケジュール</translation>
    </message>
    <message>
        <source>How the Huber parameter follows the timestep: constant, exponential or snr (not for FLUX).</source>
        <translation>Huber パラメーターをタイムステップに応じてどう変えるか: constant、exponential、snr（FLUX では使えません）。</translation>
    </message>
    <message>
        <source>Huber scale</source>
        <translation>Huber スケール</translation>
    </message>
    <message>
        <source>Scale of the Huber parameter (constant and exponential schedules).</source>
        <translation>Huber パラメーターの倍率（constant と exponential スケジュール）。</translation>
    </message>
    <message>
        <source>Weighting scheme</source>
        <translation>重み付けスキーム</translation>
    </message>
    <message>
        <source>Density of the timesteps drawn and the loss weighting: FLUX.1&apos;s with sigma timestep sampling (and sigma_scaled predictions), SD 3.x&apos;s always.</source>
        <translation>抽出するタイムステップの分布と損失の重み付け: FLUX.1 では sigma タイムステップサンプリング(と sigma_scaled 予測)のとき、SD 3.x では常に適用します。</translation>
    </message>
    <message>
        <source>Logit mean</source>
        <translation>ロジット平均</translation>
    </message>
    <message>
        <source>Mean of the logit_normal weighting scheme.</source>
        <translation>logit_normal 重み付けスキームの平均。</translation>
    </message>
    <message>
        <source>Logit std</source>
        <translation>ロジット標準偏差</translation>
    </message>
    <message>
        <source>Standard deviation of the logit_normal weighting scheme.</source>
        <translation>logit_normal 重み付けスキームの標準偏差。</translation>
    </message>
    <message>
        <source>Mode scale</source>
        <translation>モードスケール</translation>
    </message>
    <message>
        <source>Scale of the mode weighting scheme.</source>
        <translation>mode 重み付けスキームのスケール。</translation>
    </message>
    <message>
        <source>Discrete flow shift</source>
        <translation>離散フローシフト</translation>
    </message>
    <message>
        <source>Shift for the shift timestep sampling.</source>
        <translation>shift タイムステップサンプリングのシフト量。</translation>
    </message>
    <message>
        <source>Model prediction type</source>
        <translation>モデル予測タイプ</translation>
    </message>
    <message>
        <source>How the FLUX model output is turned into the prediction.</source>
        <translation>FLUX モデルの出力を予測値に変換する方法。</translation>
    </message>
    <message>
        <source>T5-XXL max token length</source>
        <translation>T5-XXL 最大トークン長</translation>
    </message>
    <message>
        <source>T5 sequence length; when unset 512 for FLUX.1 dev, 256 for schnell and for SD 3.x.</source>
        <translation>T5 のシーケンス長。未設定なら FLUX.1 dev は 512、schnell と SD 3.x は 256。</translation>
    </message>
    <message>
        <source>Apply T5 attention mask</source>
        <translation>T5 アテンションマスクを適用</translation>
    </message>
    <message>
        <source>Mask T5 padding tokens in attention.</source>
        <translation>アテンションで T5 のパディングトークンをマスクします。</translation>
    </message>
    <message>
        <source>Apply CLIP-L/G attention mask</source>
        <translation>CLIP-L/G アテンションマスクを適用</translation>
    </message>
    <message>
        <source>Mask the padding tokens in CLIP-L&apos;s and CLIP-G&apos;s attention.</source>
        <translation>CLIP-L と CLIP-G のアテンションでパディングトークンをマスクします。</translation>
    </message>
    <message>
        <source>Training shift</source>
        <translation>学習シフト</translation>
    </message>
    <message>
        <source>Discrete flow shift of the training timesteps, on top of the weighting scheme: above 1 toward noise (overall structure), below 1 toward detail; 1 no shift.</source>
        <translation>重み付けスキームに加えて学習タイムステップに掛ける離散フローシフト: 1 より大きいとノイズ寄り(全体の構図)、1 より小さいとディテール寄り。1 でシフトなし。</translation>
    </message>
    <message>
        <source>CLIP-L dropout rate</source>
        <translation>CLIP-L ドロップアウト率</translation>
    </message>
    <message>
        <source>Probability of training an image with CLIP-L&apos;s output zeroed.</source>
        <translation>CLIP-L の出力をゼロにして画像を学習する確率。</translation>
    </message>
    <message>
        <source>CLIP-G dropout rate</source>
        <translation>CLIP-G ドロップアウト率</translation>
    </message>
    <message>
        <source>Probability of training an image with CLIP-G&apos;s output zeroed.</source>
        <translation>CLIP-G の出力をゼロにして画像を学習する確率。</translation>
    </message>
    <message>
        <source>T5 dropout rate</source>
        <translation>T5 ドロップアウト率</translation>
    </message>
    <message>
        <source>Probability of training an image with T5-XXL&apos;s output zeroed.</source>
        <translation>T5-XXL の出力をゼロにして画像を学習する確率。</translation>
    </message>
    <message>
        <source>Scaled position embeddings</source>
        <translation>スケーリングした位置埋め込み</translation>
    </message>
    <message>
        <source>Scale the position embeddings to each training resolution (multi-resolution training). SD 3.5 Medium only.</source>
        <translation>位置埋め込みを学習解像度ごとにスケーリングします(複数解像度の学習)。SD 3.5 Medium 専用。</translation>
    </message>
    <message>
        <source>Position embedding random crop rate</source>
        <translation>位置埋め込みのランダムクロップ率</translation>
    </message>
    <message>
        <source>Probability of cropping the position embeddings at a random place. SD 3.5 Medium only.</source>
        <translation>位置埋め込みをランダムな位置でクロップする確率。SD 3.5 Medium 専用。</translation>
    </message>
    <message>
        <source>Network module</source>
        <translation>ネットワークモジュール</translation>
    </message>
    <message>
        <source>Network rank (dim)</source>
        <translation>ネットワークランク (dim)</translation>
    </message>
    <message>
        <source>Network alpha</source>
        <translation>ネットワークアルファ</translation>
    </message>
    <message>
        <source>LoRA alpha; the update is scaled by alpha / rank.</source>
        <translation>LoRA のアルファ。更新量は alpha / rank 倍されます。</translation>
    </message>
    <message>
        <source>Network arguments</source>
        <translation>ネットワーク引数</translation>
    </message>
    <message>
        <source>Extra key=value arguments for the network module.</source>
        <translation>ネットワークモジュールへの追加の key=value 引数。</translation>
    </message>
    <message>
        <source>Network dropout</source>
        <translation>ネットワークドロップアウト</translation>
    </message>
    <message>
        <source>Dropout on the LoRA input while training.</source>
        <translation>学習中の LoRA 入力に適用するドロップアウト。</translation>
    </message>
    <message>
        <source>Network weights</source>
        <translation>ネットワークの重み</translation>
    </message>
    <message>
        <source>Continue training from this LoRA file.</source>
        <translation>この LoRA ファイルから学習を続けます。</translation>
    </message>
    <message>
        <source>Rank from weights</source>
        <translation>重みからランクを取得</translation>
    </message>
    <message>
        <source>Take rank and alpha from network_weights.</source>
        <translation>network_weights からランクとアルファを取得します。</translation>
    </message>
    <message>
        <source>Partial network weights</source>
        <translation>ネットワーク重みの部分読み込み</translation>
    </message>
    <message>
        <source>Let network_weights fill only some of the network&apos;s modules and train the others from scratch, as sd-scripts loads it (strict=False); off, such a file is refused. Sinter&apos;s own key; sd-scripts ignores it.</source>
        <translation>network_weights がネットワークのモジュールの一部だけを埋め、残りを最初から学習することを許します（sd-scripts の strict=False での読み込みと同じ）。オフの場合、そのようなファイルは拒否されます。Sinter 独自のキーで、sd-scripts は無視します。</translation>
    </message>
    <message>
        <source>Train U-Net only</source>
        <translation>U-Net のみ学習</translation>
    </message>
    <message>
        <source>Train only the LoRA modules of the U-Net / transformer.</source>
        <translation>U-Net / トランスフォーマーの LoRA モジュールだけを学習します。</translation>
    </message>
    <message>
        <source>Train text encoder only</source>
        <translation>テキストエンコーダーのみ学習</translation>
    </message>
    <message>
        <source>Train only the LoRA modules of the text encoders.</source>
        <translation>テキストエンコーダーの LoRA モジュールだけを学習します。</translation>
    </message>
    <message>
        <source>U-Net learning rate</source>
        <translation>U-Net の学習率</translation>
    </message>
    <message>
        <source>Learning rate of the U-Net / transformer LoRA; learning_rate when unset.</source>
        <translation>U-Net / トランスフォーマーの LoRA の学習率。未設定なら learning_rate。</translation>
    </message>
    <message>
        <source>Text encoder learning rate</source>
        <translation>テキストエンコーダーの学習率</translation>
    </message>
    <message>
        <source>Learning rate of the text encoder LoRA; learning_rate when unset.</source>
        <translation>テキストエンコーダーの LoRA の学習率。未設定なら learning_rate。</translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation>オプティマイザ</translation>
    </message>
    <message>
        <source>Optimizer name as in sd-scripts; AdamW when empty.</source>
        <translation>sd-scripts と同じオプティマイザ名。空なら AdamW。</translation>
    </message>
    <message>
        <source>Optimizer arguments</source>
        <translation>オプティマイザ引数</translation>
    </message>
    <message>
        <source>key=value pairs, e.g. weight_decay=0.01 betas=0.9,0.999.</source>
        <translation>key=value の組。例: weight_decay=0.01 betas=0.9,0.999。</translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation>学習率</translation>
    </message>
    <message>
        <source>Base learning rate.</source>
        <translation>基本の学習率。</translation>
    </message>
    <message>
        <source>LR scheduler</source>
        <translation>LR スケジューラ</translation>
    </message>
    <message>
        <source>LR warmup steps</source>
        <translation>LR ウォームアップステップ数</translation>
    </message>
    <message>
        <source>Warm-up steps, or a ratio of the total steps when below 1.</source>
        <translation>ウォームアップのステップ数。1 未満なら総ステップ数に対する割合。</translation>
    </message>
    <message>
        <source>LR cycles</source>
        <translation>LR サイクル数</translation>
    </message>
    <message>
        <source>Restarts of cosine_with_restarts.</source>
        <translation>cosine_with_restarts の再始動回数。</translation>
    </message>
    <message>
        <source>LR power</source>
        <translation>LR べき乗</translation>
    </message>
    <message>
        <source>Power of the polynomial schedule.</source>
        <translation>多項式スケジュールのべき指数。</translation>
    </message>
    <message>
        <source>Enable torch.compile</source>
        <translation>torch.compile を有効化</translation>
    </message>
    <message>
        <source>Accelerate the training step natively: fused kernels, and with the matching mode, CUDA graphs.</source>
        <translation>学習ステップをネイティブに高速化します: 融合カーネル、対応するモードでは CUDA グラフも使います。</translation>
    </message>
    <message>
        <source>Backend</source>
        <translation>バックエンド</translation>
    </message>
    <message>
        <source>inductor: fused kernels; cudagraphs: graph capture with stock kernels; eager: nothing captured; aot_eager: eager, with the capture-safety checks reported.</source>
        <translation>inductor: 融合カーネル、cudagraphs: 標準カーネルでのグラフキャプチャ、eager: キャプチャなし、aot_eager: eager 実行でキャプチャ安全性の検査結果を報告。</translation>
    </message>
    <message>
        <source>Mode</source>
        <translation>モード</translation>
    </message>
    <message>
        <source>default: fused kernels; reduce-overhead: + CUDA graphs; max-autotune: + graphs and autotuning; max-autotune-no-cudagraphs: + autotuning.</source>
        <translation>default: 融合カーネル、reduce-overhead: + CUDA グラフ、max-autotune: + グラフと自動チューニング、max-autotune-no-cudagraphs: + 自動チューニング。</translation>
    </message>
    <message>
        <source>Dynamic shapes</source>
        <translation>動的形状</translation>
    </message>
    <message>
        <source>false: a graph per shape; auto: pre-capture the most frequent bucket shapes; true: nothing shape-specialised.</source>
        <translation>false: 形状ごとに 1 つのグラフ、auto: 頻度の高いバケット形状を事前キャプチャ、true: 形状に特化しない。</translation>
    </message>
    <message>
        <source>Full graph</source>
        <translation>フルグラフ</translation>
    </message>
    <message>
        <source>Capture forward, backward and optimizer step as one graph; anything that prevents it is an error.</source>
        <translation>順伝播・逆伝播・オプティマイザのステップを 1 つのグラフとしてキャプチャします。妨げるものがあればエラーになります。</translation>
    </message>
    <message>
        <source>Cache size limit</source>
        <translation>キャッシュサイズ上限</translation>
    </message>
    <message>
        <source>Captured shape signatures per region; 0 uses the default of 8.</source>
        <translation>領域ごとにキャプチャする形状シグネチャの数。0 は既定値の 8。</translation>
    </message>
    <message>
        <source>Compile arguments (deprecated)</source>
        <translation>コンパイル引数(非推奨)</translation>
    </message>
    <message>
        <source>BACKEND MODE DYNAMIC FULLGRAPH; overrides the settings above and sets the cache limit to 32.</source>
        <translation>BACKEND MODE DYNAMIC FULLGRAPH。上の設定を上書きし、キャッシュ上限を 32 にします。</translation>
    </message>
    <message>
        <source>Compile text encoders</source>
        <translation>テキストエンコーダーをコンパイル</translation>
    </message>
    <message>
        <source>Also accelerate text encoding.</source>
        <translation>テキストのエンコードも高速化します。</translation>
    </message>
    <message>
        <source>Compile VAE</source>
        <translation>VAE をコンパイル</translation>
    </message>
    <message>
        <source>Also accelerate latent caching (the VAE encoder as CUDA graphs); sample images decode uncaptured.</source>
        <translation>潜在変数のキャッシュ作成も高速化します(VAE エンコーダーを CUDA グラフで実行)。サンプル画像のデコードはキャプチャしません。</translation>
    </message>
    <message>
        <source>Allow TF32</source>
        <translation>TF32 を許可</translation>
    </message>
    <message>
        <source>TF32 matrix and convolution math on CUDA, with or without compile.</source>
        <translation>CUDA の行列演算と畳み込みで TF32 を使います(コンパイルの有無に関係なく)。</translation>
    </message>
    <message>
        <source>cuDNN benchmark</source>
        <translation>cuDNN ベンチマーク</translation>
    </message>
    <message>
        <source>Let cuDNN pick the fastest convolution algorithms, with or without compile.</source>
        <translation>cuDNN に最速の畳み込みアルゴリズムを選ばせます(コンパイルの有無に関係なく)。</translation>
    </message>
    <message>
        <source>Save every N epochs</source>
        <translation>N エポックごとに保存</translation>
    </message>
    <message>
        <source>Save the model every N epochs.</source>
        <translation>N エポックごとにモデルを保存します。</translation>
    </message>
    <message>
        <source>Save every N steps</source>
        <translation>N ステップごとに保存</translation>
    </message>
    <message>
        <source>Save the model every N steps.</source>
        <translation>N ステップごとにモデルを保存します。</translation>
    </message>
    <message>
        <source>Keep last N epochs</source>
        <translation>最新 N エポック分を保持</translation>
    </message>
    <message>
        <source>Delete older per-epoch saves, keeping the last N.</source>
        <translation>古いエポックごとの保存を削除し、最新 N 個を残します。</translation>
    </message>
    <message>
        <source>Keep last N steps</source>
        <translation>最新 N ステップ分を保持</translation>
    </message>
    <message>
        <source>Delete per-step saves older than N steps.</source>
        <translation>N ステップより古いステップごとの保存を削除します。</translation>
    </message>
    <message>
        <source>Save training state</source>
        <translation>学習状態を保存</translation>
    </message>
    <message>
        <source>Save optimizer, scheduler and data position with each save, for resuming.</source>
        <translation>再開できるよう、保存のたびにオプティマイザ、スケジューラ、データ位置も保存します。</translation>
    </message>
    <message>
        <source>Save state at the end</source>
        <translation>終了時に状態を保存</translation>
    </message>
    <message>
        <source>Save the training state once training ends.</source>
        <translation>学習終了時に学習状態を一度保存します。</translation>
    </message>
    <message>
        <source>Resume from state</source>
        <translation>状態から再開</translation>
    </message>
    <message>
        <source>A saved state folder to continue from.</source>
        <translation>続きから学習するための保存済み状態フォルダー。</translation>
    </message>
    <message>
        <source>Hugging Face token</source>
        <translation>Hugging Face トークン</translation>
    </message>
    <message>
        <source>Token for uploads. Never written to configs or presets.</source>
        <translation>アップロード用のトークン。設定ファイルやプリセットには書き込まれません。</translation>
    </message>
    <message>
        <source>Sample prompts</source>
        <translation>サンプルプロンプト</translation>
    </message>
    <message>
        <source>A text file of prompts (one per line, with --w --h --d --l --s --n).</source>
        <translation>プロンプトのテキストファイル(1 行に 1 つ、--w --h --d --l --s --n 指定可)。</translation>
    </message>
    <message>
        <source>Sample every N steps</source>
        <translation>N ステップごとにサンプル生成</translation>
    </message>
    <message>
        <source>Generate samples every N steps.</source>
        <translation>N ステップごとにサンプルを生成します。</translation>
    </message>
    <message>
        <source>Sample every N epochs</source>
        <translation>N エポックごとにサンプル生成</translation>
    </message>
    <message>
        <source>Generate samples every N epochs.</source>
        <translation>N エポックごとにサンプルを生成します。</translation>
    </message>
    <message>
        <source>Sampler</source>
        <translation>サンプラー</translation>
    </message>
    <message>
        <source>Sampler used for samples.</source>
        <translation>サンプル生成に使うサンプラー。</translation>
    </message>
    <message>
        <source>Sample before training</source>
        <translation>学習前にサンプル生成</translation>
    </message>
    <message>
        <source>Generate samples before the first step.</source>
        <translation>最初のステップの前にサンプルを生成します。</translation>
    </message>
    <message>
        <source>Logging folder</source>
        <translation>ログフォルダー</translation>
    </message>
    <message>
        <source>Folder for TensorBoard logs.</source>
        <translation>TensorBoard のログ用フォルダー。</translation>
    </message>
    <message>
        <source>Log with</source>
        <translation>ログの出力先</translation>
    </message>
    <message>
        <source>tensorboard, wandb or all; TensorBoard when only a logging folder is set.</source>
        <translation>tensorboard、wandb、all のいずれか。ログフォルダーだけを設定した場合は TensorBoard。</translation>
    </message>
    <message>
        <source>Log prefix</source>
        <translation>ログの接頭辞</translation>
    </message>
    <message>
        <source>Prefix for the log folder name.</source>
        <translation>ログフォルダー名の接頭辞。</translation>
    </message>
    <message>
        <source>Tracker name</source>
        <translation>トラッカー名</translation>
    </message>
    <message>
        <source>Folder of the TensorBoard log inside the run&apos;s log folder.</source>
        <translation>実行のログフォルダー内で TensorBoard ログを置くフォルダー。</translation>
    </message>
    <message>
        <source>network_train for LoRA, finetuning otherwise</source>
        <translation>LoRA では network_train、それ以外では finetuning</translation>
    </message>
    <message>
        <source>Tracker settings</source>
        <translation>トラッカー設定</translation>
    </message>
    <message>
        <source>A TOML file whose [tensorboard] table sets flush_secs, max_queue, filename_suffix and purge_step.</source>
        <translation>[tensorboard] テーブルで flush_secs、max_queue、filename_suffix、purge_step を設定する TOML ファイル。</translation>
    </message>
    <message>
        <source>Log the config</source>
        <translation>設定をログに記録</translation>
    </message>
    <message>
        <source>Write the training settings into the TensorBoard log (paths and secrets left out).</source>
        <translation>学習設定を TensorBoard ログに書き込みます（パスと秘密情報は除く）。</translation>
    </message>
    <message>
        <source>W&amp;B API key</source>
        <translation>W&amp;B API キー</translation>
    </message>
    <message>
        <source>Weights &amp; Biases key. Never written to configs or presets.</source>
        <translation>Weights &amp; Biases のキー。設定ファイルやプリセットには書き込まれません。</translation>
    </message>
    <message>
        <source>Profile steps</source>
        <translation>プロファイルするステップ数</translation>
    </message>
    <message>
        <source>Record this many steps after warm-up with the profiler into a Chrome/Perfetto trace (&lt;output_name&gt;-profile.json in the output folder).</source>
        <translation>ウォームアップ後のこの数のステップをプロファイラーで記録し、Chrome/Perfetto 形式のトレース（出力フォルダーの &lt;output_name&gt;-profile.json）に書き出します。</translation>
    </message>
    <message>
        <source>Fused backward pass</source>
        <translation>融合バックワードパス</translation>
    </message>
    <message>
        <source>Step each weight as soon as its gradient is computed, so that the whole model&apos;s gradients never exist at once (Adafactor, no gradient accumulation).</source>
        <translation>各重みを勾配の計算直後に更新し、モデル全体の勾配が同時に存在しないようにします（Adafactor、勾配累積なし）。</translation>
    </message>
    <message>
        <source>Metadata title</source>
        <translation>メタデータのタイトル</translation>
    </message>
    <message>
        <source>Title stored in the saved file&apos;s metadata (modelspec.title); the output name when empty.</source>
        <translation>保存ファイルのメタデータ(modelspec.title)に記録するタイトル。空のときは出力名。</translation>
    </message>
    <message>
        <source>Metadata author</source>
        <translation>メタデータの作者</translation>
    </message>
    <message>
        <source>Author stored in the saved file&apos;s metadata (modelspec.author).</source>
        <translation>保存ファイルのメタデータ(modelspec.author)に記録する作者。</translation>
    </message>
    <message>
        <source>Metadata description</source>
        <translation>メタデータの説明</translation>
    </message>
    <message>
        <source>Description stored in the saved file&apos;s metadata (modelspec.description).</source>
        <translation>保存ファイルのメタデータ(modelspec.description)に記録する説明。</translation>
    </message>
    <message>
        <source>Metadata license</source>
        <translation>メタデータのライセンス</translation>
    </message>
    <message>
        <source>License stored in the saved file&apos;s metadata (modelspec.license).</source>
        <translation>保存ファイルのメタデータ(modelspec.license)に記録するライセンス。</translation>
    </message>
    <message>
        <source>Metadata tags</source>
        <translation>メタデータのタグ</translation>
    </message>
    <message>
        <source>Comma-separated tags stored in the saved file&apos;s metadata (modelspec.tags).</source>
        <translation>保存ファイルのメタデータ(modelspec.tags)に記録するカンマ区切りのタグ。</translation>
    </message>
    <message>
        <source>Dataset repeats</source>
        <translation>データセットの繰り返し回数</translation>
    </message>
    <message>
        <source>How many times each fine-tune image is used per epoch (with a metadata file).</source>
        <translation>1エポックで各ファインチューニング画像を使う回数(メタデータファイル使用時)。</translation>
    </message>
    <message>
        <source>Caption separator</source>
        <translation>キャプションの区切り文字</translation>
    </message>
    <message>
        <source>Separator between the tags of a caption, for shuffling and dropping tags.</source>
        <translation>キャプションのタグの区切り文字。タグのシャッフルとドロップに使います。</translation>
    </message>
    <message>
        <source>Caption dropout every N epochs</source>
        <translation>Nエポックごとのキャプションドロップアウト</translation>
    </message>
    <message>
        <source>Train every Nth epoch with empty captions; 0 never.</source>
        <translation>Nエポックごとに空のキャプションで学習します。0 は行いません。</translation>
    </message>
    <message>
        <source>Resize interpolation</source>
        <translation>リサイズ補間</translation>
    </message>
    <message>
        <source>Filter used to resize images; area when shrinking and lanczos when enlarging when unset.</source>
        <translation>画像のリサイズに使うフィルター。未設定のときは縮小で area、拡大で lanczos。</translation>
    </message>
    <message>
        <source>Use 8-bit Adam</source>
        <translation>8ビット Adam を使用</translation>
    </message>
    <message>
        <source>sd-scripts&apos; older switch for optimizer_type = AdamW8bit; only with an empty optimizer_type.</source>
        <translation>optimizer_type = AdamW8bit を指定する sd-scripts の旧スイッチです。optimizer_type が空のときのみ使えます。</translation>
    </message>
    <message>
        <source>Use Lion</source>
        <translation>Lion を使用</translation>
    </message>
    <message>
        <source>sd-scripts&apos; older switch for optimizer_type = Lion; only with an empty optimizer_type.</source>
        <translation>optimizer_type = Lion を指定する sd-scripts の旧スイッチです。optimizer_type が空のときのみ使えます。</translation>
    </message>
    <message>
        <source>Validation split</source>
        <translation>検証用の割合</translation>
    </message>
    <message>
        <source>Fraction of each dataset&apos;s images held out for validation (0: no validation), e.g. 0.1. Regularisation images are never held out.</source>
        <translation>各データセットの画像のうち検証用に取り分ける割合(0 なら検証なし)。例: 0.1。正則化画像は取り分けません。</translation>
    </message>
    <message>
        <source>Validation seed</source>
        <translation>検証シード</translation>
    </message>
    <message>
        <source>Seed of which images are held out and of the validation noise.</source>
        <translation>取り分ける画像の選び方と検証ノイズのシード。</translation>
    </message>
    <message>
        <source>the run&apos;s seed</source>
        <translation>実行のシード</translation>
    </message>
    <message>
        <source>Validate every N steps</source>
        <translation>N ステップごとに検証</translation>
    </message>
    <message>
        <source>Also compute the validation loss every N steps, besides at the end of epochs.</source>
        <translation>エポックの終わりに加えて、N ステップごとにも検証損失を計算します。</translation>
    </message>
    <message>
        <source>Validate every N epochs</source>
        <translation>N エポックごとに検証</translation>
    </message>
    <message>
        <source>Compute the validation loss at the end of every Nth epoch.</source>
        <translation>N エポックごとに、その終わりで検証損失を計算します。</translation>
    </message>
    <message>
        <source>every epoch</source>
        <translation>毎エポック</translation>
    </message>
    <message>
        <source>Max validation batches</source>
        <translation>検証バッチの上限</translation>
    </message>
    <message>
        <source>Validate on at most this many batches of the held-out images.</source>
        <translation>取り分けた画像のうち、最大でこのバッチ数を使って検証します。</translation>
    </message>
    <message>
        <source>Keep best K by validation loss</source>
        <translation>検証損失の上位 K 個を保持</translation>
    </message>
    <message>
        <source>After each validation pass, keep the K files with the lowest validation loss so far (&lt;output_name&gt;-best-step&lt;step&gt;-loss&lt;loss&gt;.safetensors), deleting the one that drops out. Needs validation_split. Sinter&apos;s own key; sd-scripts ignores it.</source>
        <translation>検証のたびに、これまでで検証損失が最も低い K 個のファイル(&lt;output_name&gt;-best-step&lt;step&gt;-loss&lt;loss&gt;.safetensors)を保持し、外れたファイルを削除します。validation_split が必要です。Sinter 独自のキーで、sd-scripts は無視します。</translation>
    </message>
    <message>
        <source>Early stop patience</source>
        <translation>早期終了の猶予</translation>
    </message>
    <message>
        <source>End the run (saved as at its end) after this many validation passes in a row without a new lowest validation loss. Needs validation_split. Sinter&apos;s own key; sd-scripts ignores it.</source>
        <translation>検証損失の最低値が更新されない検証がこの回数続いたら、実行を終了します(終了時と同じく保存します)。validation_split が必要です。Sinter 独自のキーで、sd-scripts は無視します。</translation>
    </message>
    <message>
        <source>Early stop min improvement</source>
        <translation>早期終了の最小改善量</translation>
    </message>
    <message>
        <source>How much lower than the best so far a validation loss must be to count as a new best for early_stop_patience (0: any decrease). Sinter&apos;s own key; sd-scripts ignores it.</source>
        <translation>early_stop_patience で最良値の更新とみなすために、検証損失がこれまでの最良値よりどれだけ低くなる必要があるか(0: わずかな減少でも可)。Sinter 独自のキーで、sd-scripts は無視します。</translation>
    </message>
    <message>
        <source>EMA decay</source>
        <translation>EMA の減衰率</translation>
    </message>
    <message>
        <source>Keep an exponential moving average (EMA) of the trained weights with this decay: saved beside every saved model as &lt;name&gt;-ema.safetensors and in the training state. 0.999 averages about the last 1,000 updates; below 1. Sinter&apos;s own key; sd-scripts ignores it.</source>
        <translation>学習した重みの指数移動平均(EMA)をこの減衰率で保持します。保存するモデルごとにその横へ &lt;name&gt;-ema.safetensors として保存し、学習状態にも含めます。0.999 でおよそ直近 1,000 回の更新を平均します。1 未満の値です。Sinter 独自のキーで、sd-scripts は無視します。</translation>
    </message>
    <message>
        <source>EMA update every N steps</source>
        <translation>EMA を N ステップごとに更新</translation>
    </message>
    <message>
        <source>Update the EMA after every N-th step (OneTrainer&apos;s update step interval). Sinter&apos;s own key; sd-scripts ignores it.</source>
        <translation>N ステップごとに EMA を更新します(OneTrainer の更新ステップ間隔)。Sinter 独自のキーで、sd-scripts は無視します。</translation>
    </message>
    <message>
        <source>EMA device</source>
        <translation>EMA の置き場所</translation>
    </message>
    <message>
        <source>Where the EMA is kept: gpu, beside the weights on the training device (as much memory as the trained weights in float32), or cpu, in host memory (the weights are copied there at each update and averaged while training goes on). Sinter&apos;s own key; sd-scripts ignores it.</source>
        <translation>EMA を保持する場所: gpu は学習デバイス上で重みの横に置きます(学習する重みを float32 にしたのと同じだけのメモリを使います)。cpu はホストメモリに置きます(更新のたびに重みをそこへコピーし、学習を続けながら平均します)。Sinter 独自のキーで、sd-scripts は無視します。</translation>
    </message>
    <message>
        <source>EMA warm-up</source>
        <translation>EMA のウォームアップ</translation>
    </message>
    <message>
        <source>Start with a smaller decay, the least of ema_decay and (1 + k) / (10 + k) at the k-th update (as OneTrainer does), so that the EMA soon leaves the starting weights (a new LoRA&apos;s are zero). Off: ema_decay from the first update. Sinter&apos;s own key; sd-scripts ignores it.</source>
        <translation>小さい減衰率から始めます。k 回目の更新では ema_decay と (1 + k) / (10 + k) のうち小さいほうを使い(OneTrainer と同じ)、EMA が早く開始時の重み(新しい LoRA ではゼロ)から離れるようにします。オフにすると最初の更新から ema_decay を使います。Sinter 独自のキーで、sd-scripts は無視します。</translation>
    </message>
    <message>
        <source>Samples from the EMA</source>
        <translation>サンプルに EMA を使用</translation>
    </message>
    <message>
        <source>Render sample images with the EMA&apos;s weights (the trained weights are put back after). Sinter&apos;s own key; sd-scripts ignores it.</source>
        <translation>サンプル画像を EMA の重みで生成します(その後、学習中の重みに戻します)。Sinter 独自のキーで、sd-scripts は無視します。</translation>
    </message>
    <message>
        <source>all of them</source>
        <translation>すべて</translation>
    </message>
    <message>
        <source>No half-precision VAE</source>
        <translation>VAEを半精度にしない</translation>
    </message>
    <message>
        <source>Keep the VAE (FLUX&apos;s autoencoder) in float32 under mixed precision (it is float32 under fp16 anyway).</source>
        <translation>混合精度でもVAE(FLUXのオートエンコーダ)をfloat32のままにします(fp16ではいずれにせよfloat32です)。</translation>
    </message>
    <message>
        <source>sd-scripts&apos; download (Hugging Face cache)</source>
        <translation>sd-scriptsのダウンロード(Hugging Faceキャッシュ)</translation>
    </message>
    <message>
        <source>Keep tokens separator</source>
        <translation>保持タグの区切り</translation>
    </message>
    <message>
        <source>A separator in the caption (e.g. |||): the tags before it are kept in place, as keep_tokens does.</source>
        <translation>キャプション内の区切り(例: |||): その前のタグは keep_tokens と同様に位置を保持します。</translation>
    </message>
    <message>
        <source>Secondary separator</source>
        <translation>第2区切り</translation>
    </message>
    <message>
        <source>Joins tags that shuffle and drop together as one (e.g. ;;;), written as a comma in the caption.</source>
        <translation>まとめてシャッフル・ドロップするタグをつなぐ区切り(例: ;;;)。キャプションではカンマとして書かれます。</translation>
    </message>
    <message>
        <source>Wildcards</source>
        <translation>ワイルドカード</translation>
    </message>
    <message>
        <source>{a|b|c} in a caption picks one at random; a multi-line caption file picks a random line.</source>
        <translation>キャプション内の {a|b|c} はランダムに1つを選びます。複数行のキャプションファイルはランダムな1行を選びます。</translation>
    </message>
    <message>
        <source>Caption prefix</source>
        <translation>キャプションの接頭辞</translation>
    </message>
    <message>
        <source>Text put before every caption.</source>
        <translation>すべてのキャプションの前に付けるテキスト。</translation>
    </message>
    <message>
        <source>Caption suffix</source>
        <translation>キャプションの接尾辞</translation>
    </message>
    <message>
        <source>Text put after every caption.</source>
        <translation>すべてのキャプションの後に付けるテキスト。</translation>
    </message>
    <message>
        <source>Token warm-up minimum</source>
        <translation>トークンウォームアップの最小数</translation>
    </message>
    <message>
        <source>Tags used at the first step of the token warm-up.</source>
        <translation>トークンウォームアップの最初のステップで使うタグ数。</translation>
    </message>
    <message>
        <source>Token warm-up steps</source>
        <translation>トークンウォームアップのステップ数</translation>
    </message>
    <message>
        <source>Steps until all tags are used (below 1: a fraction of the training steps); 0: no warm-up.</source>
        <translation>すべてのタグを使うまでのステップ数(1未満: 学習ステップ数に対する割合)。0: ウォームアップなし。</translation>
    </message>
    <message>
        <source>Alpha channel as loss mask</source>
        <translation>アルファチャンネルを損失マスクに</translation>
    </message>
    <message>
        <source>Weight each pixel&apos;s loss by the image&apos;s alpha channel (transparent pixels are not learned). Images without alpha count as opaque.</source>
        <translation>画像のアルファチャンネルで各ピクセルの損失に重みを付けます(透明なピクセルは学習しません)。アルファのない画像は不透明として扱います。</translation>
    </message>
    <message>
        <source>Masked loss</source>
        <translation>マスク付き損失</translation>
    </message>
    <message>
        <source>Weight each pixel&apos;s loss by a mask image&apos;s red channel (white learned, black ignored), from conditioning_data_dir.</source>
        <translation>conditioning_data_dir のマスク画像の赤チャンネルで各ピクセルの損失に重みを付けます(白は学習、黒は無視)。</translation>
    </message>
    <message>
        <source>Mask image folder</source>
        <translation>マスク画像フォルダー</translation>
    </message>
    <message>
        <source>With masked loss: a folder of mask images named as the training images, each of its image&apos;s size.</source>
        <translation>マスク付き損失用: 学習画像と同じ名前・同じサイズのマスク画像を入れたフォルダー。</translation>
    </message>
    <message>
        <source>fp8 base U-Net/DiT only</source>
        <translation>fp8ベース(U-Net/DiTのみ)</translation>
    </message>
    <message>
        <source>Store only the frozen U-Net/DiT in fp8; the text encoders stay in the training precision.</source>
        <translation>凍結したU-Net/DiTだけをfp8で保持し、テキストエンコーダーは学習精度のままにします。</translation>
    </message>
    <message>
        <source>Offload checkpoints to CPU</source>
        <translation>チェックポイントをCPUへ退避</translation>
    </message>
    <message>
        <source>With gradient checkpointing (turned on by this), keep the blocks&apos; saved inputs in CPU memory until the backward pass. Not with blocks_to_swap.</source>
        <translation>勾配チェックポイント(これで有効になります)で、ブロックの保存入力を逆伝播までCPUメモリに置きます。blocks_to_swap とは併用できません。</translation>
    </message>
    <message>
        <source>Random noise offset strength</source>
        <translation>ノイズオフセットの強さをランダムに</translation>
    </message>
    <message>
        <source>Draw the noise offset&apos;s strength uniformly between 0 and noise_offset at each step.</source>
        <translation>各ステップでノイズオフセットの強さを0から noise_offset の間で一様に選びます。</translation>
    </message>
    <message>
        <source>Adaptive noise scale</source>
        <translation>適応ノイズスケール</translation>
    </message>
    <message>
        <source>Adds this times each latent channel&apos;s mean magnitude to noise_offset (needs noise_offset), e.g. 0.00357.</source>
        <translation>各潜在チャンネルの平均の大きさにこの値を掛けて noise_offset に加えます(noise_offset が必要)。例: 0.00357。</translation>
    </message>
    <message>
        <source>Zero terminal SNR</source>
        <translation>終端SNRをゼロに</translation>
    </message>
    <message>
        <source>Rescale the noise schedule so that the last timestep is pure noise (use with v-parameterization).</source>
        <translation>最後のタイムステップが純粋なノイズになるようにノイズスケジュールを再スケールします(v-parameterization と併用)。</translation>
    </message>
    <message>
        <source>Debiased estimation loss</source>
        <translation>デバイアス推定損失</translation>
    </message>
    <message>
        <source>Weight each sample&apos;s loss by 1/sqrt(SNR) of its timestep (capped at 1000).</source>
        <translation>各サンプルの損失をそのタイムステップの 1/sqrt(SNR) で重み付けします(SNRの上限は1000)。</translation>
    </message>
    <message>
        <source>Scale v-prediction loss like noise prediction</source>
        <translation>v予測の損失をノイズ予測のようにスケール</translation>
    </message>
    <message>
        <source>Scale the v-prediction loss by SNR/(SNR+1), like a noise-prediction loss (needs v_parameterization).</source>
        <translation>v予測の損失をノイズ予測の損失のように SNR/(SNR+1) でスケールします(v_parameterization が必要)。</translation>
    </message>
    <message>
        <source>v-prediction-like loss</source>
        <translation>v予測風の損失</translation>
    </message>
    <message>
        <source>Add this much of a v-prediction-like loss (the loss divided by SNR/(SNR+1)), e.g. 0.1.</source>
        <translation>v予測風の損失(損失を SNR/(SNR+1) で割ったもの)をこの割合で加えます。例: 0.1。</translation>
    </message>
    <message>
        <source>Random input perturbation strength</source>
        <translation>入力摂動の強さをランダムに</translation>
    </message>
    <message>
        <source>Draw the input perturbation&apos;s strength uniformly between 0 and ip_noise_gamma at each step.</source>
        <translation>各ステップで入力摂動の強さを0から ip_noise_gamma の間で一様に選びます。</translation>
    </message>
    <message>
        <source>U-Net block learning rates</source>
        <translation>U-Netブロックごとの学習率</translation>
    </message>
    <message>
        <source>23 comma-separated learning rates for the U-Net&apos;s blocks (time/label embedding, 9 input, 3 middle, 9 output, out), used instead of learning_rate for the U-Net; 0 freezes a block.</source>
        <translation>U-Netの各ブロックの学習率をカンマ区切りで23個(時刻/ラベル埋め込み、入力9、中間3、出力9、out)。U-Netでは learning_rate の代わりに使われ、0 のブロックは凍結されます。</translation>
    </message>
    <message>
        <source>Scale weight norms</source>
        <translation>重みノルムのスケーリング</translation>
    </message>
    <message>
        <source>Max-norm of each LoRA module&apos;s update: scaled back to it after every step (1 is typical); 0 or unset: off.</source>
        <translation>各LoRAモジュールの更新量の最大ノルム。毎ステップ後にこの値まで縮小します(一般的には1)。0または未設定: オフ。</translation>
    </message>
    <message>
        <source>Fused optimizer groups</source>
        <translation>融合オプティマイザーグループ</translation>
    </message>
    <message>
        <source>sd-scripts&apos; N optimizers stepped as their gradients complete: here each weight is stepped as soon as its gradient is (per-weight optimizers, no gradient accumulation).</source>
        <translation>sd-scriptsでは勾配がそろったN個のオプティマイザーを順に更新します。ここでは各重みを勾配ができ次第すぐ更新します(重みごとのオプティマイザー、勾配累積なし)。</translation>
    </message>
    <message>
        <source>Blockwise fused optimizers</source>
        <translation>ブロックごとの融合オプティマイザー</translation>
    </message>
    <message>
        <source>flux_train.py&apos;s optimizer per block, stepped as its gradients complete: here each weight is stepped as soon as its gradient is (per-weight optimizers, no gradient accumulation).</source>
        <translation>flux_train.py ではブロックごとのオプティマイザーを勾配がそろい次第更新します。ここでは各重みを勾配ができ次第すぐ更新します(重みごとのオプティマイザー、勾配累積なし)。</translation>
    </message>
    <message>
        <source>Learning-rate schedule (diffusers/transformers names, as sd-scripts); lr_scheduler_type replaces it.</source>
        <translation>学習率スケジュール(sd-scripts と同じ diffusers/transformers の名前)。lr_scheduler_type があればそちらが優先されます。</translation>
    </message>
    <message>
        <source>LR scheduler class</source>
        <translation>学習率スケジューラーのクラス</translation>
    </message>
    <message>
        <source>A torch.optim.lr_scheduler class (short or full name) used instead of lr_scheduler, with lr_scheduler_args as its arguments (e.g. T_max=1000), stepped once per optimizer step.</source>
        <translation>lr_scheduler の代わりに使う torch.optim.lr_scheduler のクラス(短い名前または完全名)。引数は lr_scheduler_args(例: T_max=1000)で、オプティマイザーのステップごとに1回進みます。</translation>
    </message>
    <message>
        <source>LR scheduler arguments</source>
        <translation>学習率スケジューラーの引数</translation>
    </message>
    <message>
        <source>key=value pairs with Python values for the schedule, e.g. T_max=1000 eta_min=1e-6, milestones=[500,800], step_rules=&apos;1:10,0.1:20,0.01&apos;, warmup_type=&apos;linear&apos;.</source>
        <translation>スケジュールの key=value の組(値はPythonの書き方)。例: T_max=1000 eta_min=1e-6、milestones=[500,800]、step_rules=&apos;1:10,0.1:20,0.01&apos;、warmup_type=&apos;linear&apos;。</translation>
    </message>
    <message>
        <source>LR decay steps</source>
        <translation>学習率の減衰ステップ数</translation>
    </message>
    <message>
        <source>Decay steps of warmup_stable_decay, or a ratio of the total steps when below 1.</source>
        <translation>warmup_stable_decay の減衰ステップ数。1未満なら総ステップ数に対する割合。</translation>
    </message>
    <message>
        <source>LR minimum ratio</source>
        <translation>学習率の最小比率</translation>
    </message>
    <message>
        <source>Lowest learning rate as a ratio of the initial one, for cosine_with_min_lr and warmup_stable_decay.</source>
        <translation>cosine_with_min_lr と warmup_stable_decay での、初期値に対する最小学習率の比率。</translation>
    </message>
    <message>
        <source>LR timescale</source>
        <translation>学習率のタイムスケール</translation>
    </message>
    <message>
        <source>Timescale of inverse_sqrt; the warmup steps when unset (10000 without warmup).</source>
        <translation>inverse_sqrt のタイムスケール。未設定ならウォームアップのステップ数(ウォームアップなしなら10000)。</translation>
    </message>
    <message>
        <source>Keep last N epoch states</source>
        <translation>最新Nエポックの状態を保持</translation>
    </message>
    <message>
        <source>Delete older per-epoch states, keeping the last N (instead of save_last_n_epochs for states).</source>
        <translation>古いエポックごとの状態を削除し、最新N個を残します(状態には save_last_n_epochs の代わりにこれを使います)。</translation>
    </message>
    <message>
        <source>Keep last N step states</source>
        <translation>最新Nステップの状態を保持</translation>
    </message>
    <message>
        <source>Delete per-step states older than N steps (instead of save_last_n_steps for states).</source>
        <translation>Nステップより古いステップごとの状態を削除します(状態には save_last_n_steps の代わりにこれを使います)。</translation>
    </message>
    <message>
        <source>Initial step</source>
        <translation>開始ステップ</translation>
    </message>
    <message>
        <source>Start the step count here (all epochs counted; overrides initial_epoch and a resumed state&apos;s step). The lr schedule keeps its own count: from 0, or from the resumed state.</source>
        <translation>ステップ数をここから数え始めます(全エポック通算。initial_epoch や再開した状態のステップより優先)。学習率スケジュールは独自のカウント(0から、または再開した状態から)を保ちます。</translation>
    </message>
    <message>
        <source>Initial epoch</source>
        <translation>開始エポック</translation>
    </message>
    <message>
        <source>Start at this epoch (1 is the first): the step count starts at its first step.</source>
        <translation>このエポックから開始します(1が最初)。ステップ数はそのエポックの最初のステップから数えます。</translation>
    </message>
    <message>
        <source>Skip data until initial step</source>
        <translation>開始ステップまでデータを飛ばす</translation>
    </message>
    <message>
        <source>With initial_step or initial_epoch, continue the data from that step&apos;s batch instead of the start of its epoch.</source>
        <translation>initial_step または initial_epoch と併用すると、そのエポックの最初ではなく、そのステップのバッチからデータを続けます。</translation>
    </message>
    <message>
        <source>Folder with T5&apos;s spiece.model. Unset: the copy sd-scripts downloaded (google/t5-v1_1-xxl in the Hugging Face cache).</source>
        <translation>T5の spiece.model があるフォルダー。未設定: sd-scriptsがダウンロードしたもの(Hugging Faceキャッシュ内の google/t5-v1_1-xxl)。</translation>
    </message>
    <message>
        <source>networks.lora (SDXL, SD), networks.lora_flux (FLUX) or networks.lora_sd3 (SD 3.x); chosen from the family when unset. lycoris.kohya trains LyCORIS&apos;s LoCon, LoHa, LoKr, IA3 or full (network_args algo=...).</source>
        <translation>networks.lora(SDXL、SD)、networks.lora_flux(FLUX)または networks.lora_sd3(SD 3.x)。未設定のときはモデルファミリーから選ばれます。lycoris.kohya は LyCORIS の LoCon、LoHa、LoKr、IA3、full を学習します(network_args の algo=...)。</translation>
    </message>
    <message>
        <source>LoRA rank; 4 when unset. With LyCORIS&apos;s LoKr a rank of at least half a layer&apos;s size (kohya_ss&apos;s 100000) trains its second Kronecker factor whole.</source>
        <translation>LoRAのランク。未設定のときは4。LyCORISのLoKrでは、層の大きさの半分以上のランク(kohya_ssの100000)で2つ目のクロネッカー因子を分解せずに学習します。</translation>
    </message>
    <message>
        <source>SD 2.x</source>
        <translation>SD 2.x</translation>
    </message>
    <message>
        <source>The checkpoint is SD 2.x (OpenCLIP ViT-H text encoder), as sd-scripts&apos; --v2. With model_family auto the checkpoint&apos;s keys decide; v2 on an SD 1.x checkpoint is an error.</source>
        <translation>チェックポイントが SD 2.x(OpenCLIP ViT-H テキストエンコーダー)であることを示します。sd-scripts の --v2 と同じです。model_family が auto のときはチェックポイントのキーで判定し、SD 1.x のチェックポイントに v2 を指定するとエラーになります。</translation>
    </message>
    <message>
        <source>Also train the text encoders (SDXL, SD 1.x/2.x and SD 3.x&apos;s CLIPs, DreamBooth and fine-tune).</source>
        <translation>テキストエンコーダーも学習します（SDXL、SD 1.x/2.x、SD 3.x の CLIP。DreamBooth とファインチューン）。</translation>
    </message>
    <message>
        <source>VRAM budget (GiB)</source>
        <translation>VRAM 予算 (GiB)</translation>
    </message>
    <message>
        <source>GPU memory the run may use: Sinter chooses fp8_base, blocks_to_swap, gradient checkpointing, checkpoint offload and (fine-tune) fused backward, the fastest plan that fits; options you set to other than their defaults are kept. 0 or unset: off. Sinter&apos;s own key; sd-scripts ignores it.</source>
        <translation>実行が使える GPU メモリ: Sinter が fp8_base、blocks_to_swap、勾配チェックポイント、チェックポイントのオフロード、(ファインチューニングでは) fused backward を選び、収まる中で最速の計画を採用します。既定値以外に設定したオプションはそのまま保持されます。0 または未設定: オフ。Sinter 独自のキーで、sd-scripts は無視します。</translation>
    </message>
    <message>
        <source>off</source>
        <translation>オフ</translation>
    </message>
    <message>
        <source>Gradient communication</source>
        <translation>勾配の通信</translation>
    </message>
    <message>
        <source>fp8 scaled base</source>
        <translation>fp8 スケール付きベース</translation>
    </message>
    <message>
        <source>With fp8_base, store each frozen Linear weight in fp8 with a scale from its largest value (musubi-tuner&apos;s fp8_scaled) instead of a plain cast. Sinter&apos;s own key; sd-scripts ignores it.</source>
        <translation>fp8_base と併用し、凍結した各 Linear の重みを、最大値から求めたスケール付きで fp8 に保存します(musubi-tuner の fp8_scaled)。単純なキャストの代わりです。Sinter 独自のキーで、sd-scripts は無視します。</translation>
    </message>
    <message>
        <source>fp8 fast compute</source>
        <translation>fp8 高速演算</translation>
    </message>
    <message>
        <source>With fp8_scaled, multiply the frozen base&apos;s weights on FP8 tensor cores (GPUs of compute capability 8.9 or higher) with the activations in fp8; LoRA stays in the training precision. Faster steps, slightly less exact. Sinter&apos;s own key; sd-scripts ignores it.</source>
        <translation>fp8_scaled と併用し、凍結したベースの重みの行列積を FP8 Tensor コア(Compute Capability 8.9 以上の GPU)で、活性も fp8 にして計算します。LoRA は学習精度のままです。ステップは速くなり、精度はわずかに下がります。Sinter 独自のキーで、sd-scripts は無視します。</translation>
    </message>
    <message>
        <source>fp8 fast backward</source>
        <translation>fp8 高速逆伝播</translation>
    </message>
    <message>
        <source>With fp8_fast, compute the base&apos;s input gradients on FP8 tensor cores too (the gradients in e4m3, scaled per token); off keeps them in the training precision. Sinter&apos;s own key; sd-scripts ignores it.</source>
        <translation>fp8_fast と併用し、ベースの入力勾配も FP8 Tensor コアで計算します(勾配はトークンごとにスケールした e4m3)。オフにすると学習精度のままです。Sinter 独自のキーで、sd-scripts は無視します。</translation>
    </message>
    <message>
        <source>With several GPUs: the precision gradients are all-reduced in. no: their own (float32); bf16 or fp16: divided by the GPUs, rounded to 16 bits for the transfer and widened back, as DDP&apos;s compression hooks (accelerate&apos;s comm_hook). Half the traffic; the averaged gradient keeps 8 (bf16) or 11 (fp16) significant bits. Sinter&apos;s own key; sd-scripts has no such option.</source>
        <translation>複数 GPU のとき、勾配を all-reduce する精度です。no: そのままの精度(float32)。bf16 または fp16: GPU 数で割ってから転送のために 16 ビットに丸め、元に戻します(DDP の圧縮フック、accelerate の comm_hook と同じ)。通信量は半分になり、平均した勾配の有効桁は 8 ビット(bf16)または 11 ビット(fp16)になります。Sinter 独自のキーで、sd-scripts にはありません。</translation>
    </message>
    <message>
        <source>T5-XXL learning rate</source>
        <translation>T5-XXL 学習率</translation>
    </message>
    <message>
        <source>Learning rate of T5-XXL&apos;s LoRA (network_args train_t5xxl=True), and of CLIP-G&apos;s for SD 3.x; text_encoder_lr when unset. sd-scripts reads it as text_encoder_lr&apos;s second value.</source>
        <translation>T5-XXL の LoRA の学習率（network_args train_t5xxl=True）、SD 3.x では CLIP-G の学習率も。未設定時は text_encoder_lr。sd-scripts では text_encoder_lr の 2 番目の値として読まれます。</translation>
    </message>
    <message>
        <source>SD 3.x T5-XXL learning rate</source>
        <translation>SD 3.x T5-XXL 学習率</translation>
    </message>
    <message>
        <source>Learning rate of SD 3.x&apos;s T5-XXL LoRA alone (network_args train_t5xxl=True); t5xxl_lr when unset. sd-scripts reads it as text_encoder_lr&apos;s third value (networks.lora_sd3).</source>
        <translation>SD 3.x の T5-XXL の LoRA だけの学習率（network_args train_t5xxl=True）。未設定時は t5xxl_lr。sd-scripts では text_encoder_lr の 3 番目の値として読まれます（networks.lora_sd3）。</translation>
    </message>
    <message>
        <source>Pivotal embeddings</source>
        <translation>ピボタルチューニング用埋め込み</translation>
    </message>
    <message>
        <source>Pivotal tuning: embeddings for new tokens trained with the LoRA, one item each: token_string=... init_word=... num_vectors_per_token=... weights=... learning_rate=... (text_encoder_lr, else learning_rate, when unset). Saved in the LoRA file (bundle_emb) and apart. Sinter&apos;s own key; sd-scripts ignores it.</source>
        <translation>ピボタルチューニング：LoRA と一緒に学習する新しいトークンの埋め込み。1 項目につき 1 つ：token_string=... init_word=... num_vectors_per_token=... weights=... learning_rate=...（未設定時は text_encoder_lr、なければ learning_rate）。LoRA ファイル内（bundle_emb）と別ファイルに保存されます。Sinter 独自のキーで、sd-scripts は無視します。</translation>
    </message>
</context>
<context>
    <name>PresetChanges</name>
    <message>
        <source>(not set)</source>
        <translation>(未設定)</translation>
    </message>
</context>
<context>
    <name>QueueStore</name>
    <message>
        <source>Cannot make the queue folder %1.</source>
        <translation>キューのフォルダー %1 を作成できません。</translation>
    </message>
    <message>
        <source>Could not write %1: %2</source>
        <translation>%1 を書き込めませんでした: %2</translation>
    </message>
    <message>
        <source>The app ended during this run.</source>
        <translation>この実行の途中でアプリが終了しました。</translation>
    </message>
    <message>
        <source>The run queue is in use by another Sinter window (process %1); this one leaves it alone.</source>
        <translation>実行キューは別の Sinter ウィンドウ(プロセス %1)が使用中です。このウィンドウでは操作しません。</translation>
    </message>
    <message>
        <source>The run queue is not open in this window.</source>
        <translation>実行キューはこのウィンドウでは開かれていません。</translation>
    </message>
</context>
<context>
    <name>RunControlText</name>
    <message>
        <source>Sample now</source>
        <translation>今すぐサンプル</translation>
    </message>
    <message>
        <source>Save now</source>
        <translation>今すぐ保存</translation>
    </message>
    <message>
        <source>Stop after this epoch</source>
        <translation>このエポックの後で停止</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>一時停止</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>再開</translation>
    </message>
    <message>
        <source>%1 at step %2: nothing to do (%3)</source>
        <translation>%1 (ステップ %2): 何もしません (%3)</translation>
    </message>
    <message>
        <source>%1: the run ends after epoch %2, saved as at its end.</source>
        <translation>%1: 実行はエポック %2 の後で終了し、終了時と同じく保存されます。</translation>
    </message>
    <message>
        <source>%1: the run ended after epoch %2 as asked.</source>
        <translation>%1: 要求どおりエポック %2 の後で実行を終了しました。</translation>
    </message>
    <message>
        <source>%1: sample images made at step %2.</source>
        <translation>%1: ステップ %2 でサンプル画像を作成しました。</translation>
    </message>
    <message>
        <source>%1: saved at step %2.</source>
        <translation>%1: ステップ %2 で保存しました。</translation>
    </message>
    <message>
        <source>Paused after step %1; the model stays loaded.</source>
        <translation>ステップ %1 の後で一時停止しました。モデルは読み込まれたままです。</translation>
    </message>
    <message>
        <source>Resumed at step %1 after a pause of %2 s.</source>
        <translation>%2 秒の一時停止の後、ステップ %1 から再開しました。</translation>
    </message>
    <message>
        <source>%1 at step %2: %3</source>
        <translation>%1 (ステップ %2): %3</translation>
    </message>
</context>
<context>
    <name>main</name>
    <message>
        <source>Sinter: a training studio for SDXL, FLUX.1, SD 1.x, SD 2.x and SD 3.x.</source>
        <translation>Sinter: SDXL、FLUX.1、SD 1.x、SD 2.x、SD 3.x のための学習スタジオ。</translation>
    </message>
    <message>
        <source>Open a configuration file.</source>
        <translation>設定ファイルを開きます。</translation>
    </message>
    <message>
        <source>User interface language (ja, zh_CN, en).</source>
        <translation>ユーザーインターフェースの言語(ja、zh_CN、en)。</translation>
    </message>
    <message>
        <source>A configuration file to open.</source>
        <translation>開く設定ファイル。</translation>
    </message>
</context>
<context>
    <name>sinter::gui::CheckpointGridPanel</name>
    <message>
        <source>The rows of the grid: the base model, then each checked file</source>
        <translation>グリッドの行: ベースモデル、続いてチェックした各ファイル</translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation>再読み込み</translation>
    </message>
    <message>
        <source>List the output folder&apos;s files again</source>
        <translation>出力フォルダーのファイルを一覧し直します</translation>
    </message>
    <message>
        <source>Make grid</source>
        <translation>グリッドを作成</translation>
    </message>
    <message>
        <source>Render the sample prompts for the base model and each checked file, each prompt with one seed in every row</source>
        <translation>ベースモデルとチェックした各ファイルでサンプルプロンプトを描画します (各プロンプトはどの行でも同じシード)</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>%v of %m images</source>
        <translation>%v / %m 枚</translation>
    </message>
    <message>
        <source>Saved files</source>
        <translation>保存ファイル</translation>
    </message>
    <message>
        <source>Set output_dir: the grid compares the files a run saves there.</source>
        <translation>output_dir を設定してください: グリッドは実行がそこに保存したファイルを比較します。</translation>
    </message>
    <message>
        <source>No saved files in %1 yet: the grid shows the base model alone.</source>
        <translation>%1 にはまだ保存ファイルがありません: グリッドはベースモデルだけを表示します。</translation>
    </message>
    <message numerus="yes">
        <source>%n saved file(s) in %1. Each checked one is a row, after the base model; each sample prompt is a column.</source>
        <translation>
            <numerusform>%1 に %n 個の保存ファイルがあります。チェックした各ファイルがベースモデルの後の 1 行、各サンプルプロンプトが 1 列になります。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n file(s) without LoRA modules (such as the embeddings a pivotal tuning run writes apart) are not listed: each LoRA file&apos;s row has the embeddings it bundles.</source>
        <translation>
            <numerusform>LoRA モジュールを持たない %n 個のファイル（ピボタルチューニングの実行が別に書き出す埋め込みなど）は一覧に表示しません: 各 LoRA ファイルの行には、そのファイルに同梱された埋め込みが使われます。</numerusform>
        </translation>
    </message>
    <message>
        <source>Rendering the grid: the base model loads, then each row&apos;s file…</source>
        <translation>グリッドを描画中: ベースモデルを読み込み、続いて各行のファイルを読み込みます…</translation>
    </message>
    <message>
        <source>The grid cannot be shown: %1</source>
        <translation>グリッドを表示できません: %1</translation>
    </message>
    <message>
        <source>%1: %2 rows × %3 prompts.</source>
        <translation>%1: %2 行 × %3 プロンプト。</translation>
    </message>
    <message>
        <source>No grid: %1</source>
        <translation>グリッドなし: %1</translation>
    </message>
    <message>
        <source>Error: %1</source>
        <translation>エラー: %1</translation>
    </message>
    <message>
        <source>Warning: %1</source>
        <translation>警告: %1</translation>
    </message>
    <message>
        <source>The runner stopped before the grid was written (exit code %1); its log is below.</source>
        <translation>グリッドを書き出す前にランナーが停止しました (終了コード %1)。ログを下に示します。</translation>
    </message>
    <message>
        <source>No grid (exit code %1): %2</source>
        <translation>グリッドなし (終了コード %1): %2</translation>
    </message>
    <message>
        <source>see the runner&apos;s log below</source>
        <translation>下のランナーのログを参照してください</translation>
    </message>
</context>
<context>
    <name>sinter::gui::CheckpointGridView</name>
    <message>
        <source>Base model (step 0)</source>
        <translation>ベースモデル (ステップ 0)</translation>
    </message>
    <message>
        <source>step %1, epoch %2</source>
        <translation>ステップ %1、エポック %2</translation>
    </message>
    <message>
        <source>step %1</source>
        <translation>ステップ %1</translation>
    </message>
    <message>
        <source>epoch %1</source>
        <translation>エポック %1</translation>
    </message>
    <message>
        <source>The base model, %1, without any saved file</source>
        <translation>ベースモデル %1 (保存ファイルなし)</translation>
    </message>
    <message>
        <source>Negative prompt: %1</source>
        <translation>ネガティブプロンプト: %1</translation>
    </message>
    <message>
        <source>Seed %1, %2x%3, %4 steps, CFG scale %5, %6</source>
        <translation>シード %1、%2x%3、%4 ステップ、CFG スケール %5、%6</translation>
    </message>
</context>
<context>
    <name>sinter::gui::CommandPreviewDialog</name>
    <message>
        <source>Command</source>
        <translation>コマンド</translation>
    </message>
    <message>
        <source>%1 (written when the run starts)</source>
        <translation>%1(実行開始時に書き込まれます)</translation>
    </message>
    <message>
        <source>The same run with command-line flags only</source>
        <translation>同じ実行をコマンドラインフラグだけで表したもの</translation>
    </message>
    <message>
        <source>The same run started as sd-scripts is, by sinter-runner or by accelerate</source>
        <translation>同じ実行を sd-scripts と同じ形で起動したもの (sinter-runner でも accelerate でも)</translation>
    </message>
    <message>
        <source>Print command</source>
        <translation>コマンドを表示</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>コピー</translation>
    </message>
</context>
<context>
    <name>sinter::gui::CompileSettingsPanel</name>
    <message>
        <source>Torch Compile Settings</source>
        <translation>Torch コンパイル設定</translation>
    </message>
    <message>
        <source>The runner&apos;s plan for this config appears here.</source>
        <translation>この設定に対するランナーの計画がここに表示されます。</translation>
    </message>
    <message>
        <source>The runner&apos;s plan for this config on this machine (sinter-runner --compile_plan):</source>
        <translation>このマシンでのこの設定に対するランナーの計画 (sinter-runner --compile_plan):</translation>
    </message>
    <message>
        <source>The runner refuses these settings:</source>
        <translation>ランナーはこの設定を受け付けません:</translation>
    </message>
</context>
<context>
    <name>sinter::gui::DatasetCheckPanel</name>
    <message>
        <source>No dataset check yet: “Check again” reads the dataset as a run would.</source>
        <translation>データセットのチェックはまだありません。「もう一度チェック」で、実行時と同じようにデータセットを読み込みます。</translation>
    </message>
    <message>
        <source>Check again</source>
        <translation>もう一度チェック</translation>
    </message>
    <message>
        <source>Read the dataset of the settings as they are now, as a run would, and decode every image</source>
        <translation>現在の設定のデータセットを実行時と同じように読み込み、すべての画像をデコードします</translation>
    </message>
    <message>
        <source>File</source>
        <translation>ファイル</translation>
    </message>
    <message>
        <source>Finding</source>
        <translation>検出内容</translation>
    </message>
    <message>
        <source>Checking the dataset: every image is read and decoded…</source>
        <translation>データセットをチェック中: すべての画像を読み込んでデコードしています…</translation>
    </message>
    <message>
        <source>Error: %1</source>
        <translation>エラー: %1</translation>
    </message>
    <message>
        <source>Warning: %1</source>
        <translation>警告: %1</translation>
    </message>
    <message>
        <source>The runner crashed during the check (exit code %1); its log is below.</source>
        <translation>チェック中にランナーがクラッシュしました(終了コード %1)。ログを下に示します。</translation>
    </message>
    <message>
        <source>The dataset could not be checked (exit code %1): %2</source>
        <translation>データセットをチェックできませんでした(終了コード %1): %2</translation>
    </message>
    <message>
        <source>see the runner&apos;s log below</source>
        <translation>下のランナーのログを参照してください</translation>
    </message>
    <message numerus="yes">
        <source>No problems found in %n image(s).</source>
        <translation>
            <numerusform>%n 枚の画像に問題は見つかりませんでした。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n image(s) in use;</source>
        <translation>
            <numerusform>使用する画像は %n 枚、</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n finding(s) below.</source>
        <translation>
            <numerusform>検出内容は以下の %n 件です。</numerusform>
        </translation>
    </message>
    <message>
        <source>A run would refuse this dataset.</source>
        <translation>このデータセットでは実行が拒否されます。</translation>
    </message>
    <message>
        <source>Duplicates were not looked for.</source>
        <translation>重複は調べていません。</translation>
    </message>
    <message>
        <source>Only the images&apos; headers were read (“Check again” decodes every image).</source>
        <translation>画像のヘッダーのみを読み込みました(「もう一度チェック」ですべての画像をデコードします)。</translation>
    </message>
    <message>
        <source>Why a run would refuse it</source>
        <translation>実行が拒否される理由</translation>
    </message>
    <message>
        <source>Images without a caption file</source>
        <translation>キャプションファイルのない画像</translation>
    </message>
    <message>
        <source>Empty captions</source>
        <translation>空のキャプション</translation>
    </message>
    <message>
        <source>Files with the same content</source>
        <translation>内容が同じファイル</translation>
    </message>
    <message>
        <source>same content as %1</source>
        <translation>%1 と同じ内容</translation>
    </message>
    <message>
        <source>Smaller than the smallest bucket</source>
        <translation>最小のバケットより小さい画像</translation>
    </message>
    <message>
        <source>Cannot be read</source>
        <translation>読み込めないファイル</translation>
    </message>
    <message>
        <source>Folders: images × repeats</source>
        <translation>フォルダー: 画像数 × 繰り返し回数</translation>
    </message>
    <message>
        <source>%1 × %2 = %3</source>
        <translation>%1 × %2 = %3</translation>
    </message>
    <message>
        <source>(regularisation images)</source>
        <translation>(正則化画像)</translation>
    </message>
    <message numerus="yes">
        <source>(%n held out for validation)</source>
        <translation>
            <numerusform>(検証用に %n 枚を除外)</numerusform>
        </translation>
    </message>
    <message>
        <source>Buckets</source>
        <translation>バケット</translation>
    </message>
    <message>
        <source>%1 × %2</source>
        <translation>%1 × %2</translation>
    </message>
    <message numerus="yes">
        <source>%n image(s)</source>
        <translation>
            <numerusform>%n 枚</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n with repeats</source>
        <translation>
            <numerusform>繰り返し込みで %n</numerusform>
        </translation>
    </message>
    <message>
        <source>What reading the dataset said</source>
        <translation>データセットの読み込み時のメッセージ</translation>
    </message>
</context>
<context>
    <name>sinter::gui::LogView</name>
    <message>
        <source>Find in log</source>
        <translation>ログ内を検索</translation>
    </message>
    <message>
        <source>Next</source>
        <translation>次へ</translation>
    </message>
    <message>
        <source>Previous</source>
        <translation>前へ</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>コピー</translation>
    </message>
    <message>
        <source>Copy the selection, or the whole log when nothing is selected</source>
        <translation>選択範囲をコピーします。何も選択していなければログ全体をコピーします</translation>
    </message>
    <message>
        <source>Save…</source>
        <translation>保存…</translation>
    </message>
    <message>
        <source>Save the log to a file</source>
        <translation>ログをファイルに保存します</translation>
    </message>
    <message>
        <source>Could not write %1: %2</source>
        <translation>%1 を書き込めませんでした: %2</translation>
    </message>
    <message>
        <source>Save log</source>
        <translation>ログを保存</translation>
    </message>
    <message>
        <source>Log files (*.log *.txt);;All files (*)</source>
        <translation>ログファイル (*.log *.txt);;すべてのファイル (*)</translation>
    </message>
    <message numerus="yes">
        <source> [… %n characters not shown …] </source>
        <translation>
            <numerusform> [… %n 文字を省略 …] </numerusform>
        </translation>
    </message>
</context>
<context>
    <name>sinter::gui::LossChart</name>
    <message>
        <source>Loss</source>
        <translation>損失</translation>
    </message>
    <message>
        <source>Smoothed</source>
        <translation>平滑化</translation>
    </message>
    <message>
        <source>Validation loss</source>
        <translation>検証損失</translation>
    </message>
    <message>
        <source>Drag across steps to zoom in; right-click to see the whole run again.</source>
        <translation>ステップ範囲をドラッグして拡大、右クリックで実行全体に戻ります。</translation>
    </message>
    <message>
        <source>Kept best (validation)</source>
        <translation>保持中のベスト(検証)</translation>
    </message>
    <message>
        <source>Early stop</source>
        <translation>早期終了</translation>
    </message>
</context>
<context>
    <name>sinter::gui::MainWindow</name>
    <message>
        <source>Tools</source>
        <translation>ツール</translation>
    </message>
    <message>
        <source>Tools — Sinter</source>
        <translation>ツール — Sinter</translation>
    </message>
    <message>
        <source>&amp;Open…</source>
        <translation>開く(&amp;O)…</translation>
    </message>
    <message>
        <source>&amp;Save</source>
        <translation>保存(&amp;S)</translation>
    </message>
    <message>
        <source>Save &amp;As…</source>
        <translation>名前を付けて保存(&amp;A)…</translation>
    </message>
    <message>
        <source>%1 (running)</source>
        <translation>%1(実行中)</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>ファイル(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;New</source>
        <translation>新規(&amp;N)</translation>
    </message>
    <message>
        <source>Open &amp;Recent</source>
        <translation>最近使ったファイル(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Import kohya_ss JSON…</source>
        <translation>kohya_ss の JSON をインポート(&amp;I)…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>終了(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;Run</source>
        <translation>実行(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Start training</source>
        <translation>学習を開始(&amp;S)</translation>
    </message>
    <message>
        <source>S&amp;top</source>
        <translation>停止(&amp;T)</translation>
    </message>
    <message>
        <source>&amp;Print command</source>
        <translation>コマンドを表示(&amp;P)</translation>
    </message>
    <message>
        <source>&amp;Settings</source>
        <translation>設定(&amp;S)</translation>
    </message>
    <message>
        <source>Runner &amp;program…</source>
        <translation>ランナープログラム(&amp;P)…</translation>
    </message>
    <message>
        <source>Open user &amp;preset folder</source>
        <translation>ユーザープリセットのフォルダーを開く(&amp;P)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>ヘルプ(&amp;H)</translation>
    </message>
    <message>
        <source>&amp;About Sinter</source>
        <translation>Sinter について(&amp;A)</translation>
    </message>
    <message>
        <source>%1[*] — %2 — Sinter</source>
        <translation>%1[*] — %2 — Sinter</translation>
    </message>
    <message>
        <source>(none)</source>
        <translation>(なし)</translation>
    </message>
    <message>
        <source>Clear list</source>
        <translation>一覧を消去</translation>
    </message>
    <message>
        <source>Unsaved changes</source>
        <translation>未保存の変更</translation>
    </message>
    <message>
        <source>The %1 settings (%2) have unsaved changes. Save them?</source>
        <translation>%1 の設定(%2)には未保存の変更があります。保存しますか?</translation>
    </message>
    <message>
        <source>Save</source>
        <translation>保存</translation>
    </message>
    <message>
        <source>Saved %1</source>
        <translation>%1 を保存しました</translation>
    </message>
    <message>
        <source>Save configuration</source>
        <translation>設定を保存</translation>
    </message>
    <message>
        <source>Open configuration</source>
        <translation>設定を開く</translation>
    </message>
    <message>
        <source>TOML (*.toml);;All files (*)</source>
        <translation>TOML (*.toml);;すべてのファイル (*)</translation>
    </message>
    <message>
        <source>Import kohya_ss configuration</source>
        <translation>kohya_ss の設定をインポート</translation>
    </message>
    <message>
        <source>kohya_ss JSON (*.json);;All files (*)</source>
        <translation>kohya_ss JSON (*.json);;すべてのファイル (*)</translation>
    </message>
    <message>
        <source>Imported %1 into the %2 tab.</source>
        <translation>%1 を %2 タブにインポートしました。</translation>
    </message>
    <message numerus="yes">
        <source>Not carried over: this changes training (%n)</source>
        <translation>
            <numerusform>引き継げなかった設定: 学習が変わります (%n)</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Carried over (%n)</source>
        <translation>
            <numerusform>引き継いだ設定 (%n)</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>At kohya_ss&apos;s defaults: nothing lost (%n)</source>
        <translation>
            <numerusform>kohya_ss の既定値のまま: 失われた設定はありません (%n)</numerusform>
        </translation>
    </message>
    <message>
        <source>Everything that changes training was carried over. The details list each setting.</source>
        <translation>学習に影響する設定はすべて引き継ぎました。詳細に各設定を示します。</translation>
    </message>
    <message numerus="yes">
        <source>%n setting(s) not carried over: this changes training.</source>
        <translation>
            <numerusform>%n 個の設定を引き継げませんでした: 学習が変わります。</numerusform>
        </translation>
    </message>
    <message>
        <source>sinter-runner program</source>
        <translation>sinter-runner プログラム</translation>
    </message>
    <message>
        <source>About Sinter</source>
        <translation>Sinter について</translation>
    </message>
    <message>
        <source>&lt;h3&gt;Sinter %1&lt;/h3&gt;&lt;p&gt;A native training studio for SDXL, FLUX.1, SD 1.x, SD 2.x and SD 3.x.&lt;/p&gt;&lt;p&gt;Runner: %2&lt;/p&gt;</source>
        <translation>&lt;h3&gt;Sinter %1&lt;/h3&gt;&lt;p&gt;SDXL、FLUX.1、SD 1.x、SD 2.x、SD 3.x のためのネイティブな学習スタジオ。&lt;/p&gt;&lt;p&gt;ランナー: %2&lt;/p&gt;</translation>
    </message>
    <message>
        <source>Training is running</source>
        <translation>学習を実行中</translation>
    </message>
    <message numerus="yes">
        <source>%n run(s) in progress. Stop them (they save first) and quit?</source>
        <translation>
            <numerusform>%n 件の実行が進行中です。停止して(先に保存されます)終了しますか?</numerusform>
        </translation>
    </message>
    <message>
        <source>Use the &amp;bundled runner</source>
        <translation>同梱のランナーを使う(&amp;B)</translation>
    </message>
    <message>
        <source>Runner: %1</source>
        <translation>ランナー: %1</translation>
    </message>
    <message>
        <source>Stopping the runs; the window closes when they have saved.</source>
        <translation>実行を停止しています。保存が終わるとウィンドウを閉じます。</translation>
    </message>
    <message>
        <source>Check &amp;dataset…</source>
        <translation>データセットをチェック(&amp;D)…</translation>
    </message>
    <message>
        <source>Checkpoint &amp;grid…</source>
        <translation>チェックポイントグリッド(&amp;G)…</translation>
    </message>
    <message>
        <source>&amp;Queue</source>
        <translation>キュー(&amp;Q)</translation>
    </message>
    <message>
        <source>Add current config to &amp;queue</source>
        <translation>現在の設定をキューに追加(&amp;Q)</translation>
    </message>
    <message>
        <source>Queue</source>
        <translation>キュー</translation>
    </message>
</context>
<context>
    <name>sinter::gui::OptionEditor</name>
    <message>
        <source>Not set</source>
        <translation>未設定</translation>
    </message>
    <message>
        <source>Default</source>
        <translation>既定値</translation>
    </message>
    <message>
        <source>Kept for this session only; never saved to a file</source>
        <translation>このセッションの間だけ保持され、ファイルには保存されません</translation>
    </message>
    <message>
        <source>Choose a folder</source>
        <translation>フォルダーを選択</translation>
    </message>
    <message>
        <source>Choose a file</source>
        <translation>ファイルを選択</translation>
    </message>
    <message>
        <source>Items separated by spaces; quote items that contain spaces</source>
        <translation>項目はスペースで区切り、スペースを含む項目は引用符で囲みます</translation>
    </message>
</context>
<context>
    <name>sinter::gui::OptionForm</name>
    <message>
        <source>Source model</source>
        <translation>ソースモデル</translation>
    </message>
    <message>
        <source>Dataset</source>
        <translation>データセット</translation>
    </message>
    <message>
        <source>Training</source>
        <translation>学習</translation>
    </message>
    <message>
        <source>Network</source>
        <translation>ネットワーク</translation>
    </message>
    <message>
        <source>Embedding</source>
        <translation>埋め込み</translation>
    </message>
    <message>
        <source>Detected from the checkpoint: %1, which this tab does not train (textual inversion: SD 1.x, SD 2.x and SDXL).</source>
        <translation>チェックポイントから検出: %1。このタブでは学習できません(Textual Inversion は SD 1.x、SD 2.x、SDXL のみ)。</translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation>オプティマイザ</translation>
    </message>
    <message>
        <source>Torch Compile Settings</source>
        <translation>Torch コンパイル設定</translation>
    </message>
    <message>
        <source>Saving</source>
        <translation>保存</translation>
    </message>
    <message>
        <source>Samples</source>
        <translation>サンプル</translation>
    </message>
    <message>
        <source>Logging</source>
        <translation>ログ</translation>
    </message>
    <message>
        <source>Folders</source>
        <translation>フォルダー</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>パラメーター</translation>
    </message>
    <message>
        <source>Basic</source>
        <translation>基本</translation>
    </message>
    <message>
        <source>Advanced</source>
        <translation>詳細</translation>
    </message>
    <message>
        <source>Detected from the checkpoint: %1</source>
        <translation>チェックポイントから判定: %1</translation>
    </message>
    <message>
        <source>The checkpoint&apos;s tensor names match no known model family.</source>
        <translation>チェックポイントのテンソル名が既知のモデルファミリーに一致しません。</translation>
    </message>
    <message>
        <source>Could not read the checkpoint: %1</source>
        <translation>チェックポイントを読み込めませんでした: %1</translation>
    </message>
    <message>
        <source>The checkpoint file does not exist yet.</source>
        <translation>チェックポイントファイルはまだ存在しません。</translation>
    </message>
</context>
<context>
    <name>sinter::gui::PresetDiffDialog</name>
    <message>
        <source>Apply preset</source>
        <translation>プリセットを適用</translation>
    </message>
    <message numerus="yes">
        <source>Applying “%1” changes %n option(s):</source>
        <translation>
            <numerusform>「%1」を適用すると %n 個のオプションが変わります:</numerusform>
        </translation>
    </message>
    <message>
        <source>Option</source>
        <translation>オプション</translation>
    </message>
    <message>
        <source>Current</source>
        <translation>現在</translation>
    </message>
    <message>
        <source>Preset</source>
        <translation>プリセット</translation>
    </message>
    <message>
        <source>Apply</source>
        <translation>適用</translation>
    </message>
</context>
<context>
    <name>sinter::gui::QueuePanel</name>
    <message>
        <source>#</source>
        <translation>#</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <source>A program and its arguments, run (without a shell) when the queue ends; SINTER_QUEUE_DONE, SINTER_QUEUE_FAILED, SINTER_QUEUE_INTERRUPTED and SINTER_QUEUE_PENDING hold the counts</source>
        <translation>キューの終了時に(シェルを使わずに)実行するプログラムとその引数。SINTER_QUEUE_DONE、SINTER_QUEUE_FAILED、SINTER_QUEUE_INTERRUPTED、SINTER_QUEUE_PENDING に各件数が入ります</translation>
    </message>
    <message>
        <source>Add current config to queue</source>
        <translation>現在の設定をキューに追加</translation>
    </message>
    <message>
        <source>Add to queue</source>
        <translation>キューに追加</translation>
    </message>
    <message>
        <source>Added to the queue as run %1, into %2: another run of the queue writes the same files into its output folder.</source>
        <translation>実行 %1 としてキューに追加しました。出力先は %2 です(キュー内の別の実行が同じ出力フォルダーに同じファイルを書き込むため)。</translation>
    </message>
    <message>
        <source>Added to the queue as run %1.</source>
        <translation>実行 %1 としてキューに追加しました。</translation>
    </message>
    <message>
        <source>Choose a training tab (LoRA, DreamBooth, Fine-tune or Textual Inversion): its settings are what the queue runs.</source>
        <translation>学習タブ(LoRA、DreamBooth、ファインチューニング、Textual Inversion)のいずれかを選んでください。キューはそのタブの設定を実行します。</translation>
    </message>
    <message>
        <source>Config: %1</source>
        <translation>設定: %1</translation>
    </message>
    <message>
        <source>Done</source>
        <translation>完了</translation>
    </message>
    <message>
        <source>Down</source>
        <translation>下へ</translation>
    </message>
    <message>
        <source>Failed</source>
        <translation>失敗</translation>
    </message>
    <message>
        <source>Go on with the next run</source>
        <translation>次の実行に進む</translation>
    </message>
    <message>
        <source>Interrupted</source>
        <translation>中断</translation>
    </message>
    <message>
        <source>Keep a copy of the current tab&apos;s settings as the next run of the queue, with an output folder of its own</source>
        <translation>現在のタブの設定のコピーを、専用の出力フォルダーを持つ次の実行としてキューに加えます</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>メッセージ</translation>
    </message>
    <message>
        <source>Output folder</source>
        <translation>出力フォルダー</translation>
    </message>
    <message>
        <source>Pending</source>
        <translation>待機中</translation>
    </message>
    <message>
        <source>Queue the run again from its start</source>
        <translation>この実行を最初からもう一度キューに入れます</translation>
    </message>
    <message>
        <source>Queue the run again, going on from %1 (step %2)</source>
        <translation>この実行をもう一度キューに入れ、%1(ステップ %2)から続けます</translation>
    </message>
    <message>
        <source>Queue the run again, going on from the last training state it saved</source>
        <translation>この実行をもう一度キューに入れ、最後に保存した学習状態から続けます</translation>
    </message>
    <message>
        <source>Queue: %1</source>
        <translation>キュー: %1</translation>
    </message>
    <message>
        <source>Ran the end command: %1</source>
        <translation>終了時コマンドを実行しました: %1</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>削除</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>再開</translation>
    </message>
    <message>
        <source>Resumes from %1.</source>
        <translation>%1 から再開します。</translation>
    </message>
    <message>
        <source>Resumes from: %1</source>
        <translation>再開元: %1</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>実行</translation>
    </message>
    <message>
        <source>Run again</source>
        <translation>もう一度実行</translation>
    </message>
    <message>
        <source>Run the pending entries one after another, each in the tab of its training type</source>
        <translation>待機中の項目を順に実行します。各項目はその学習タイプのタブで実行されます</translation>
    </message>
    <message>
        <source>Running</source>
        <translation>実行中</translation>
    </message>
    <message>
        <source>Sinter</source>
        <translation>Sinter</translation>
    </message>
    <message>
        <source>Start queue</source>
        <translation>キューを開始</translation>
    </message>
    <message>
        <source>Started in: %1</source>
        <translation>開始フォルダー: %1</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状態</translation>
    </message>
    <message>
        <source>Stop queue</source>
        <translation>キューを停止</translation>
    </message>
    <message>
        <source>Stop the queue</source>
        <translation>キューを停止する</translation>
    </message>
    <message>
        <source>Stop the run going on (it saves its network and training state) and start no other</source>
        <translation>実行中の学習を停止し(ネットワークと学習状態は保存されます)、次の実行は開始しません</translation>
    </message>
    <message>
        <source>The end command could not be started: %1 (%2)</source>
        <translation>終了時コマンドを開始できませんでした: %1 (%2)</translation>
    </message>
    <message>
        <source>The queue is empty: “Add current config to queue” adds the current tab&apos;s settings.</source>
        <translation>キューは空です。「現在の設定をキューに追加」で現在のタブの設定を追加できます。</translation>
    </message>
    <message>
        <source>Up</source>
        <translation>上へ</translation>
    </message>
    <message>
        <source>When a run fails:</source>
        <translation>実行が失敗したとき:</translation>
    </message>
    <message>
        <source>When the queue ends, run:</source>
        <translation>キューの終了時に実行:</translation>
    </message>
    <message>
        <source>optional, e.g. notify-send Sinter &quot;queue finished&quot;</source>
        <translation>任意。例: notify-send Sinter &quot;queue finished&quot;</translation>
    </message>
</context>
<context>
    <name>sinter::gui::QueueRunner</name>
    <message>
        <source>A run failed and the queue stops there (on failure: stop the queue).</source>
        <translation>実行が失敗したため、キューはここで停止します(失敗時: キューを停止)。</translation>
    </message>
    <message>
        <source>Nothing to run: no entry of the queue is pending.</source>
        <translation>実行するものがありません。キューに待機中の項目はありません。</translation>
    </message>
    <message>
        <source>Queue: run %1 of %2 (%3).</source>
        <translation>キュー: 実行 %1 / %2 (%3)。</translation>
    </message>
    <message>
        <source>Running %1 of %2 in the %3 tab.</source>
        <translation>%3 タブで %1 / %2 件目を実行中です。</translation>
    </message>
    <message>
        <source>Stopping the queue: the run saves, then the queue stops.</source>
        <translation>キューを停止しています。実行中の学習を保存してからキューが止まります。</translation>
    </message>
    <message>
        <source>The queue has ended: %1 done, %2 failed, %3 interrupted, %4 pending.</source>
        <translation>キューが終了しました: 完了 %1、失敗 %2、中断 %3、待機中 %4。</translation>
    </message>
    <message>
        <source>The queue stopped; the runs left are pending.</source>
        <translation>キューを停止しました。残りの実行は待機中のままです。</translation>
    </message>
    <message>
        <source>The snapshot cannot be read: %1</source>
        <translation>スナップショットを読み込めません: %1</translation>
    </message>
    <message>
        <source>The snapshot names no training type.</source>
        <translation>スナップショットに学習タイプが指定されていません。</translation>
    </message>
    <message>
        <source>Waiting for the run in the %1 tab to end.</source>
        <translation>%1 タブの実行が終わるのを待っています。</translation>
    </message>
</context>
<context>
    <name>sinter::gui::RunController</name>
    <message>
        <source>Could not start %1: %2</source>
        <translation>%1 を起動できませんでした: %2</translation>
    </message>
    <message>
        <source>Could not start %1: it is a folder, not a program.</source>
        <translation>%1 を起動できませんでした: プログラムではなくフォルダーです。</translation>
    </message>
    <message>
        <source>%1 [… line cut: %2 more not read]</source>
        <translation>%1 [… 行を切り詰め: 残り %2 は読み込んでいません]</translation>
    </message>
    <message>
        <source>%1 [… line cut: %2 more not read; a line this long is not read as an event]</source>
        <translation>%1 [… 行を切り詰め: 残り %2 は読み込んでいません。これほど長い行はイベントとして読みません]</translation>
    </message>
</context>
<context>
    <name>sinter::gui::RunMonitor</name>
    <message>
        <source>Idle</source>
        <translation>待機中</translation>
    </message>
    <message>
        <source>%v / %m steps</source>
        <translation>%v / %m ステップ</translation>
    </message>
    <message>
        <source>Starting…</source>
        <translation>起動中…</translation>
    </message>
    <message>
        <source>%1 on %2, %3 steps</source>
        <translation>%2 で %1、%3 ステップ</translation>
    </message>
    <message>
        <source>, %1 images, %2 skipped</source>
        <translation>、画像 %1 枚、スキップ %2 件</translation>
    </message>
    <message>
        <source>, %1 images</source>
        <translation>、画像 %1 枚</translation>
    </message>
    <message>
        <source>Preparing</source>
        <translation>準備中</translation>
    </message>
    <message>
        <source>Warm-up</source>
        <translation>ウォームアップ</translation>
    </message>
    <message>
        <source>Warm-up: %1 captured in %2 s (total %3 s)</source>
        <translation>ウォームアップ: %1 を %2 秒でキャプチャ(合計 %3 秒)</translation>
    </message>
    <message>
        <source>Training</source>
        <translation>学習中</translation>
    </message>
    <message>
        <source>Warm-up took %1 s</source>
        <translation>ウォームアップに %1 秒かかりました</translation>
    </message>
    <message>
        <source>Epoch %1 / %2</source>
        <translation>エポック %1 / %2</translation>
    </message>
    <message>
        <source>Epoch %1</source>
        <translation>エポック %1</translation>
    </message>
    <message>
        <source>%1 it/s</source>
        <translation>%1 it/s</translation>
    </message>
    <message>
        <source>%1 s/it</source>
        <translation>%1 s/it</translation>
    </message>
    <message>
        <source>ETA %1</source>
        <translation>残り時間 %1</translation>
    </message>
    <message>
        <source>Epoch %1 / %2 done, average loss %3</source>
        <translation>エポック %1 / %2 完了、平均損失 %3</translation>
    </message>
    <message>
        <source>Saved %1: %2</source>
        <translation>%1 を保存: %2</translation>
    </message>
    <message>
        <source>Force-stopped: the runner was killed; the last saved state is what remains.</source>
        <translation>強制停止: ランナーを終了させました。最後に保存された状態が残っています。</translation>
    </message>
    <message>
        <source>Stopped at step %1; the network and training state were saved.</source>
        <translation>ステップ %1 で停止しました。ネットワークと学習状態は保存されました。</translation>
    </message>
    <message>
        <source>Completed: %1 steps.</source>
        <translation>完了: %1 ステップ。</translation>
    </message>
    <message>
        <source>Failed: the runner crashed.</source>
        <translation>失敗: ランナーがクラッシュしました。</translation>
    </message>
    <message>
        <source>Failed with exit code %1.</source>
        <translation>終了コード %1 で失敗しました。</translation>
    </message>
    <message>
        <source>The configuration was refused; nothing was trained.</source>
        <translation>設定が拒否されたため、何も学習していません。</translation>
    </message>
    <message>
        <source>Completed</source>
        <translation>完了</translation>
    </message>
    <message>
        <source>Stopped</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Failed</source>
        <translation>失敗</translation>
    </message>
    <message>
        <source>%1 / %2 steps</source>
        <translation>%1 / %2 ステップ</translation>
    </message>
    <message>
        <source>The runner&apos;s done event counts %1 steps, not between 0 and the run&apos;s %2; the last step seen, %3, is shown.</source>
        <translation>ランナーの done イベントは %1 ステップと報告していますが、0 から実行の %2 の範囲外です。最後に受け取ったステップ %3 を表示します。</translation>
    </message>
    <message>
        <source>The runner&apos;s done event counts %1 steps, which no step event showed; the last step seen, %2, is shown.</source>
        <translation>ランナーの done イベントは %1 ステップと報告していますが、どの step イベントにもありません。最後に受け取ったステップ %2 を表示します。</translation>
    </message>
    <message>
        <source>Paused</source>
        <translation>一時停止中</translation>
    </message>
    <message>
        <source>Completed: stopped early at step %1: %2.</source>
        <translation>完了: ステップ %1 で早期終了しました: %2。</translation>
    </message>
</context>
<context>
    <name>sinter::gui::RunPanel</name>
    <message>
        <source>Start training</source>
        <translation>学習を開始</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Finish the current step, save the network and training state, then stop</source>
        <translation>現在のステップを終え、ネットワークと学習状態を保存してから停止します</translation>
    </message>
    <message>
        <source>Force stop</source>
        <translation>強制停止</translation>
    </message>
    <message>
        <source>Kill the runner now; nothing more is saved</source>
        <translation>ランナーを直ちに終了します。これ以上は何も保存されません</translation>
    </message>
    <message>
        <source>Print command</source>
        <translation>コマンドを表示</translation>
    </message>
    <message>
        <source>Show the exact command and the TOML file a run would use</source>
        <translation>実行時に使う正確なコマンドと TOML ファイルを表示します</translation>
    </message>
    <message>
        <source>The runner has not stopped yet; Force stop kills it.</source>
        <translation>ランナーはまだ停止していません。強制停止で終了させられます。</translation>
    </message>
    <message>
        <source>Stop requested: the runner finishes the current step and saves.</source>
        <translation>停止を要求しました: ランナーは現在のステップを終えて保存します。</translation>
    </message>
    <message>
        <source>Compile plan: %1; mechanisms: %2; regions: %3</source>
        <translation>コンパイル計画: %1、仕組み: %2、領域: %3</translation>
    </message>
    <message>
        <source>backend=%1, mode=%2, dynamic=%3</source>
        <translation>backend=%1、mode=%2、dynamic=%3</translation>
    </message>
    <message>
        <source>off</source>
        <translation>オフ</translation>
    </message>
    <message>
        <source>Unavailable in this build: %1</source>
        <translation>このビルドでは利用できません: %1</translation>
    </message>
    <message>
        <source>Warning: %1</source>
        <translation>警告: %1</translation>
    </message>
    <message>
        <source>Error: %1</source>
        <translation>エラー: %1</translation>
    </message>
    <message>
        <source>Saved (%1): %2</source>
        <translation>保存 (%1): %2</translation>
    </message>
    <message>
        <source>Sample: %1 (%2)</source>
        <translation>サンプル: %1 (%2)</translation>
    </message>
    <message>
        <source>Runner exited with code %1.</source>
        <translation>ランナーはコード %1 で終了しました。</translation>
    </message>
    <message>
        <source>Train on this many GPUs of this machine, one process each (data parallel): every GPU takes its share of each epoch&apos;s batches, so an epoch has fewer steps. Without a GPU the processes share the CPU.</source>
        <translation>このマシンの指定した数のGPUで学習します（GPUごとに1プロセス、データ並列）。各GPUがエポックごとのバッチを分担するため、1エポックのステップ数は少なくなります。GPUがない場合、プロセスはCPUを共有します。</translation>
    </message>
    <message>
        <source>GPUs:</source>
        <translation>GPU数:</translation>
    </message>
    <message>
        <source>Render the sample prompts after the current step, as sample_every_n_steps would</source>
        <translation>現在のステップの後、sample_every_n_steps と同じようにサンプルプロンプトを描画します</translation>
    </message>
    <message>
        <source>Save the trained weights after the current step, as save_every_n_steps names them (and the training state with save_state)</source>
        <translation>現在のステップの後、学習した重みを save_every_n_steps と同じ名前で保存します(save_state があれば学習状態も)</translation>
    </message>
    <message>
        <source>Finish the current epoch, save as at the end of the run, and end the run there</source>
        <translation>現在のエポックを終え、実行終了時と同じく保存して、そこで実行を終了します</translation>
    </message>
    <message>
        <source>Sample now asked: the runner samples after the current step.</source>
        <translation>今すぐサンプルを要求しました: ランナーは現在のステップの後でサンプルを作成します。</translation>
    </message>
    <message>
        <source>Save now asked: the runner saves after the current step.</source>
        <translation>今すぐ保存を要求しました: ランナーは現在のステップの後で保存します。</translation>
    </message>
    <message>
        <source>Stop after this epoch asked: the run ends when the current epoch does.</source>
        <translation>このエポックの後での停止を要求しました: 実行は現在のエポックの終わりで終了します。</translation>
    </message>
    <message>
        <source>Resume asked.</source>
        <translation>再開を要求しました。</translation>
    </message>
    <message>
        <source>Pause asked: the run pauses after the current step.</source>
        <translation>一時停止を要求しました: 実行は現在のステップの後で一時停止します。</translation>
    </message>
    <message>
        <source>Go on training from where the run paused</source>
        <translation>一時停止したところから学習を続けます</translation>
    </message>
    <message>
        <source>Pause after the current step; the model stays loaded, and the pause counts in no step time, it/s or ETA</source>
        <translation>現在のステップの後で一時停止します。モデルは読み込まれたままで、一時停止の時間はステップ時間、it/s、ETA に含まれません</translation>
    </message>
</context>
<context>
    <name>sinter::gui::RunnerCompilePlan</name>
    <message>
        <source>Could not write the config for the runner: %1</source>
        <translation>ランナー用の設定を書き込めませんでした: %1</translation>
    </message>
    <message>
        <source>The runner could not be started (%1): %2</source>
        <translation>ランナーを起動できませんでした (%1): %2</translation>
    </message>
</context>
<context>
    <name>sinter::gui::SampleGallery</name>
    <message>
        <source>Image not found</source>
        <translation>画像が見つかりません</translation>
    </message>
    <message>
        <source>Sample images of this session&apos;s runs</source>
        <translation>このセッションの実行のサンプル画像</translation>
    </message>
    <message>
        <source>Sample images</source>
        <translation>サンプル画像</translation>
    </message>
    <message>
        <source>Run %1 (%2)</source>
        <translation>実行 %1 (%2)</translation>
    </message>
    <message>
        <source>epoch %1, step %2</source>
        <translation>エポック %1、ステップ %2</translation>
    </message>
    <message>
        <source>step %1</source>
        <translation>ステップ %1</translation>
    </message>
    <message>
        <source>%1
prompt %2: %3
%4</source>
        <translation>%1
プロンプト %2: %3
%4</translation>
    </message>
    <message>
        <source>The image cannot be read: %1</source>
        <translation>画像を読み込めません: %1</translation>
    </message>
    <message>
        <source>Sample images appear here while a run with sample prompts trains.</source>
        <translation>サンプルプロンプトを指定した実行の学習中に、ここにサンプル画像が表示されます。</translation>
    </message>
    <message>
        <source>No sample images in this run yet.</source>
        <translation>この実行にはまだサンプル画像がありません。</translation>
    </message>
    <message>
        <source>Checkpoint grid…</source>
        <translation>チェックポイントグリッド…</translation>
    </message>
    <message>
        <source>Compare the saved files: the sample prompts rendered for the base model and each file, side by side</source>
        <translation>保存ファイルを比較します: ベースモデルと各ファイルで描画したサンプルプロンプトを並べて表示します</translation>
    </message>
</context>
<context>
    <name>sinter::gui::SampleViewer</name>
    <message>
        <source>Sample at step %1</source>
        <translation>ステップ %1 のサンプル</translation>
    </message>
    <message>
        <source>The image %1 cannot be read: %2</source>
        <translation>画像 %1 を読み込めません: %2</translation>
    </message>
    <message>
        <source>Step %1</source>
        <translation>ステップ %1</translation>
    </message>
    <message>
        <source>, end of epoch %1</source>
        <translation>、エポック %1 の終わり</translation>
    </message>
    <message>
        <source>, prompt %1</source>
        <translation>、プロンプト %1</translation>
    </message>
    <message>
        <source>Open folder</source>
        <translation>フォルダーを開く</translation>
    </message>
</context>
<context>
    <name>sinter::gui::TrainingTab</name>
    <message>
        <source>LoRA</source>
        <translation>LoRA</translation>
    </message>
    <message>
        <source>DreamBooth</source>
        <translation>DreamBooth</translation>
    </message>
    <message>
        <source>Fine-tune</source>
        <translation>ファインチューニング</translation>
    </message>
    <message>
        <source>Textual Inversion</source>
        <translation>Textual Inversion</translation>
    </message>
    <message>
        <source>Configuration</source>
        <translation>設定</translation>
    </message>
    <message>
        <source>Preset:</source>
        <translation>プリセット:</translation>
    </message>
    <message>
        <source>Apply…</source>
        <translation>適用…</translation>
    </message>
    <message>
        <source>Show what the preset changes, then apply it</source>
        <translation>プリセットによる変更内容を表示してから適用します</translation>
    </message>
    <message>
        <source>Save as preset…</source>
        <translation>プリセットとして保存…</translation>
    </message>
    <message>
        <source>Save the current settings as your own preset</source>
        <translation>現在の設定を自分用のプリセットとして保存します</translation>
    </message>
    <message>
        <source>%1 (yours)</source>
        <translation>%1(自作)</translation>
    </message>
    <message>
        <source>%1 (cannot be read)</source>
        <translation>%1(読み込めません)</translation>
    </message>
    <message>
        <source>Apply preset</source>
        <translation>プリセットを適用</translation>
    </message>
    <message>
        <source>“%1” would change nothing.</source>
        <translation>「%1」を適用しても何も変わりません。</translation>
    </message>
    <message>
        <source>A preset needs a name.</source>
        <translation>プリセットには名前が必要です。</translation>
    </message>
    <message>
        <source>Save as preset</source>
        <translation>プリセットとして保存</translation>
    </message>
    <message>
        <source>Preset name:</source>
        <translation>プリセット名:</translation>
    </message>
    <message>
        <source>Choose an output folder first: the run&apos;s TOML file is written there.</source>
        <translation>先に出力フォルダーを選んでください: 実行用の TOML ファイルはそこに書き込まれます。</translation>
    </message>
    <message>
        <source>Print command</source>
        <translation>コマンドを表示</translation>
    </message>
    <message>
        <source>Cannot start</source>
        <translation>開始できません</translation>
    </message>
    <message>
        <source>Fix the marked fields first:
%1</source>
        <translation>先に印の付いた項目を修正してください:
%1</translation>
    </message>
    <message>
        <source>Choose a preset…</source>
        <translation>プリセットを選択…</translation>
    </message>
    <message>
        <source>Dataset check — %1</source>
        <translation>データセットのチェック — %1</translation>
    </message>
    <message numerus="yes">
        <source>Dataset check: %n finding(s); Run ▸ Check dataset… shows them.</source>
        <translation>
            <numerusform>データセットのチェック: 検出内容 %n 件。実行 ▸ データセットをチェック… で表示します。</numerusform>
        </translation>
    </message>
    <message>
        <source>Check dataset…</source>
        <translation>データセットをチェック…</translation>
    </message>
    <message>
        <source>Read the dataset as a run would and list images without captions, empty captions, duplicates, images that are too small and files that cannot be read</source>
        <translation>実行時と同じようにデータセットを読み込み、キャプションのない画像、空のキャプション、重複、小さすぎる画像、読み込めないファイルを一覧にします</translation>
    </message>
    <message>
        <source>Check dataset</source>
        <translation>データセットのチェック</translation>
    </message>
    <message>
        <source>Checkpoint grid — %1</source>
        <translation>チェックポイントグリッド — %1</translation>
    </message>
    <message>
        <source>Choose an output folder first: each queued run writes into its own.</source>
        <translation>先に出力フォルダーを選んでください。キューの各実行はそれぞれの出力フォルダーに書き込みます。</translation>
    </message>
</context>
<context>
    <name>sinter::gui::ToolsTab</name>
    <message>
        <source>Safetensors (*.safetensors);;All files (*)</source>
        <translation>Safetensors (*.safetensors);;すべてのファイル (*)</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1(%2)</translation>
    </message>
    <message>
        <source>Show every flag sd-scripts&apos; script takes</source>
        <translation>sd-scripts のスクリプトが受け付けるすべてのフラグを表示</translation>
    </message>
    <message>
        <source>Run tool</source>
        <translation>ツールを実行</translation>
    </message>
    <message>
        <source>Check a LoRA file...</source>
        <translation>LoRA ファイルを確認...</translation>
    </message>
    <message>
        <source>The result: the files&apos; sizes and what the LoRA written holds.</source>
        <translation>結果: ファイルのサイズと、書き出した LoRA の内容。</translation>
    </message>
    <message>
        <source>Tool</source>
        <translation>ツール</translation>
    </message>
    <message>
        <source>Check a LoRA file</source>
        <translation>LoRA ファイルを確認</translation>
    </message>
    <message>
        <source>The runner did not start: %1</source>
        <translation>ランナーを起動できませんでした: %1</translation>
    </message>
    <message>
        <source>files separated by ;</source>
        <translation>ファイルを ; で区切って</translation>
    </message>
    <message>
        <source>Browse...</source>
        <translation>参照...</translation>
    </message>
    <message>
        <source>Choose files</source>
        <translation>ファイルを選択</translation>
    </message>
    <message>
        <source>Save as</source>
        <translation>名前を付けて保存</translation>
    </message>
    <message>
        <source>Choose a file</source>
        <translation>ファイルを選択</translation>
    </message>
    <message>
        <source>%1 (default)</source>
        <translation>%1(既定)</translation>
    </message>
    <message>
        <source>(not set)</source>
        <translation>(未設定)</translation>
    </message>
    <message>
        <source>default %1</source>
        <translation>既定 %1</translation>
    </message>
    <message>
        <source>numbers separated by spaces</source>
        <translation>数値を空白で区切って</translation>
    </message>
    <message>
        <source>--%1 (required)</source>
        <translation>--%1(必須)</translation>
    </message>
    <message>
        <source>--%1 is required: %2</source>
        <translation>--%1 は必須です: %2</translation>
    </message>
    <message>
        <source>Running %1...</source>
        <translation>%1 を実行中...</translation>
    </message>
    <message>
        <source>%1 (%2):</source>
        <translation>%1(%2):</translation>
    </message>
    <message>
        <source>The tool crashed.</source>
        <translation>ツールが異常終了しました。</translation>
    </message>
    <message>
        <source>The tool failed (exit %1); the log says why.</source>
        <translation>ツールが失敗しました(終了コード %1)。理由はログにあります。</translation>
    </message>
    <message>
        <source>Done.</source>
        <translation>完了しました。</translation>
    </message>
    <message>
        <source>Done: wrote %1 (%2).</source>
        <translation>完了: %1 を書き出しました(%2)。</translation>
    </message>
    <message>
        <source>input --%1: %2 (%3)</source>
        <translation>入力 --%1: %2(%3)</translation>
    </message>
</context>
</TS>
