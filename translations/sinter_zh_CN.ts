<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>CheckpointGridLayout</name>
    <message>
        <source>Its layout does not read: %1</source>
        <translation>无法读取其布局:%1</translation>
    </message>
    <message>
        <source>Its layout names no rows, no columns or no cell size.</source>
        <translation>其布局没有行、列或单元格尺寸。</translation>
    </message>
    <message>
        <source>%1 cannot be read: %2</source>
        <translation>无法读取 %1:%2</translation>
    </message>
    <message>
        <source>%1 is no checkpoint grid: it has no layout.</source>
        <translation>%1 不是检查点网格:它没有布局。</translation>
    </message>
    <message>
        <source>%1: its layout (%2 x %3 cells of %4x%5) does not match the picture (%6x%7).</source>
        <translation>%1:其布局(%2 x %3 个 %4x%5 的单元格)与图像(%6x%7)不符。</translation>
    </message>
</context>
<context>
    <name>CompileInfo</name>
    <message>
        <source>Fullgraph is refused with split attention: turn off one of them.</source>
        <translation>完整图不能与分割注意力同时使用:请关闭其中之一。</translation>
    </message>
    <message>
        <source>With block swapping, the swapped blocks&apos; weights stay out of capture (their Linear layers run uncaptured).</source>
        <translation>启用块交换时,被交换块的权重不参与捕获(它们的 Linear 层不经捕获直接运行)。</translation>
    </message>
    <message>
        <source>Memory plan</source>
        <translation>显存计划</translation>
    </message>
    <message>
        <source>Set the model family to SDXL or FLUX to see the plan for this budget.</source>
        <translation>将模型系列设为 SDXL 或 FLUX 即可查看此预算的计划。</translation>
    </message>
    <message>
        <source>Estimated for the full-size %1 (the runner&apos;s dry run plans with the checkpoint&apos;s own sizes):</source>
        <translation>按完整尺寸的 %1 估算(运行器的试运行按检查点自身的大小计划):</translation>
    </message>
</context>
<context>
    <name>ConfigDocument</name>
    <message>
        <source>Untitled</source>
        <translation>未命名</translation>
    </message>
    <message>
        <source>Could not write %1: %2</source>
        <translation>无法写入 %1:%2</translation>
    </message>
</context>
<context>
    <name>Option</name>
    <message>
        <source>Model family</source>
        <translation>模型系列</translation>
    </message>
    <message>
        <source>SDXL, FLUX.1, SD 1.5, SD 2.x or SD 3.x (SD 3 Medium, SD 3.5 Medium or Large). Auto detects it from the checkpoint&apos;s tensor names.</source>
        <translation>SDXL、FLUX.1、SD 1.5、SD 2.x 或 SD 3.x(SD 3 Medium、SD 3.5 Medium 或 Large)。auto 会根据检查点的张量名称自动检测。</translation>
    </message>
    <message>
        <source>Training type</source>
        <translation>训练类型</translation>
    </message>
    <message>
        <source>LoRA network, DreamBooth, full fine-tune or textual inversion (an embedding for a new token; SD 1.x, SD 2.x and SDXL). Sinter&apos;s own key; sd-scripts ignores it.</source>
        <translation>LoRA 网络、DreamBooth、完整微调或文本反演（为新词元训练嵌入；SD 1.x、SD 2.x 和 SDXL）。Sinter 自有的键，sd-scripts 会忽略它。</translation>
    </message>
    <message>
        <source>Token string</source>
        <translation>词元字符串</translation>
    </message>
    <message>
        <source>The new token the embedding is trained for; it must not be in the tokenizer&apos;s vocabulary. Captions and sample prompts use it; the output name when that is unset.</source>
        <translation>嵌入所训练的新词元，必须是分词器词表中没有的字符串。标注和示例提示词中使用它；未设置输出名称时也作为输出名称。</translation>
    </message>
    <message>
        <source>Initial word</source>
        <translation>初始化词</translation>
    </message>
    <message>
        <source>Words whose token embeddings the new vectors start from (repeated or cut to the number of vectors); unset: the mean of the vocabulary&apos;s embeddings.</source>
        <translation>新向量的初始值所取自的词的词元嵌入（按向量数重复或截断）；未设置时为词表嵌入的平均值。</translation>
    </message>
    <message>
        <source>Vectors per token</source>
        <translation>每个词元的向量数</translation>
    </message>
    <message>
        <source>How many token embeddings the embedding holds: the token string and token_string1, token_string2, ... take one each.</source>
        <translation>嵌入包含的词元嵌入个数：词元字符串以及 token_string1、token_string2……各占一个。</translation>
    </message>
    <message>
        <source>Embedding weights</source>
        <translation>嵌入权重</translation>
    </message>
    <message>
        <source>An embedding file to continue training from: emb_params (SD 1.x/2.x) or clip_l and clip_g (SDXL), as A1111, Forge and ComfyUI load them.</source>
        <translation>从中继续训练的嵌入文件：emb_params（SD 1.x/2.x）或 clip_l 和 clip_g（SDXL），即 A1111、Forge 和 ComfyUI 读取的格式。</translation>
    </message>
    <message>
        <source>Object templates</source>
        <translation>物体模板</translation>
    </message>
    <message>
        <source>Ignore the captions: each image is captioned with one of sd-scripts&apos; object templates (&quot;a photo of a {}&quot;, ...) holding the token.</source>
        <translation>不使用标注：每张图片的标注为包含该词元的 sd-scripts 物体模板之一（&quot;a photo of a {}&quot; 等）。</translation>
    </message>
    <message>
        <source>Style templates</source>
        <translation>风格模板</translation>
    </message>
    <message>
        <source>Ignore the captions: each image is captioned with one of sd-scripts&apos; style templates (&quot;a painting in the style of {}&quot;, ...) holding the token. The object templates win when both are set, as in sd-scripts.</source>
        <translation>不使用标注：每张图片的标注为包含该词元的 sd-scripts 风格模板之一（&quot;a painting in the style of {}&quot; 等）。两者都设置时与 sd-scripts 相同，以物体模板为准。</translation>
    </message>
    <message>
        <source>Pretrained model</source>
        <translation>预训练模型</translation>
    </message>
    <message>
        <source>The base checkpoint: a single .safetensors file (SDXL, SD, SD 3.x) or the FLUX transformer.</source>
        <translation>基础检查点:单个 .safetensors 文件(SDXL、SD、SD 3.x)或 FLUX 的 Transformer。</translation>
    </message>
    <message>
        <source>VAE</source>
        <translation>VAE</translation>
    </message>
    <message>
        <source>A separate VAE to use instead of the checkpoint&apos;s own.</source>
        <translation>用于替代检查点自带 VAE 的独立 VAE。</translation>
    </message>
    <message>
        <source>Autoencoder (ae)</source>
        <translation>自编码器 (ae)</translation>
    </message>
    <message>
        <source>FLUX autoencoder file, ae.safetensors.</source>
        <translation>FLUX 自编码器文件 ae.safetensors。</translation>
    </message>
    <message>
        <source>CLIP-L</source>
        <translation>CLIP-L</translation>
    </message>
    <message>
        <source>Model type</source>
        <translation>模型类型</translation>
    </message>
    <message>
        <source>flux: FLUX.1; chroma: Chroma1-HD / Chroma1-Base, FLUX.1&apos;s blocks with T5-XXL alone (no CLIP-L; apply_t5_attn_mask required; sd-scripts suggests guidance_scale 0). A Chroma checkpoint is recognised from its keys either way.</source>
        <translation>flux：FLUX.1；chroma：Chroma1-HD / Chroma1-Base，FLUX.1 的块仅配 T5-XXL（无 CLIP-L；需要 apply_t5_attn_mask；sd-scripts 建议 guidance_scale 0）。无论哪种设置，Chroma 检查点都会根据其键名识别。</translation>
    </message>
    <message>
        <source>CLIP-L text encoder file: FLUX.1&apos;s (not used by Chroma), or SD 3.x&apos;s (unset: the checkpoint&apos;s own).</source>
        <translation>CLIP-L 文本编码器文件:FLUX.1 的(Chroma 不使用),或 SD 3.x 的(未设置时使用检查点自带的)。</translation>
    </message>
    <message>
        <source>T5-XXL</source>
        <translation>T5-XXL</translation>
    </message>
    <message>
        <source>T5-XXL text encoder file (FLUX.1, SD 3.x).</source>
        <translation>T5-XXL 文本编码器文件(FLUX.1、SD 3.x)。</translation>
    </message>
    <message>
        <source>CLIP-G</source>
        <translation>CLIP-G</translation>
    </message>
    <message>
        <source>SD 3.x CLIP-G (OpenCLIP bigG) text encoder file; the checkpoint&apos;s own when unset.</source>
        <translation>SD 3.x 的 CLIP-G(OpenCLIP bigG)文本编码器文件;未设置时使用检查点自带的。</translation>
    </message>
    <message>
        <source>CLIP tokenizer</source>
        <translation>CLIP 分词器</translation>
    </message>
    <message>
        <source>Folder with the CLIP tokenizer (vocab.json and merges.txt, or tokenizer.json); unset: the CLIP tokenizer that ships with Sinter. Nothing is downloaded.</source>
        <translation>CLIP 分词器所在文件夹(vocab.json 和 merges.txt,或 tokenizer.json);未设置时使用 Sinter 自带的 CLIP 分词器。不会下载任何内容。</translation>
    </message>
    <message>
        <source>bundled</source>
        <translation>自带</translation>
    </message>
    <message>
        <source>T5 tokenizer</source>
        <translation>T5 分词器</translation>
    </message>
    <message>
        <source>V-parameterization</source>
        <translation>v 参数化</translation>
    </message>
    <message>
        <source>Train with the v-prediction target (SD 2.x 768-v and v-pred SDXL models).</source>
        <translation>以 v 预测为目标进行训练(SD 2.x 768-v 模型和 v-pred SDXL 模型)。</translation>
    </message>
    <message>
        <source>Output folder</source>
        <translation>输出文件夹</translation>
    </message>
    <message>
        <source>Where trained models, states and samples are written.</source>
        <translation>训练好的模型、状态和样本的保存位置。</translation>
    </message>
    <message>
        <source>Output name</source>
        <translation>输出名称</translation>
    </message>
    <message>
        <source>Base name of the saved files; &quot;last&quot; when empty.</source>
        <translation>保存文件的基本名称;为空时为 &quot;last&quot;。</translation>
    </message>
    <message>
        <source>Save model as</source>
        <translation>模型保存格式</translation>
    </message>
    <message>
        <source>File format of saved models. This build writes safetensors.</source>
        <translation>保存模型的文件格式。此版本写入 safetensors。</translation>
    </message>
    <message>
        <source>Save precision</source>
        <translation>保存精度</translation>
    </message>
    <message>
        <source>Precision of the saved weights; the training precision when unset.</source>
        <translation>保存权重的精度;未设置时使用训练精度。</translation>
    </message>
    <message>
        <source>Training comment</source>
        <translation>训练备注</translation>
    </message>
    <message>
        <source>Stored in the saved file&apos;s metadata (ss_training_comment).</source>
        <translation>保存在文件元数据中(ss_training_comment)。</translation>
    </message>
    <message>
        <source>No metadata</source>
        <translation>不写元数据</translation>
    </message>
    <message>
        <source>Write only the minimum metadata into saved files.</source>
        <translation>只向保存的文件写入最少的元数据。</translation>
    </message>
    <message>
        <source>Image folder</source>
        <translation>图像文件夹</translation>
    </message>
    <message>
        <source>Folder whose subfolders are named &lt;repeats&gt;_&lt;class tokens&gt;, e.g. 10_sks dog.</source>
        <translation>其子文件夹命名为 &lt;重复次数&gt;_&lt;类别词&gt; 的文件夹,例如 10_sks dog。</translation>
    </message>
    <message>
        <source>Regularisation folder</source>
        <translation>正则化文件夹</translation>
    </message>
    <message>
        <source>Regularisation images, in the same &lt;repeats&gt;_&lt;class tokens&gt; layout.</source>
        <translation>正则化图像,采用相同的 &lt;重复次数&gt;_&lt;类别词&gt; 结构。</translation>
    </message>
    <message>
        <source>Metadata file</source>
        <translation>元数据文件</translation>
    </message>
    <message>
        <source>Fine-tune captions: sd-scripts&apos; metadata JSON (image key to caption and tags) for the images in the image folder.</source>
        <translation>微调标注:图像文件夹中图像的 sd-scripts 元数据 JSON(图像键到标注和标签)。</translation>
    </message>
    <message>
        <source>Dataset config</source>
        <translation>数据集配置</translation>
    </message>
    <message>
        <source>A dataset TOML ([general], [[datasets]], [[datasets.subsets]]) instead of the folders.</source>
        <translation>用数据集 TOML([general]、[[datasets]]、[[datasets.subsets]])代替文件夹。</translation>
    </message>
    <message>
        <source>Resolution</source>
        <translation>分辨率</translation>
    </message>
    <message>
        <source>Training resolution, &quot;1024,1024&quot; (width,height) or &quot;1024&quot;.</source>
        <translation>训练分辨率,&quot;1024,1024&quot;(宽,高)或 &quot;1024&quot;。</translation>
    </message>
    <message>
        <source>Enable buckets</source>
        <translation>启用分桶</translation>
    </message>
    <message>
        <source>Group images by aspect ratio instead of cropping them all to one size.</source>
        <translation>按宽高比对图像分组,而不是全部裁剪为同一尺寸。</translation>
    </message>
    <message>
        <source>Minimum bucket resolution</source>
        <translation>最小分桶分辨率</translation>
    </message>
    <message>
        <source>Smallest bucket side in pixels.</source>
        <translation>分桶的最小边长(像素)。</translation>
    </message>
    <message>
        <source>Maximum bucket resolution</source>
        <translation>最大分桶分辨率</translation>
    </message>
    <message>
        <source>Largest bucket side in pixels.</source>
        <translation>分桶的最大边长(像素)。</translation>
    </message>
    <message>
        <source>Bucket resolution steps</source>
        <translation>分桶分辨率步长</translation>
    </message>
    <message>
        <source>Bucket sides are multiples of this; 64 is recommended.</source>
        <translation>分桶边长为该值的倍数;推荐 64。</translation>
    </message>
    <message>
        <source>No upscaling in buckets</source>
        <translation>分桶时不放大</translation>
    </message>
    <message>
        <source>Never enlarge an image to fill a bucket; small images get their own smaller bucket.</source>
        <translation>不为填满分桶而放大图像;小图像会使用各自更小的分桶。</translation>
    </message>
    <message>
        <source>Caption extension</source>
        <translation>标注文件扩展名</translation>
    </message>
    <message>
        <source>Extension of the caption file beside each image.</source>
        <translation>每张图像旁标注文件的扩展名。</translation>
    </message>
    <message>
        <source>Shuffle captions</source>
        <translation>打乱标注</translation>
    </message>
    <message>
        <source>Shuffle the comma-separated tags of each caption every time it is used.</source>
        <translation>每次使用时打乱每条标注中以逗号分隔的标签。</translation>
    </message>
    <message>
        <source>Keep tokens</source>
        <translation>保留词元数</translation>
    </message>
    <message>
        <source>Number of leading tags kept in place when shuffling or dropping tags.</source>
        <translation>打乱或丢弃标签时保持在开头不动的标签数量。</translation>
    </message>
    <message>
        <source>Caption dropout rate</source>
        <translation>标注丢弃率</translation>
    </message>
    <message>
        <source>Probability of training an image with an empty caption.</source>
        <translation>以空标注训练图像的概率。</translation>
    </message>
    <message>
        <source>Tag dropout rate</source>
        <translation>标签丢弃率</translation>
    </message>
    <message>
        <source>Probability of dropping each tag (after keep_tokens).</source>
        <translation>丢弃每个标签的概率(keep_tokens 之后的标签)。</translation>
    </message>
    <message>
        <source>Flip augmentation</source>
        <translation>翻转增强</translation>
    </message>
    <message>
        <source>Randomly mirror images horizontally.</source>
        <translation>随机水平镜像图像。</translation>
    </message>
    <message>
        <source>Random crop</source>
        <translation>随机裁剪</translation>
    </message>
    <message>
        <source>Crop at a random position instead of the centre. Not with cached latents.</source>
        <translation>在随机位置而不是中心裁剪。不能与缓存潜变量同时使用。</translation>
    </message>
    <message>
        <source>Colour augmentation</source>
        <translation>颜色增强</translation>
    </message>
    <message>
        <source>sd-scripts&apos; weak colour jitter: a third of the images get a small hue shift or gamma. Not with cached latents.</source>
        <translation>sd-scripts 的弱颜色抖动:三分之一的图像会得到小幅色相偏移或伽马变化。不能与缓存潜变量同时使用。</translation>
    </message>
    <message>
        <source>Cache latents</source>
        <translation>缓存潜变量</translation>
    </message>
    <message>
        <source>Encode every image once with the VAE and keep the latents in memory.</source>
        <translation>用 VAE 对每张图像只编码一次,并将潜变量保存在内存中。</translation>
    </message>
    <message>
        <source>Cache latents to disk</source>
        <translation>将潜变量缓存到磁盘</translation>
    </message>
    <message>
        <source>Keep cached latents in files beside the images, reused while image and settings match.</source>
        <translation>将缓存的潜变量保存在图像旁的文件中,图像和设置不变时重复使用。</translation>
    </message>
    <message>
        <source>Cache text encoder outputs</source>
        <translation>缓存文本编码器输出</translation>
    </message>
    <message>
        <source>Encode captions once. Needs frozen text encoders; not with caption shuffling or dropout.</source>
        <translation>标注只编码一次。需要冻结文本编码器;不能与打乱标注或丢弃同时使用。</translation>
    </message>
    <message>
        <source>Cache text encoder outputs to disk</source>
        <translation>将文本编码器输出缓存到磁盘</translation>
    </message>
    <message>
        <source>Keep cached text encoder outputs in files beside the captions.</source>
        <translation>将缓存的文本编码器输出保存在标注旁的文件中。</translation>
    </message>
    <message>
        <source>VAE batch size</source>
        <translation>VAE 批大小</translation>
    </message>
    <message>
        <source>Images encoded at once while caching latents.</source>
        <translation>缓存潜变量时一次编码的图像数量。</translation>
    </message>
    <message>
        <source>Data loader workers</source>
        <translation>数据加载线程数</translation>
    </message>
    <message>
        <source>Threads that load and prepare images.</source>
        <translation>加载和预处理图像的线程数。</translation>
    </message>
    <message>
        <source>Prior loss weight</source>
        <translation>先验损失权重</translation>
    </message>
    <message>
        <source>Loss weight of regularisation images.</source>
        <translation>正则化图像的损失权重。</translation>
    </message>
    <message>
        <source>Max token length</source>
        <translation>最大词元长度</translation>
    </message>
    <message>
        <source>Caption length in tokens: 75 when unset, or 150 or 225 (encoded in 75-token chunks).</source>
        <translation>标注的词元长度:未设置时为 75,或 150、225(按 75 个词元分块编码)。</translation>
    </message>
    <message>
        <source>Batch size</source>
        <translation>批大小</translation>
    </message>
    <message>
        <source>Images per step.</source>
        <translation>每步的图像数。</translation>
    </message>
    <message>
        <source>Max train steps</source>
        <translation>最大训练步数</translation>
    </message>
    <message>
        <source>Total optimisation steps; max_train_epochs overrides it.</source>
        <translation>优化步骤总数;max_train_epochs 优先。</translation>
    </message>
    <message>
        <source>Max train epochs</source>
        <translation>最大训练轮数</translation>
    </message>
    <message>
        <source>Train for this many epochs instead of max_train_steps.</source>
        <translation>按此轮数训练,代替 max_train_steps。</translation>
    </message>
    <message>
        <source>Gradient accumulation steps</source>
        <translation>梯度累积步数</translation>
    </message>
    <message>
        <source>Batches whose gradients are summed before each optimiser step.</source>
        <translation>每次优化器步骤前累加梯度的批次数。</translation>
    </message>
    <message>
        <source>Mixed precision</source>
        <translation>混合精度</translation>
    </message>
    <message>
        <source>Compute precision: no (fp32), fp16 or bf16.</source>
        <translation>计算精度:no(fp32)、fp16 或 bf16。</translation>
    </message>
    <message>
        <source>Full bf16</source>
        <translation>完全 bf16</translation>
    </message>
    <message>
        <source>Keep trained weights and gradients in bf16 too (needs mixed_precision bf16).</source>
        <translation>训练的权重和梯度也使用 bf16(需要 mixed_precision 为 bf16)。</translation>
    </message>
    <message>
        <source>Full fp16</source>
        <translation>完全 fp16</translation>
    </message>
    <message>
        <source>Keep trained weights and gradients in fp16 too (needs mixed_precision fp16).</source>
        <translation>训练的权重和梯度也使用 fp16(需要 mixed_precision 为 fp16)。</translation>
    </message>
    <message>
        <source>fp8 base model</source>
        <translation>fp8 基础模型</translation>
    </message>
    <message>
        <source>Store the frozen base model in fp8 to save memory.</source>
        <translation>以 fp8 存储冻结的基础模型以节省显存。</translation>
    </message>
    <message>
        <source>Gradient checkpointing</source>
        <translation>梯度检查点</translation>
    </message>
    <message>
        <source>Recompute activations in the backward pass: less memory, slower steps.</source>
        <translation>在反向传播时重新计算激活:显存更少,步骤更慢。</translation>
    </message>
    <message>
        <source>Seed</source>
        <translation>随机种子</translation>
    </message>
    <message>
        <source>Random seed; the same seed gives the same run. Random when unset.</source>
        <translation>随机种子;相同的种子得到相同的运行结果。未设置时随机。</translation>
    </message>
    <message>
        <source>Max gradient norm</source>
        <translation>最大梯度范数</translation>
    </message>
    <message>
        <source>Clip gradients to this global norm; 0 disables clipping.</source>
        <translation>将梯度裁剪到此全局范数;0 表示不裁剪。</translation>
    </message>
    <message>
        <source>Noise offset</source>
        <translation>噪声偏移</translation>
    </message>
    <message>
        <source>Adds a per-channel offset to the noise (helps very dark or bright images), e.g. 0.0357.</source>
        <translation>为噪声添加逐通道偏移(有助于很暗或很亮的图像),例如 0.0357。</translation>
    </message>
    <message>
        <source>Multi-resolution noise iterations</source>
        <translation>多分辨率噪声迭代次数</translation>
    </message>
    <message>
        <source>Pyramid noise levels, e.g. 6-10; 0 or unset: off, as in sd-scripts.</source>
        <translation>金字塔噪声的层数,例如 6-10;0 或未设置:关闭(与 sd-scripts 相同)。</translation>
    </message>
    <message>
        <source>Multi-resolution noise discount</source>
        <translation>多分辨率噪声衰减</translation>
    </message>
    <message>
        <source>Weight of each coarser noise level.</source>
        <translation>每个更粗噪声层的权重。</translation>
    </message>
    <message>
        <source>Min-SNR gamma</source>
        <translation>Min-SNR gamma</translation>
    </message>
    <message>
        <source>Min-SNR loss weighting; 5 is the paper&apos;s recommendation.</source>
        <translation>Min-SNR 损失加权;论文推荐值为 5。</translation>
    </message>
    <message>
        <source>Loss type</source>
        <translation>损失类型</translation>
    </message>
    <message>
        <source>l2 (MSE), l1, huber or smooth_l1.</source>
        <translation>l2(MSE)、l1、huber 或 smooth_l1。</translation>
    </message>
    <message>
        <source>Huber c</source>
        <translation>Huber c</translation>
    </message>
    <message>
        <source>Huber loss parameter.</source>
        <translation>Huber 损失的参数。</translation>
    </message>
    <message>
        <source>Input perturbation noise gamma</source>
        <translation>输入扰动噪声 gamma</translation>
    </message>
    <message>
        <source>Input perturbation noise, e.g. 0.1.</source>
        <translation>输入扰动噪声,例如 0.1。</translation>
    </message>
    <message>
        <source>Min timestep</source>
        <translation>最小时间步</translation>
    </message>
    <message>
        <source>Lowest timestep sampled (0 when unset).</source>
        <translation>采样的最小时间步(未设置时为 0)。</translation>
    </message>
    <message>
        <source>Max timestep</source>
        <translation>最大时间步</translation>
    </message>
    <message>
        <source>Timesteps are sampled below this (1000 when unset).</source>
        <translation>时间步从低于此值的范围采样(未设置时为 1000)。</translation>
    </message>
    <message>
        <source>Scaled dot-product attention</source>
        <translation>缩放点积注意力</translation>
    </message>
    <message>
        <source>Use fused scaled dot-product attention (Sinter uses the fastest attention it has either way).</source>
        <translation>使用融合的缩放点积注意力(无论如何 Sinter 都会使用其最快的注意力实现)。</translation>
    </message>
    <message>
        <source>xformers</source>
        <translation>xformers</translation>
    </message>
    <message>
        <source>sd-scripts&apos; xformers switch; Sinter uses its own fused attention instead.</source>
        <translation>sd-scripts 的 xformers 开关;Sinter 改用自己的融合注意力。</translation>
    </message>
    <message>
        <source>Split attention</source>
        <translation>分割注意力</translation>
    </message>
    <message>
        <source>Compute attention one sample at a time to save memory. Not with fullgraph compile.</source>
        <translation>逐个样本计算注意力以节省显存。不能与完整图编译同时使用。</translation>
    </message>
    <message>
        <source>Blocks to swap</source>
        <translation>交换块数</translation>
    </message>
    <message>
        <source>FLUX or SD 3.x blocks kept in CPU memory and swapped in when needed (FLUX: 16/22/28 for 12/10/8 GB GPUs).</source>
        <translation>保存在 CPU 内存中、需要时换入的 FLUX 或 SD 3.x 块数(FLUX:12/10/8 GB 显卡分别用 16/22/28)。</translation>
    </message>
    <message>
        <source>Split mode (deprecated)</source>
        <translation>拆分模式(已弃用)</translation>
    </message>
    <message>
        <source>sd-scripts&apos; deprecated FLUX option: blocks to swap 18 when that is not set.</source>
        <translation>sd-scripts 已弃用的 FLUX 选项:未设置交换块数时将其设为 18。</translation>
    </message>
    <message>
        <source>CLIP skip</source>
        <translation>CLIP 跳过层数</translation>
    </message>
    <message>
        <source>Use the output of this many layers from the end of the text encoder.</source>
        <translation>使用文本编码器倒数第若干层的输出。</translation>
    </message>
    <message>
        <source>Train text encoders</source>
        <translation>训练文本编码器</translation>
    </message>
    <message>
        <source>Learning rate TE1</source>
        <translation>TE1 学习率</translation>
    </message>
    <message>
        <source>Learning rate of CLIP-L; learning_rate when unset.</source>
        <translation>CLIP-L 的学习率;未设置时使用 learning_rate。</translation>
    </message>
    <message>
        <source>Learning rate TE2</source>
        <translation>TE2 学习率</translation>
    </message>
    <message>
        <source>Learning rate of the second text encoder (SDXL&apos;s OpenCLIP bigG, SD 3.x&apos;s CLIP-G); learning_rate when unset.</source>
        <translation>第二个文本编码器（SDXL 的 OpenCLIP bigG、SD 3.x 的 CLIP-G）的学习率；未设置时使用 learning_rate。</translation>
    </message>
    <message>
        <source>Train T5-XXL</source>
        <translation>训练 T5-XXL</translation>
    </message>
    <message>
        <source>SD 3.x: also train T5-XXL whole, at learning_rate_te3 (with train_text_encoder; its outputs are not cached).</source>
        <translation>SD 3.x：同时以 learning_rate_te3 完整训练 T5-XXL（需配合 train_text_encoder；其输出不缓存）。</translation>
    </message>
    <message>
        <source>Learning rate TE3</source>
        <translation>TE3 学习率</translation>
    </message>
    <message>
        <source>Learning rate of SD 3.x&apos;s T5-XXL with train_t5xxl; learning_rate when unset, 0 leaves it as it is.</source>
        <translation>启用 train_t5xxl 时 SD 3.x 的 T5-XXL 学习率；未设置时使用 learning_rate，为 0 则不训练。</translation>
    </message>
    <message>
        <source>Guidance scale</source>
        <translation>引导尺度</translation>
    </message>
    <message>
        <source>FLUX.1-dev guidance value fed to the model while training.</source>
        <translation>训练时输入模型的 FLUX.1-dev 引导值。</translation>
    </message>
    <message>
        <source>Timestep sampling</source>
        <translation>时间步采样</translation>
    </message>
    <message>
        <source>How FLUX timesteps are drawn.</source>
        <translation>FLUX 时间步的抽取方式。</translation>
    </message>
    <message>
        <source>Sigmoid scale</source>
        <translation>Sigmoid 缩放</translation>
    </message>
    <message>
        <source>Scale for sigmoid and shift timestep sampling.</source>
        <translation>sigmoid 和 shift 时间步采样的缩放系数。</translation>
    </message>
    <message>
        <source>Huber schedule</source>
        <translation>Huber 调度</translation>
    </message>
    <message>
        <source>How the Huber parameter follows the timestep: constant, exponential or snr (not for FLUX).</source>
        <translation>Huber 参数随时间步的变化方式：constant、exponential 或 snr（FLUX 不可用）。</translation>
    </message>
    <message>
        <source>Huber scale</source>
        <translation>Huber 缩放</translation>
    </message>
    <message>
        <source>Scale of the Huber parameter (constant and exponential schedules).</source>
        <translation>Huber 参数的缩放（constant 与 exponential 调度）。</translation>
    </message>
    <message>
        <source>Weighting scheme</source>
        <translation>加权方案</translation>
    </message>
    <message>
        <source>Density of the timesteps drawn and the loss weighting: FLUX.1&apos;s with sigma timestep sampling (and sigma_scaled predictions), SD 3.x&apos;s always.</source>
        <translation>所抽取时间步的分布与损失加权:FLUX.1 在 sigma 时间步采样(及 sigma_scaled 预测)时适用,SD 3.x 始终适用。</translation>
    </message>
    <message>
        <source>Logit mean</source>
        <translation>Logit 均值</translation>
    </message>
    <message>
        <source>Mean of the logit_normal weighting scheme.</source>
        <translation>logit_normal 加权方案的均值。</translation>
    </message>
    <message>
        <source>Logit std</source>
        <translation>Logit 标准差</translation>
    </message>
    <message>
        <source>Standard deviation of the logit_normal weighting scheme.</source>
        <translation>logit_normal 加权方案的标准差。</translation>
    </message>
    <message>
        <source>Mode scale</source>
        <translation>Mode 缩放</translation>
    </message>
    <message>
        <source>Scale of the mode weighting scheme.</source>
        <translation>mode 加权方案的缩放。</translation>
    </message>
    <message>
        <source>Discrete flow shift</source>
        <translation>离散流偏移</translation>
    </message>
    <message>
        <source>Shift for the shift timestep sampling.</source>
        <translation>shift 时间步采样的偏移量。</translation>
    </message>
    <message>
        <source>Model prediction type</source>
        <translation>模型预测类型</translation>
    </message>
    <message>
        <source>How the FLUX model output is turned into the prediction.</source>
        <translation>如何将 FLUX 模型的输出转换为预测值。</translation>
    </message>
    <message>
        <source>T5-XXL max token length</source>
        <translation>T5-XXL 最大词元长度</translation>
    </message>
    <message>
        <source>T5 sequence length; when unset 512 for FLUX.1 dev, 256 for schnell and for SD 3.x.</source>
        <translation>T5 序列长度;未设置时 FLUX.1 dev 为 512,schnell 和 SD 3.x 为 256。</translation>
    </message>
    <message>
        <source>Apply T5 attention mask</source>
        <translation>应用 T5 注意力掩码</translation>
    </message>
    <message>
        <source>Mask T5 padding tokens in attention.</source>
        <translation>在注意力中屏蔽 T5 的填充词元。</translation>
    </message>
    <message>
        <source>Apply CLIP-L/G attention mask</source>
        <translation>应用 CLIP-L/G 注意力掩码</translation>
    </message>
    <message>
        <source>Mask the padding tokens in CLIP-L&apos;s and CLIP-G&apos;s attention.</source>
        <translation>在 CLIP-L 和 CLIP-G 的注意力中屏蔽填充词元。</translation>
    </message>
    <message>
        <source>Training shift</source>
        <translation>训练偏移</translation>
    </message>
    <message>
        <source>Discrete flow shift of the training timesteps, on top of the weighting scheme: above 1 toward noise (overall structure), below 1 toward detail; 1 no shift.</source>
        <translation>在加权方案之上对训练时间步施加的离散流偏移:大于 1 偏向噪声(整体结构),小于 1 偏向细节;1 为不偏移。</translation>
    </message>
    <message>
        <source>CLIP-L dropout rate</source>
        <translation>CLIP-L 丢弃率</translation>
    </message>
    <message>
        <source>Probability of training an image with CLIP-L&apos;s output zeroed.</source>
        <translation>将 CLIP-L 的输出置零来训练图像的概率。</translation>
    </message>
    <message>
        <source>CLIP-G dropout rate</source>
        <translation>CLIP-G 丢弃率</translation>
    </message>
    <message>
        <source>Probability of training an image with CLIP-G&apos;s output zeroed.</source>
        <translation>将 CLIP-G 的输出置零来训练图像的概率。</translation>
    </message>
    <message>
        <source>T5 dropout rate</source>
        <translation>T5 丢弃率</translation>
    </message>
    <message>
        <source>Probability of training an image with T5-XXL&apos;s output zeroed.</source>
        <translation>将 T5-XXL 的输出置零来训练图像的概率。</translation>
    </message>
    <message>
        <source>Scaled position embeddings</source>
        <translation>缩放位置嵌入</translation>
    </message>
    <message>
        <source>Scale the position embeddings to each training resolution (multi-resolution training). SD 3.5 Medium only.</source>
        <translation>按每个训练分辨率缩放位置嵌入(多分辨率训练)。仅限 SD 3.5 Medium。</translation>
    </message>
    <message>
        <source>Position embedding random crop rate</source>
        <translation>位置嵌入随机裁剪率</translation>
    </message>
    <message>
        <source>Probability of cropping the position embeddings at a random place. SD 3.5 Medium only.</source>
        <translation>在随机位置裁剪位置嵌入的概率。仅限 SD 3.5 Medium。</translation>
    </message>
    <message>
        <source>Network module</source>
        <translation>网络模块</translation>
    </message>
    <message>
        <source>Network rank (dim)</source>
        <translation>网络秩 (dim)</translation>
    </message>
    <message>
        <source>Network alpha</source>
        <translation>网络 alpha</translation>
    </message>
    <message>
        <source>LoRA alpha; the update is scaled by alpha / rank.</source>
        <translation>LoRA 的 alpha;更新量按 alpha / rank 缩放。</translation>
    </message>
    <message>
        <source>Network arguments</source>
        <translation>网络参数</translation>
    </message>
    <message>
        <source>Extra key=value arguments for the network module.</source>
        <translation>传给网络模块的额外 key=value 参数。</translation>
    </message>
    <message>
        <source>Network dropout</source>
        <translation>网络 dropout</translation>
    </message>
    <message>
        <source>Dropout on the LoRA input while training.</source>
        <translation>训练时对 LoRA 输入应用的 dropout。</translation>
    </message>
    <message>
        <source>Network weights</source>
        <translation>网络权重</translation>
    </message>
    <message>
        <source>Continue training from this LoRA file.</source>
        <translation>从此 LoRA 文件继续训练。</translation>
    </message>
    <message>
        <source>Rank from weights</source>
        <translation>从权重获取秩</translation>
    </message>
    <message>
        <source>Take rank and alpha from network_weights.</source>
        <translation>从 network_weights 获取秩和 alpha。</translation>
    </message>
    <message>
        <source>Partial network weights</source>
        <translation>部分加载网络权重</translation>
    </message>
    <message>
        <source>Let network_weights fill only some of the network&apos;s modules and train the others from scratch, as sd-scripts loads it (strict=False); off, such a file is refused. Sinter&apos;s own key; sd-scripts ignores it.</source>
        <translation>允许 network_weights 只填充网络的部分模块，其余模块从头训练（与 sd-scripts 以 strict=False 加载相同）；关闭时拒绝此类文件。Sinter 自有的键；sd-scripts 会忽略它。</translation>
    </message>
    <message>
        <source>Train U-Net only</source>
        <translation>仅训练 U-Net</translation>
    </message>
    <message>
        <source>Train only the LoRA modules of the U-Net / transformer.</source>
        <translation>只训练 U-Net / Transformer 的 LoRA 模块。</translation>
    </message>
    <message>
        <source>Train text encoder only</source>
        <translation>仅训练文本编码器</translation>
    </message>
    <message>
        <source>Train only the LoRA modules of the text encoders.</source>
        <translation>只训练文本编码器的 LoRA 模块。</translation>
    </message>
    <message>
        <source>U-Net learning rate</source>
        <translation>U-Net 学习率</translation>
    </message>
    <message>
        <source>Learning rate of the U-Net / transformer LoRA; learning_rate when unset.</source>
        <translation>U-Net / Transformer LoRA 的学习率;未设置时使用 learning_rate。</translation>
    </message>
    <message>
        <source>Text encoder learning rate</source>
        <translation>文本编码器学习率</translation>
    </message>
    <message>
        <source>Learning rate of the text encoder LoRA; learning_rate when unset.</source>
        <translation>文本编码器 LoRA 的学习率;未设置时使用 learning_rate。</translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation>优化器</translation>
    </message>
    <message>
        <source>Optimizer name as in sd-scripts; AdamW when empty.</source>
        <translation>与 sd-scripts 相同的优化器名称;为空时为 AdamW。</translation>
    </message>
    <message>
        <source>Optimizer arguments</source>
        <translation>优化器参数</translation>
    </message>
    <message>
        <source>key=value pairs, e.g. weight_decay=0.01 betas=0.9,0.999.</source>
        <translation>key=value 对,例如 weight_decay=0.01 betas=0.9,0.999。</translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation>学习率</translation>
    </message>
    <message>
        <source>Base learning rate.</source>
        <translation>基础学习率。</translation>
    </message>
    <message>
        <source>LR scheduler</source>
        <translation>学习率调度器</translation>
    </message>
    <message>
        <source>LR warmup steps</source>
        <translation>学习率预热步数</translation>
    </message>
    <message>
        <source>Warm-up steps, or a ratio of the total steps when below 1.</source>
        <translation>预热步数;小于 1 时表示占总步数的比例。</translation>
    </message>
    <message>
        <source>LR cycles</source>
        <translation>学习率周期数</translation>
    </message>
    <message>
        <source>Restarts of cosine_with_restarts.</source>
        <translation>cosine_with_restarts 的重启次数。</translation>
    </message>
    <message>
        <source>LR power</source>
        <translation>学习率幂次</translation>
    </message>
    <message>
        <source>Power of the polynomial schedule.</source>
        <translation>多项式调度的幂次。</translation>
    </message>
    <message>
        <source>Enable torch.compile</source>
        <translation>启用 torch.compile</translation>
    </message>
    <message>
        <source>Accelerate the training step natively: fused kernels, and with the matching mode, CUDA graphs.</source>
        <translation>以原生方式加速训练步骤:融合内核,在相应模式下还使用 CUDA 图。</translation>
    </message>
    <message>
        <source>Backend</source>
        <translation>后端</translation>
    </message>
    <message>
        <source>inductor: fused kernels; cudagraphs: graph capture with stock kernels; eager: nothing captured; aot_eager: eager, with the capture-safety checks reported.</source>
        <translation>inductor:融合内核;cudagraphs:用标准内核进行图捕获;eager:不捕获;aot_eager:eager 运行并报告捕获安全性检查结果。</translation>
    </message>
    <message>
        <source>Mode</source>
        <translation>模式</translation>
    </message>
    <message>
        <source>default: fused kernels; reduce-overhead: + CUDA graphs; max-autotune: + graphs and autotuning; max-autotune-no-cudagraphs: + autotuning.</source>
        <translation>default:融合内核;reduce-overhead:+ CUDA 图;max-autotune:+ 图和自动调优;max-autotune-no-cudagraphs:+ 自动调优。</translation>
    </message>
    <message>
        <source>Dynamic shapes</source>
        <translation>动态形状</translation>
    </message>
    <message>
        <source>false: a graph per shape; auto: pre-capture the most frequent bucket shapes; true: nothing shape-specialised.</source>
        <translation>false:每种形状一张图;auto:预先捕获最常见的分桶形状;true:不做形状特化。</translation>
    </message>
    <message>
        <source>Full graph</source>
        <translation>完整图</translation>
    </message>
    <message>
        <source>Capture forward, backward and optimizer step as one graph; anything that prevents it is an error.</source>
        <translation>将前向、反向和优化器步骤捕获为一张图;任何阻碍都会报错。</translation>
    </message>
    <message>
        <source>Cache size limit</source>
        <translation>缓存大小上限</translation>
    </message>
    <message>
        <source>Captured shape signatures per region; 0 uses the default of 8.</source>
        <translation>每个区域捕获的形状签名数量;0 表示默认值 8。</translation>
    </message>
    <message>
        <source>Compile arguments (deprecated)</source>
        <translation>编译参数(已弃用)</translation>
    </message>
    <message>
        <source>BACKEND MODE DYNAMIC FULLGRAPH; overrides the settings above and sets the cache limit to 32.</source>
        <translation>BACKEND MODE DYNAMIC FULLGRAPH;覆盖上面的设置,并将缓存上限设为 32。</translation>
    </message>
    <message>
        <source>Compile text encoders</source>
        <translation>编译文本编码器</translation>
    </message>
    <message>
        <source>Also accelerate text encoding.</source>
        <translation>同时加速文本编码。</translation>
    </message>
    <message>
        <source>Compile VAE</source>
        <translation>编译 VAE</translation>
    </message>
    <message>
        <source>Also accelerate latent caching (the VAE encoder as CUDA graphs); sample images decode uncaptured.</source>
        <translation>同时加速潜变量缓存（以 CUDA 图运行 VAE 编码器）；样本图像的解码不做捕获。</translation>
    </message>
    <message>
        <source>Allow TF32</source>
        <translation>允许 TF32</translation>
    </message>
    <message>
        <source>TF32 matrix and convolution math on CUDA, with or without compile.</source>
        <translation>在 CUDA 上使用 TF32 进行矩阵和卷积运算,无论是否编译。</translation>
    </message>
    <message>
        <source>cuDNN benchmark</source>
        <translation>cuDNN 基准测试</translation>
    </message>
    <message>
        <source>Let cuDNN pick the fastest convolution algorithms, with or without compile.</source>
        <translation>让 cuDNN 选择最快的卷积算法,无论是否编译。</translation>
    </message>
    <message>
        <source>Save every N epochs</source>
        <translation>每 N 轮保存</translation>
    </message>
    <message>
        <source>Save the model every N epochs.</source>
        <translation>每 N 轮保存一次模型。</translation>
    </message>
    <message>
        <source>Save every N steps</source>
        <translation>每 N 步保存</translation>
    </message>
    <message>
        <source>Save the model every N steps.</source>
        <translation>每 N 步保存一次模型。</translation>
    </message>
    <message>
        <source>Keep last N epochs</source>
        <translation>保留最近 N 轮</translation>
    </message>
    <message>
        <source>Delete older per-epoch saves, keeping the last N.</source>
        <translation>删除较旧的按轮保存,只保留最近 N 个。</translation>
    </message>
    <message>
        <source>Keep last N steps</source>
        <translation>保留最近 N 步</translation>
    </message>
    <message>
        <source>Delete per-step saves older than N steps.</source>
        <translation>删除早于 N 步的按步保存。</translation>
    </message>
    <message>
        <source>Save training state</source>
        <translation>保存训练状态</translation>
    </message>
    <message>
        <source>Save optimizer, scheduler and data position with each save, for resuming.</source>
        <translation>每次保存时一并保存优化器、调度器和数据位置,以便恢复训练。</translation>
    </message>
    <message>
        <source>Save state at the end</source>
        <translation>结束时保存状态</translation>
    </message>
    <message>
        <source>Save the training state once training ends.</source>
        <translation>训练结束时保存一次训练状态。</translation>
    </message>
    <message>
        <source>Resume from state</source>
        <translation>从状态恢复</translation>
    </message>
    <message>
        <source>A saved state folder to continue from.</source>
        <translation>用于继续训练的已保存状态文件夹。</translation>
    </message>
    <message>
        <source>Hugging Face token</source>
        <translation>Hugging Face 令牌</translation>
    </message>
    <message>
        <source>Token for uploads. Never written to configs or presets.</source>
        <translation>用于上传的令牌。不会写入配置文件或预设。</translation>
    </message>
    <message>
        <source>Sample prompts</source>
        <translation>采样提示词</translation>
    </message>
    <message>
        <source>A text file of prompts (one per line, with --w --h --d --l --s --n).</source>
        <translation>提示词文本文件(每行一个,可带 --w --h --d --l --s --n)。</translation>
    </message>
    <message>
        <source>Sample every N steps</source>
        <translation>每 N 步采样</translation>
    </message>
    <message>
        <source>Generate samples every N steps.</source>
        <translation>每 N 步生成一次样本。</translation>
    </message>
    <message>
        <source>Sample every N epochs</source>
        <translation>每 N 轮采样</translation>
    </message>
    <message>
        <source>Generate samples every N epochs.</source>
        <translation>每 N 轮生成一次样本。</translation>
    </message>
    <message>
        <source>Sampler</source>
        <translation>采样器</translation>
    </message>
    <message>
        <source>Sampler used for samples.</source>
        <translation>生成样本所用的采样器。</translation>
    </message>
    <message>
        <source>Sample before training</source>
        <translation>训练前采样</translation>
    </message>
    <message>
        <source>Generate samples before the first step.</source>
        <translation>在第一步之前生成样本。</translation>
    </message>
    <message>
        <source>Logging folder</source>
        <translation>日志文件夹</translation>
    </message>
    <message>
        <source>Folder for TensorBoard logs.</source>
        <translation>TensorBoard 日志文件夹。</translation>
    </message>
    <message>
        <source>Log with</source>
        <translation>日志记录方式</translation>
    </message>
    <message>
        <source>tensorboard, wandb or all; TensorBoard when only a logging folder is set.</source>
        <translation>tensorboard、wandb 或 all;只设置日志文件夹时使用 TensorBoard。</translation>
    </message>
    <message>
        <source>Log prefix</source>
        <translation>日志前缀</translation>
    </message>
    <message>
        <source>Prefix for the log folder name.</source>
        <translation>日志文件夹名称的前缀。</translation>
    </message>
    <message>
        <source>Tracker name</source>
        <translation>跟踪器名称</translation>
    </message>
    <message>
        <source>Folder of the TensorBoard log inside the run&apos;s log folder.</source>
        <translation>运行日志文件夹中存放 TensorBoard 日志的文件夹。</translation>
    </message>
    <message>
        <source>network_train for LoRA, finetuning otherwise</source>
        <translation>LoRA 为 network_train，其他为 finetuning</translation>
    </message>
    <message>
        <source>Tracker settings</source>
        <translation>跟踪器设置</translation>
    </message>
    <message>
        <source>A TOML file whose [tensorboard] table sets flush_secs, max_queue, filename_suffix and purge_step.</source>
        <translation>一个 TOML 文件，其 [tensorboard] 表设置 flush_secs、max_queue、filename_suffix 和 purge_step。</translation>
    </message>
    <message>
        <source>Log the config</source>
        <translation>记录配置</translation>
    </message>
    <message>
        <source>Write the training settings into the TensorBoard log (paths and secrets left out).</source>
        <translation>将训练设置写入 TensorBoard 日志（不含路径和密钥）。</translation>
    </message>
    <message>
        <source>W&amp;B API key</source>
        <translation>W&amp;B API 密钥</translation>
    </message>
    <message>
        <source>Weights &amp; Biases key. Never written to configs or presets.</source>
        <translation>Weights &amp; Biases 密钥。不会写入配置文件或预设。</translation>
    </message>
    <message>
        <source>Profile steps</source>
        <translation>性能分析步数</translation>
    </message>
    <message>
        <source>Record this many steps after warm-up with the profiler into a Chrome/Perfetto trace (&lt;output_name&gt;-profile.json in the output folder).</source>
        <translation>在预热之后用性能分析器记录这么多步，并写入 Chrome/Perfetto 跟踪文件（输出文件夹中的 &lt;output_name&gt;-profile.json）。</translation>
    </message>
    <message>
        <source>Fused backward pass</source>
        <translation>融合反向传播</translation>
    </message>
    <message>
        <source>Step each weight as soon as its gradient is computed, so that the whole model&apos;s gradients never exist at once (Adafactor, no gradient accumulation).</source>
        <translation>每个权重的梯度一算出就立即更新该权重，使整个模型的梯度不会同时存在（Adafactor，不可梯度累积）。</translation>
    </message>
    <message>
        <source>Metadata title</source>
        <translation>元数据标题</translation>
    </message>
    <message>
        <source>Title stored in the saved file&apos;s metadata (modelspec.title); the output name when empty.</source>
        <translation>写入保存文件元数据(modelspec.title)的标题;为空时使用输出名称。</translation>
    </message>
    <message>
        <source>Metadata author</source>
        <translation>元数据作者</translation>
    </message>
    <message>
        <source>Author stored in the saved file&apos;s metadata (modelspec.author).</source>
        <translation>写入保存文件元数据(modelspec.author)的作者。</translation>
    </message>
    <message>
        <source>Metadata description</source>
        <translation>元数据描述</translation>
    </message>
    <message>
        <source>Description stored in the saved file&apos;s metadata (modelspec.description).</source>
        <translation>写入保存文件元数据(modelspec.description)的描述。</translation>
    </message>
    <message>
        <source>Metadata license</source>
        <translation>元数据许可证</translation>
    </message>
    <message>
        <source>License stored in the saved file&apos;s metadata (modelspec.license).</source>
        <translation>写入保存文件元数据(modelspec.license)的许可证。</translation>
    </message>
    <message>
        <source>Metadata tags</source>
        <translation>元数据标签</translation>
    </message>
    <message>
        <source>Comma-separated tags stored in the saved file&apos;s metadata (modelspec.tags).</source>
        <translation>写入保存文件元数据(modelspec.tags)的逗号分隔标签。</translation>
    </message>
    <message>
        <source>Dataset repeats</source>
        <translation>数据集重复次数</translation>
    </message>
    <message>
        <source>How many times each fine-tune image is used per epoch (with a metadata file).</source>
        <translation>每个轮次中每张微调图像的使用次数(使用元数据文件时)。</translation>
    </message>
    <message>
        <source>Caption separator</source>
        <translation>标题分隔符</translation>
    </message>
    <message>
        <source>Separator between the tags of a caption, for shuffling and dropping tags.</source>
        <translation>标题中标签之间的分隔符,用于打乱和丢弃标签。</translation>
    </message>
    <message>
        <source>Caption dropout every N epochs</source>
        <translation>每 N 个轮次丢弃标题</translation>
    </message>
    <message>
        <source>Train every Nth epoch with empty captions; 0 never.</source>
        <translation>每第 N 个轮次使用空标题训练;0 表示从不。</translation>
    </message>
    <message>
        <source>Resize interpolation</source>
        <translation>缩放插值</translation>
    </message>
    <message>
        <source>Filter used to resize images; area when shrinking and lanczos when enlarging when unset.</source>
        <translation>缩放图像所用的滤波器;未设置时缩小用 area,放大用 lanczos。</translation>
    </message>
    <message>
        <source>Use 8-bit Adam</source>
        <translation>使用 8 位 Adam</translation>
    </message>
    <message>
        <source>sd-scripts&apos; older switch for optimizer_type = AdamW8bit; only with an empty optimizer_type.</source>
        <translation>sd-scripts 用于 optimizer_type = AdamW8bit 的旧开关；仅在 optimizer_type 为空时可用。</translation>
    </message>
    <message>
        <source>Use Lion</source>
        <translation>使用 Lion</translation>
    </message>
    <message>
        <source>sd-scripts&apos; older switch for optimizer_type = Lion; only with an empty optimizer_type.</source>
        <translation>sd-scripts 用于 optimizer_type = Lion 的旧开关；仅在 optimizer_type 为空时可用。</translation>
    </message>
    <message>
        <source>Validation split</source>
        <translation>验证集比例</translation>
    </message>
    <message>
        <source>Fraction of each dataset&apos;s images held out for validation (0: no validation), e.g. 0.1. Regularisation images are never held out.</source>
        <translation>每个数据集中留作验证的图像比例(0 表示不验证),例如 0.1。正则化图像从不留出。</translation>
    </message>
    <message>
        <source>Validation seed</source>
        <translation>验证种子</translation>
    </message>
    <message>
        <source>Seed of which images are held out and of the validation noise.</source>
        <translation>决定留出哪些图像以及验证噪声的种子。</translation>
    </message>
    <message>
        <source>the run&apos;s seed</source>
        <translation>本次运行的种子</translation>
    </message>
    <message>
        <source>Validate every N steps</source>
        <translation>每 N 步验证</translation>
    </message>
    <message>
        <source>Also compute the validation loss every N steps, besides at the end of epochs.</source>
        <translation>除每轮结束时外,还每 N 步计算一次验证损失。</translation>
    </message>
    <message>
        <source>Validate every N epochs</source>
        <translation>每 N 轮验证</translation>
    </message>
    <message>
        <source>Compute the validation loss at the end of every Nth epoch.</source>
        <translation>每 N 轮在该轮结束时计算验证损失。</translation>
    </message>
    <message>
        <source>every epoch</source>
        <translation>每轮</translation>
    </message>
    <message>
        <source>Max validation batches</source>
        <translation>最大验证批次数</translation>
    </message>
    <message>
        <source>Validate on at most this many batches of the held-out images.</source>
        <translation>最多使用留出图像中的这么多个批次进行验证。</translation>
    </message>
    <message>
        <source>Keep best K by validation loss</source>
        <translation>按验证损失保留最佳 K 个</translation>
    </message>
    <message>
        <source>After each validation pass, keep the K files with the lowest validation loss so far (&lt;output_name&gt;-best-step&lt;step&gt;-loss&lt;loss&gt;.safetensors), deleting the one that drops out. Needs validation_split. Sinter&apos;s own key; sd-scripts ignores it.</source>
        <translation>每次验证后，保留目前验证损失最低的 K 个文件(&lt;output_name&gt;-best-step&lt;step&gt;-loss&lt;loss&gt;.safetensors)，并删除被挤出的文件。需要 validation_split。Sinter 自有的键；sd-scripts 会忽略它。</translation>
    </message>
    <message>
        <source>Early stop patience</source>
        <translation>提前停止耐心值</translation>
    </message>
    <message>
        <source>End the run (saved as at its end) after this many validation passes in a row without a new lowest validation loss. Needs validation_split. Sinter&apos;s own key; sd-scripts ignores it.</source>
        <translation>连续这么多次验证都没有出现新的最低验证损失时结束运行(与正常结束时一样保存)。需要 validation_split。Sinter 自有的键；sd-scripts 会忽略它。</translation>
    </message>
    <message>
        <source>Early stop min improvement</source>
        <translation>提前停止最小改进量</translation>
    </message>
    <message>
        <source>How much lower than the best so far a validation loss must be to count as a new best for early_stop_patience (0: any decrease). Sinter&apos;s own key; sd-scripts ignores it.</source>
        <translation>验证损失需比目前最佳值低多少，才算作 early_stop_patience 的新最佳(0：任何下降都算)。Sinter 自有的键；sd-scripts 会忽略它。</translation>
    </message>
    <message>
        <source>EMA decay</source>
        <translation>EMA 衰减率</translation>
    </message>
    <message>
        <source>Keep an exponential moving average (EMA) of the trained weights with this decay: saved beside every saved model as &lt;name&gt;-ema.safetensors and in the training state. 0.999 averages about the last 1,000 updates; below 1. Sinter&apos;s own key; sd-scripts ignores it.</source>
        <translation>以此衰减率保留训练权重的指数移动平均(EMA)：每保存一个模型，就在其旁边保存为 &lt;name&gt;-ema.safetensors，并写入训练状态。0.999 大约平均最近 1,000 次更新；须小于 1。Sinter 自有的键；sd-scripts 会忽略它。</translation>
    </message>
    <message>
        <source>EMA update every N steps</source>
        <translation>每 N 步更新 EMA</translation>
    </message>
    <message>
        <source>Update the EMA after every N-th step (OneTrainer&apos;s update step interval). Sinter&apos;s own key; sd-scripts ignores it.</source>
        <translation>每隔 N 步更新一次 EMA(OneTrainer 的更新步间隔)。Sinter 自有的键；sd-scripts 会忽略它。</translation>
    </message>
    <message>
        <source>EMA device</source>
        <translation>EMA 存放位置</translation>
    </message>
    <message>
        <source>Where the EMA is kept: gpu, beside the weights on the training device (as much memory as the trained weights in float32), or cpu, in host memory (the weights are copied there at each update and averaged while training goes on). Sinter&apos;s own key; sd-scripts ignores it.</source>
        <translation>EMA 的存放位置：gpu 表示放在训练设备上、权重旁边(占用与 float32 训练权重相同的显存)；cpu 表示放在主机内存中(每次更新时把权重复制过去，并在训练继续进行的同时求平均)。Sinter 自有的键；sd-scripts 会忽略它。</translation>
    </message>
    <message>
        <source>EMA warm-up</source>
        <translation>EMA 预热</translation>
    </message>
    <message>
        <source>Start with a smaller decay, the least of ema_decay and (1 + k) / (10 + k) at the k-th update (as OneTrainer does), so that the EMA soon leaves the starting weights (a new LoRA&apos;s are zero). Off: ema_decay from the first update. Sinter&apos;s own key; sd-scripts ignores it.</source>
        <translation>从较小的衰减率开始：第 k 次更新取 ema_decay 与 (1 + k) / (10 + k) 中较小者(与 OneTrainer 相同)，使 EMA 尽快离开起始权重(新 LoRA 的起始权重为零)。关闭时从第一次更新起就使用 ema_decay。Sinter 自有的键；sd-scripts 会忽略它。</translation>
    </message>
    <message>
        <source>Samples from the EMA</source>
        <translation>用 EMA 生成样图</translation>
    </message>
    <message>
        <source>Render sample images with the EMA&apos;s weights (the trained weights are put back after). Sinter&apos;s own key; sd-scripts ignores it.</source>
        <translation>用 EMA 的权重生成样图(之后换回训练中的权重)。Sinter 自有的键；sd-scripts 会忽略它。</translation>
    </message>
    <message>
        <source>all of them</source>
        <translation>全部</translation>
    </message>
    <message>
        <source>No half-precision VAE</source>
        <translation>VAE 不使用半精度</translation>
    </message>
    <message>
        <source>Keep the VAE (FLUX&apos;s autoencoder) in float32 under mixed precision (it is float32 under fp16 anyway).</source>
        <translation>混合精度下仍将 VAE(FLUX 的自编码器)保持为 float32(fp16 下本来就是 float32)。</translation>
    </message>
    <message>
        <source>sd-scripts&apos; download (Hugging Face cache)</source>
        <translation>sd-scripts 的下载(Hugging Face 缓存)</translation>
    </message>
    <message>
        <source>Keep tokens separator</source>
        <translation>保留标签分隔符</translation>
    </message>
    <message>
        <source>A separator in the caption (e.g. |||): the tags before it are kept in place, as keep_tokens does.</source>
        <translation>标题中的分隔符(例如 |||):其前面的标签像 keep_tokens 一样保持原位。</translation>
    </message>
    <message>
        <source>Secondary separator</source>
        <translation>次级分隔符</translation>
    </message>
    <message>
        <source>Joins tags that shuffle and drop together as one (e.g. ;;;), written as a comma in the caption.</source>
        <translation>将一起打乱和丢弃的标签连接为一个(例如 ;;;),在标题中写作逗号。</translation>
    </message>
    <message>
        <source>Wildcards</source>
        <translation>通配符</translation>
    </message>
    <message>
        <source>{a|b|c} in a caption picks one at random; a multi-line caption file picks a random line.</source>
        <translation>标题中的 {a|b|c} 随机选择一个;多行标题文件随机选择一行。</translation>
    </message>
    <message>
        <source>Caption prefix</source>
        <translation>标题前缀</translation>
    </message>
    <message>
        <source>Text put before every caption.</source>
        <translation>添加在每个标题前面的文本。</translation>
    </message>
    <message>
        <source>Caption suffix</source>
        <translation>标题后缀</translation>
    </message>
    <message>
        <source>Text put after every caption.</source>
        <translation>添加在每个标题后面的文本。</translation>
    </message>
    <message>
        <source>Token warm-up minimum</source>
        <translation>标签预热最小数</translation>
    </message>
    <message>
        <source>Tags used at the first step of the token warm-up.</source>
        <translation>标签预热第一步使用的标签数。</translation>
    </message>
    <message>
        <source>Token warm-up steps</source>
        <translation>标签预热步数</translation>
    </message>
    <message>
        <source>Steps until all tags are used (below 1: a fraction of the training steps); 0: no warm-up.</source>
        <translation>直到使用全部标签的步数(小于 1:训练步数的比例);0:不预热。</translation>
    </message>
    <message>
        <source>Alpha channel as loss mask</source>
        <translation>以 Alpha 通道作为损失掩码</translation>
    </message>
    <message>
        <source>Weight each pixel&apos;s loss by the image&apos;s alpha channel (transparent pixels are not learned). Images without alpha count as opaque.</source>
        <translation>用图像的 Alpha 通道为每个像素的损失加权(透明像素不学习)。没有 Alpha 的图像视为不透明。</translation>
    </message>
    <message>
        <source>Masked loss</source>
        <translation>掩码损失</translation>
    </message>
    <message>
        <source>Weight each pixel&apos;s loss by a mask image&apos;s red channel (white learned, black ignored), from conditioning_data_dir.</source>
        <translation>用 conditioning_data_dir 中掩码图像的红色通道为每个像素的损失加权(白色学习,黑色忽略)。</translation>
    </message>
    <message>
        <source>Mask image folder</source>
        <translation>掩码图像文件夹</translation>
    </message>
    <message>
        <source>With masked loss: a folder of mask images named as the training images, each of its image&apos;s size.</source>
        <translation>用于掩码损失:存放与训练图像同名、同尺寸的掩码图像的文件夹。</translation>
    </message>
    <message>
        <source>fp8 base U-Net/DiT only</source>
        <translation>fp8 基础模型(仅 U-Net/DiT)</translation>
    </message>
    <message>
        <source>Store only the frozen U-Net/DiT in fp8; the text encoders stay in the training precision.</source>
        <translation>仅以 fp8 存储冻结的 U-Net/DiT;文本编码器保持训练精度。</translation>
    </message>
    <message>
        <source>Offload checkpoints to CPU</source>
        <translation>将检查点卸载到 CPU</translation>
    </message>
    <message>
        <source>With gradient checkpointing (turned on by this), keep the blocks&apos; saved inputs in CPU memory until the backward pass. Not with blocks_to_swap.</source>
        <translation>在梯度检查点(此选项会启用它)下,将各块保存的输入放在 CPU 内存中直到反向传播。不能与 blocks_to_swap 同时使用。</translation>
    </message>
    <message>
        <source>Random noise offset strength</source>
        <translation>随机噪声偏移强度</translation>
    </message>
    <message>
        <source>Draw the noise offset&apos;s strength uniformly between 0 and noise_offset at each step.</source>
        <translation>每一步在 0 到 noise_offset 之间均匀抽取噪声偏移的强度。</translation>
    </message>
    <message>
        <source>Adaptive noise scale</source>
        <translation>自适应噪声缩放</translation>
    </message>
    <message>
        <source>Adds this times each latent channel&apos;s mean magnitude to noise_offset (needs noise_offset), e.g. 0.00357.</source>
        <translation>将每个潜变量通道平均幅值乘以此值加到 noise_offset 上(需要 noise_offset),例如 0.00357。</translation>
    </message>
    <message>
        <source>Zero terminal SNR</source>
        <translation>终端 SNR 置零</translation>
    </message>
    <message>
        <source>Rescale the noise schedule so that the last timestep is pure noise (use with v-parameterization).</source>
        <translation>重新缩放噪声调度,使最后一个时间步为纯噪声(与 v-parameterization 一起使用)。</translation>
    </message>
    <message>
        <source>Debiased estimation loss</source>
        <translation>去偏估计损失</translation>
    </message>
    <message>
        <source>Weight each sample&apos;s loss by 1/sqrt(SNR) of its timestep (capped at 1000).</source>
        <translation>按其时间步的 1/sqrt(SNR) 对每个样本的损失加权(SNR 上限 1000)。</translation>
    </message>
    <message>
        <source>Scale v-prediction loss like noise prediction</source>
        <translation>像噪声预测一样缩放 v 预测损失</translation>
    </message>
    <message>
        <source>Scale the v-prediction loss by SNR/(SNR+1), like a noise-prediction loss (needs v_parameterization).</source>
        <translation>像噪声预测损失一样,用 SNR/(SNR+1) 缩放 v 预测损失(需要 v_parameterization)。</translation>
    </message>
    <message>
        <source>v-prediction-like loss</source>
        <translation>类 v 预测损失</translation>
    </message>
    <message>
        <source>Add this much of a v-prediction-like loss (the loss divided by SNR/(SNR+1)), e.g. 0.1.</source>
        <translation>按此比例加上类 v 预测损失(损失除以 SNR/(SNR+1)),例如 0.1。</translation>
    </message>
    <message>
        <source>Random input perturbation strength</source>
        <translation>随机输入扰动强度</translation>
    </message>
    <message>
        <source>Draw the input perturbation&apos;s strength uniformly between 0 and ip_noise_gamma at each step.</source>
        <translation>每一步在 0 到 ip_noise_gamma 之间均匀抽取输入扰动的强度。</translation>
    </message>
    <message>
        <source>U-Net block learning rates</source>
        <translation>U-Net 分块学习率</translation>
    </message>
    <message>
        <source>23 comma-separated learning rates for the U-Net&apos;s blocks (time/label embedding, 9 input, 3 middle, 9 output, out), used instead of learning_rate for the U-Net; 0 freezes a block.</source>
        <translation>U-Net 各块的学习率,逗号分隔共 23 个(时间/标签嵌入、9 个输入、3 个中间、9 个输出、out),用于代替 U-Net 的 learning_rate;0 表示冻结该块。</translation>
    </message>
    <message>
        <source>Scale weight norms</source>
        <translation>权重范数缩放</translation>
    </message>
    <message>
        <source>Max-norm of each LoRA module&apos;s update: scaled back to it after every step (1 is typical); 0 or unset: off.</source>
        <translation>每个 LoRA 模块更新量的最大范数:每步之后缩放回此值(常用 1);0 或未设置:关闭。</translation>
    </message>
    <message>
        <source>Fused optimizer groups</source>
        <translation>融合优化器分组</translation>
    </message>
    <message>
        <source>sd-scripts&apos; N optimizers stepped as their gradients complete: here each weight is stepped as soon as its gradient is (per-weight optimizers, no gradient accumulation).</source>
        <translation>sd-scripts 中 N 个优化器在其梯度完成时更新:这里每个权重在其梯度完成时立即更新(逐权重优化器,不累积梯度)。</translation>
    </message>
    <message>
        <source>Blockwise fused optimizers</source>
        <translation>逐块融合优化器</translation>
    </message>
    <message>
        <source>flux_train.py&apos;s optimizer per block, stepped as its gradients complete: here each weight is stepped as soon as its gradient is (per-weight optimizers, no gradient accumulation).</source>
        <translation>flux_train.py 中每块一个优化器,在其梯度完成时更新:这里每个权重在其梯度完成时立即更新(逐权重优化器,不累积梯度)。</translation>
    </message>
    <message>
        <source>Learning-rate schedule (diffusers/transformers names, as sd-scripts); lr_scheduler_type replaces it.</source>
        <translation>学习率调度(与 sd-scripts 相同的 diffusers/transformers 名称);设置 lr_scheduler_type 时由其代替。</translation>
    </message>
    <message>
        <source>LR scheduler class</source>
        <translation>学习率调度器类</translation>
    </message>
    <message>
        <source>A torch.optim.lr_scheduler class (short or full name) used instead of lr_scheduler, with lr_scheduler_args as its arguments (e.g. T_max=1000), stepped once per optimizer step.</source>
        <translation>代替 lr_scheduler 使用的 torch.optim.lr_scheduler 类(短名或全名),其参数为 lr_scheduler_args(例如 T_max=1000),每个优化器步骤前进一次。</translation>
    </message>
    <message>
        <source>LR scheduler arguments</source>
        <translation>学习率调度器参数</translation>
    </message>
    <message>
        <source>key=value pairs with Python values for the schedule, e.g. T_max=1000 eta_min=1e-6, milestones=[500,800], step_rules=&apos;1:10,0.1:20,0.01&apos;, warmup_type=&apos;linear&apos;.</source>
        <translation>调度的 key=value 对(值为 Python 写法),例如 T_max=1000 eta_min=1e-6、milestones=[500,800]、step_rules=&apos;1:10,0.1:20,0.01&apos;、warmup_type=&apos;linear&apos;。</translation>
    </message>
    <message>
        <source>LR decay steps</source>
        <translation>学习率衰减步数</translation>
    </message>
    <message>
        <source>Decay steps of warmup_stable_decay, or a ratio of the total steps when below 1.</source>
        <translation>warmup_stable_decay 的衰减步数;小于 1 时表示占总步数的比例。</translation>
    </message>
    <message>
        <source>LR minimum ratio</source>
        <translation>学习率最小比例</translation>
    </message>
    <message>
        <source>Lowest learning rate as a ratio of the initial one, for cosine_with_min_lr and warmup_stable_decay.</source>
        <translation>cosine_with_min_lr 和 warmup_stable_decay 的最低学习率,以初始学习率的比例表示。</translation>
    </message>
    <message>
        <source>LR timescale</source>
        <translation>学习率时间尺度</translation>
    </message>
    <message>
        <source>Timescale of inverse_sqrt; the warmup steps when unset (10000 without warmup).</source>
        <translation>inverse_sqrt 的时间尺度;未设置时为预热步数(无预热时为 10000)。</translation>
    </message>
    <message>
        <source>Keep last N epoch states</source>
        <translation>保留最近 N 轮的状态</translation>
    </message>
    <message>
        <source>Delete older per-epoch states, keeping the last N (instead of save_last_n_epochs for states).</source>
        <translation>删除较旧的按轮保存的状态,只保留最近 N 个(对状态代替 save_last_n_epochs)。</translation>
    </message>
    <message>
        <source>Keep last N step states</source>
        <translation>保留最近 N 步的状态</translation>
    </message>
    <message>
        <source>Delete per-step states older than N steps (instead of save_last_n_steps for states).</source>
        <translation>删除早于 N 步的按步保存的状态(对状态代替 save_last_n_steps)。</translation>
    </message>
    <message>
        <source>Initial step</source>
        <translation>起始步数</translation>
    </message>
    <message>
        <source>Start the step count here (all epochs counted; overrides initial_epoch and a resumed state&apos;s step). The lr schedule keeps its own count: from 0, or from the resumed state.</source>
        <translation>从这里开始计步(所有轮次累计;覆盖 initial_epoch 和恢复状态的步数)。学习率调度保持自己的计数:从 0 开始,或从恢复的状态开始。</translation>
    </message>
    <message>
        <source>Initial epoch</source>
        <translation>起始轮次</translation>
    </message>
    <message>
        <source>Start at this epoch (1 is the first): the step count starts at its first step.</source>
        <translation>从此轮次开始(1 为第一轮):步数从该轮次的第一步开始计。</translation>
    </message>
    <message>
        <source>Skip data until initial step</source>
        <translation>跳过数据直到起始步</translation>
    </message>
    <message>
        <source>With initial_step or initial_epoch, continue the data from that step&apos;s batch instead of the start of its epoch.</source>
        <translation>与 initial_step 或 initial_epoch 一起使用时,数据从该步的批次继续,而不是从该轮次开头开始。</translation>
    </message>
    <message>
        <source>Folder with T5&apos;s spiece.model. Unset: the copy sd-scripts downloaded (google/t5-v1_1-xxl in the Hugging Face cache).</source>
        <translation>T5 的 spiece.model 所在文件夹。未设置:使用 sd-scripts 已下载的副本(Hugging Face 缓存中的 google/t5-v1_1-xxl)。</translation>
    </message>
    <message>
        <source>networks.lora (SDXL, SD), networks.lora_flux (FLUX) or networks.lora_sd3 (SD 3.x); chosen from the family when unset. lycoris.kohya trains LyCORIS&apos;s LoCon, LoHa, LoKr, IA3 or full (network_args algo=...).</source>
        <translation>networks.lora(SDXL、SD)、networks.lora_flux(FLUX)或 networks.lora_sd3(SD 3.x);未设置时按模型系列选择。lycoris.kohya 训练 LyCORIS 的 LoCon、LoHa、LoKr、IA3 或 full(network_args 中的 algo=...)。</translation>
    </message>
    <message>
        <source>LoRA rank; 4 when unset. With LyCORIS&apos;s LoKr a rank of at least half a layer&apos;s size (kohya_ss&apos;s 100000) trains its second Kronecker factor whole.</source>
        <translation>LoRA 秩;未设置时为 4。使用 LyCORIS 的 LoKr 时,秩不小于层尺寸的一半(kohya_ss 的 100000)会完整训练第二个克罗内克因子。</translation>
    </message>
    <message>
        <source>SD 2.x</source>
        <translation>SD 2.x</translation>
    </message>
    <message>
        <source>The checkpoint is SD 2.x (OpenCLIP ViT-H text encoder), as sd-scripts&apos; --v2. With model_family auto the checkpoint&apos;s keys decide; v2 on an SD 1.x checkpoint is an error.</source>
        <translation>检查点为 SD 2.x(OpenCLIP ViT-H 文本编码器),同 sd-scripts 的 --v2。model_family 为 auto 时由检查点的键判断;对 SD 1.x 检查点设置 v2 会报错。</translation>
    </message>
    <message>
        <source>Also train the text encoders (SDXL, SD 1.x/2.x and SD 3.x&apos;s CLIPs, DreamBooth and fine-tune).</source>
        <translation>同时训练文本编码器（SDXL、SD 1.x/2.x 与 SD 3.x 的 CLIP，DreamBooth 和微调）。</translation>
    </message>
    <message>
        <source>VRAM budget (GiB)</source>
        <translation>显存预算 (GiB)</translation>
    </message>
    <message>
        <source>GPU memory the run may use: Sinter chooses fp8_base, blocks_to_swap, gradient checkpointing, checkpoint offload and (fine-tune) fused backward, the fastest plan that fits; options you set to other than their defaults are kept. 0 or unset: off. Sinter&apos;s own key; sd-scripts ignores it.</source>
        <translation>运行可使用的 GPU 显存:Sinter 会选择 fp8_base、blocks_to_swap、梯度检查点、检查点卸载以及(微调时)融合反向传播,采用能放下的最快方案;你设为非默认值的选项保持不变。0 或不设置:关闭。Sinter 自有的键,sd-scripts 会忽略它。</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Gradient communication</source>
        <translation>梯度通信</translation>
    </message>
    <message>
        <source>fp8 scaled base</source>
        <translation>fp8 缩放基础模型</translation>
    </message>
    <message>
        <source>With fp8_base, store each frozen Linear weight in fp8 with a scale from its largest value (musubi-tuner&apos;s fp8_scaled) instead of a plain cast. Sinter&apos;s own key; sd-scripts ignores it.</source>
        <translation>与 fp8_base 一起使用：将每个冻结的 Linear 权重以 fp8 存储，并附带由其最大值求得的缩放系数（musubi-tuner 的 fp8_scaled），而不是直接转换。Sinter 自有键；sd-scripts 会忽略它。</translation>
    </message>
    <message>
        <source>fp8 fast compute</source>
        <translation>fp8 快速计算</translation>
    </message>
    <message>
        <source>With fp8_scaled, multiply the frozen base&apos;s weights on FP8 tensor cores (GPUs of compute capability 8.9 or higher) with the activations in fp8; LoRA stays in the training precision. Faster steps, slightly less exact. Sinter&apos;s own key; sd-scripts ignores it.</source>
        <translation>与 fp8_scaled 一起使用：在 FP8 Tensor Core（计算能力 8.9 及以上的 GPU）上计算冻结基础模型权重的矩阵乘法，激活值也为 fp8；LoRA 保持训练精度。步骤更快，精度略低。Sinter 自有键；sd-scripts 会忽略它。</translation>
    </message>
    <message>
        <source>fp8 fast backward</source>
        <translation>fp8 快速反向传播</translation>
    </message>
    <message>
        <source>With fp8_fast, compute the base&apos;s input gradients on FP8 tensor cores too (the gradients in e4m3, scaled per token); off keeps them in the training precision. Sinter&apos;s own key; sd-scripts ignores it.</source>
        <translation>与 fp8_fast 一起使用：基础模型的输入梯度也在 FP8 Tensor Core 上计算（梯度为按 token 缩放的 e4m3）；关闭则保持训练精度。Sinter 自有键；sd-scripts 会忽略它。</translation>
    </message>
    <message>
        <source>With several GPUs: the precision gradients are all-reduced in. no: their own (float32); bf16 or fp16: divided by the GPUs, rounded to 16 bits for the transfer and widened back, as DDP&apos;s compression hooks (accelerate&apos;s comm_hook). Half the traffic; the averaged gradient keeps 8 (bf16) or 11 (fp16) significant bits. Sinter&apos;s own key; sd-scripts has no such option.</source>
        <translation>多 GPU 时 all-reduce 梯度所用的精度。no:保持原精度(float32);bf16 或 fp16:先除以 GPU 数,传输时舍入为 16 位,之后再还原(同 DDP 的压缩钩子、accelerate 的 comm_hook)。通信量减半;平均后的梯度保留 8 位(bf16)或 11 位(fp16)有效位。Sinter 自有的键;sd-scripts 没有此选项。</translation>
    </message>
    <message>
        <source>T5-XXL learning rate</source>
        <translation>T5-XXL 学习率</translation>
    </message>
    <message>
        <source>Learning rate of T5-XXL&apos;s LoRA (network_args train_t5xxl=True), and of CLIP-G&apos;s for SD 3.x; text_encoder_lr when unset. sd-scripts reads it as text_encoder_lr&apos;s second value.</source>
        <translation>T5-XXL LoRA 的学习率（network_args train_t5xxl=True），SD 3.x 中也是 CLIP-G 的学习率；未设置时使用 text_encoder_lr。sd-scripts 将其读作 text_encoder_lr 的第二个值。</translation>
    </message>
    <message>
        <source>SD 3.x T5-XXL learning rate</source>
        <translation>SD 3.x T5-XXL 学习率</translation>
    </message>
    <message>
        <source>Learning rate of SD 3.x&apos;s T5-XXL LoRA alone (network_args train_t5xxl=True); t5xxl_lr when unset. sd-scripts reads it as text_encoder_lr&apos;s third value (networks.lora_sd3).</source>
        <translation>仅 SD 3.x 的 T5-XXL LoRA 的学习率（network_args train_t5xxl=True）；未设置时使用 t5xxl_lr。sd-scripts 将其作为 text_encoder_lr 的第三个值读取（networks.lora_sd3）。</translation>
    </message>
    <message>
        <source>Pivotal embeddings</source>
        <translation>关键调优嵌入</translation>
    </message>
    <message>
        <source>Pivotal tuning: embeddings for new tokens trained with the LoRA, one item each: token_string=... init_word=... num_vectors_per_token=... weights=... learning_rate=... (text_encoder_lr, else learning_rate, when unset). Saved in the LoRA file (bundle_emb) and apart. Sinter&apos;s own key; sd-scripts ignores it.</source>
        <translation>关键调优（Pivotal tuning）：与 LoRA 一起训练的新词元嵌入，每项一个：token_string=... init_word=... num_vectors_per_token=... weights=... learning_rate=...（未设置时使用 text_encoder_lr，否则使用 learning_rate）。保存在 LoRA 文件中（bundle_emb），并另存为单独文件。Sinter 自有的键；sd-scripts 会忽略它。</translation>
    </message>
</context>
<context>
    <name>PresetChanges</name>
    <message>
        <source>(not set)</source>
        <translation>(未设置)</translation>
    </message>
</context>
<context>
    <name>QueueStore</name>
    <message>
        <source>Cannot make the queue folder %1.</source>
        <translation>无法创建队列文件夹 %1。</translation>
    </message>
    <message>
        <source>Could not write %1: %2</source>
        <translation>无法写入 %1: %2</translation>
    </message>
    <message>
        <source>The app ended during this run.</source>
        <translation>此运行进行中时应用已退出。</translation>
    </message>
    <message>
        <source>The run queue is in use by another Sinter window (process %1); this one leaves it alone.</source>
        <translation>运行队列正被另一个 Sinter 窗口(进程 %1)使用;本窗口不会改动它。</translation>
    </message>
    <message>
        <source>The run queue is not open in this window.</source>
        <translation>运行队列未在此窗口中打开。</translation>
    </message>
</context>
<context>
    <name>RunControlText</name>
    <message>
        <source>Sample now</source>
        <translation>立即生成样本</translation>
    </message>
    <message>
        <source>Save now</source>
        <translation>立即保存</translation>
    </message>
    <message>
        <source>Stop after this epoch</source>
        <translation>本轮结束后停止</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>继续</translation>
    </message>
    <message>
        <source>%1 at step %2: nothing to do (%3)</source>
        <translation>%1(第 %2 步):无需操作(%3)</translation>
    </message>
    <message>
        <source>%1: the run ends after epoch %2, saved as at its end.</source>
        <translation>%1:运行将在第 %2 轮之后结束,并像结束时一样保存。</translation>
    </message>
    <message>
        <source>%1: the run ended after epoch %2 as asked.</source>
        <translation>%1:已按要求在第 %2 轮之后结束运行。</translation>
    </message>
    <message>
        <source>%1: sample images made at step %2.</source>
        <translation>%1:已在第 %2 步生成样本图像。</translation>
    </message>
    <message>
        <source>%1: saved at step %2.</source>
        <translation>%1:已在第 %2 步保存。</translation>
    </message>
    <message>
        <source>Paused after step %1; the model stays loaded.</source>
        <translation>已在第 %1 步之后暂停;模型保持加载。</translation>
    </message>
    <message>
        <source>Resumed at step %1 after a pause of %2 s.</source>
        <translation>暂停 %2 秒后,已从第 %1 步继续。</translation>
    </message>
    <message>
        <source>%1 at step %2: %3</source>
        <translation>%1(第 %2 步):%3</translation>
    </message>
</context>
<context>
    <name>main</name>
    <message>
        <source>Sinter: a training studio for SDXL, FLUX.1, SD 1.x, SD 2.x and SD 3.x.</source>
        <translation>Sinter:面向 SDXL、FLUX.1、SD 1.x、SD 2.x 和 SD 3.x 的训练工作室。</translation>
    </message>
    <message>
        <source>Open a configuration file.</source>
        <translation>打开配置文件。</translation>
    </message>
    <message>
        <source>User interface language (ja, zh_CN, en).</source>
        <translation>用户界面语言(ja、zh_CN、en)。</translation>
    </message>
    <message>
        <source>A configuration file to open.</source>
        <translation>要打开的配置文件。</translation>
    </message>
</context>
<context>
    <name>sinter::gui::CheckpointGridPanel</name>
    <message>
        <source>The rows of the grid: the base model, then each checked file</source>
        <translation>网格的各行:基础模型,然后是每个勾选的文件</translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation>刷新</translation>
    </message>
    <message>
        <source>List the output folder&apos;s files again</source>
        <translation>重新列出输出文件夹中的文件</translation>
    </message>
    <message>
        <source>Make grid</source>
        <translation>生成网格</translation>
    </message>
    <message>
        <source>Render the sample prompts for the base model and each checked file, each prompt with one seed in every row</source>
        <translation>用基础模型和每个勾选的文件渲染样本提示词(每个提示词在各行使用同一个种子)</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>%v of %m images</source>
        <translation>%v / %m 张图像</translation>
    </message>
    <message>
        <source>Saved files</source>
        <translation>已保存的文件</translation>
    </message>
    <message>
        <source>Set output_dir: the grid compares the files a run saves there.</source>
        <translation>请设置 output_dir:网格比较运行保存在那里的文件。</translation>
    </message>
    <message>
        <source>No saved files in %1 yet: the grid shows the base model alone.</source>
        <translation>%1 中还没有保存的文件:网格只显示基础模型。</translation>
    </message>
    <message numerus="yes">
        <source>%n saved file(s) in %1. Each checked one is a row, after the base model; each sample prompt is a column.</source>
        <translation>
            <numerusform>%1 中有 %n 个已保存的文件。每个勾选的文件在基础模型之后占一行,每个样本提示词占一列。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n file(s) without LoRA modules (such as the embeddings a pivotal tuning run writes apart) are not listed: each LoRA file&apos;s row has the embeddings it bundles.</source>
        <translation>
            <numerusform>%n 个不含 LoRA 模块的文件（例如关键调优运行另行写出的嵌入）未列出: 每个 LoRA 文件的行使用其中捆绑的嵌入。</numerusform>
        </translation>
    </message>
    <message>
        <source>Rendering the grid: the base model loads, then each row&apos;s file…</source>
        <translation>正在渲染网格:先加载基础模型,再加载每一行的文件…</translation>
    </message>
    <message>
        <source>The grid cannot be shown: %1</source>
        <translation>无法显示网格:%1</translation>
    </message>
    <message>
        <source>%1: %2 rows × %3 prompts.</source>
        <translation>%1:%2 行 × %3 个提示词。</translation>
    </message>
    <message>
        <source>No grid: %1</source>
        <translation>没有网格:%1</translation>
    </message>
    <message>
        <source>Error: %1</source>
        <translation>错误:%1</translation>
    </message>
    <message>
        <source>Warning: %1</source>
        <translation>警告:%1</translation>
    </message>
    <message>
        <source>The runner stopped before the grid was written (exit code %1); its log is below.</source>
        <translation>运行器在写出网格之前停止(退出代码 %1);其日志见下方。</translation>
    </message>
    <message>
        <source>No grid (exit code %1): %2</source>
        <translation>没有网格(退出代码 %1):%2</translation>
    </message>
    <message>
        <source>see the runner&apos;s log below</source>
        <translation>请参阅下方的运行器日志</translation>
    </message>
</context>
<context>
    <name>sinter::gui::CheckpointGridView</name>
    <message>
        <source>Base model (step 0)</source>
        <translation>基础模型(第 0 步)</translation>
    </message>
    <message>
        <source>step %1, epoch %2</source>
        <translation>第 %1 步,第 %2 轮</translation>
    </message>
    <message>
        <source>step %1</source>
        <translation>第 %1 步</translation>
    </message>
    <message>
        <source>epoch %1</source>
        <translation>第 %1 轮</translation>
    </message>
    <message>
        <source>The base model, %1, without any saved file</source>
        <translation>基础模型 %1,不加任何已保存的文件</translation>
    </message>
    <message>
        <source>Negative prompt: %1</source>
        <translation>反向提示词:%1</translation>
    </message>
    <message>
        <source>Seed %1, %2x%3, %4 steps, CFG scale %5, %6</source>
        <translation>种子 %1,%2x%3,%4 步,CFG 比例 %5,%6</translation>
    </message>
</context>
<context>
    <name>sinter::gui::CommandPreviewDialog</name>
    <message>
        <source>Command</source>
        <translation>命令</translation>
    </message>
    <message>
        <source>%1 (written when the run starts)</source>
        <translation>%1(开始运行时写入)</translation>
    </message>
    <message>
        <source>The same run with command-line flags only</source>
        <translation>仅用命令行参数表示的同一次运行</translation>
    </message>
    <message>
        <source>The same run started as sd-scripts is, by sinter-runner or by accelerate</source>
        <translation>以 sd-scripts 的方式启动的同一次运行(sinter-runner 或 accelerate 均可)</translation>
    </message>
    <message>
        <source>Print command</source>
        <translation>显示命令</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
</context>
<context>
    <name>sinter::gui::CompileSettingsPanel</name>
    <message>
        <source>Torch Compile Settings</source>
        <translation>Torch 编译设置</translation>
    </message>
    <message>
        <source>The runner&apos;s plan for this config appears here.</source>
        <translation>此配置的运行器计划将显示在这里。</translation>
    </message>
    <message>
        <source>The runner&apos;s plan for this config on this machine (sinter-runner --compile_plan):</source>
        <translation>运行器在本机上针对此配置的计划(sinter-runner --compile_plan):</translation>
    </message>
    <message>
        <source>The runner refuses these settings:</source>
        <translation>运行器拒绝这些设置:</translation>
    </message>
</context>
<context>
    <name>sinter::gui::DatasetCheckPanel</name>
    <message>
        <source>No dataset check yet: “Check again” reads the dataset as a run would.</source>
        <translation>尚未检查数据集:“重新检查”会像训练运行一样读取数据集。</translation>
    </message>
    <message>
        <source>Check again</source>
        <translation>重新检查</translation>
    </message>
    <message>
        <source>Read the dataset of the settings as they are now, as a run would, and decode every image</source>
        <translation>按当前设置像训练运行一样读取数据集,并解码每张图像</translation>
    </message>
    <message>
        <source>File</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>Finding</source>
        <translation>发现的问题</translation>
    </message>
    <message>
        <source>Checking the dataset: every image is read and decoded…</source>
        <translation>正在检查数据集:读取并解码每张图像…</translation>
    </message>
    <message>
        <source>Error: %1</source>
        <translation>错误:%1</translation>
    </message>
    <message>
        <source>Warning: %1</source>
        <translation>警告:%1</translation>
    </message>
    <message>
        <source>The runner crashed during the check (exit code %1); its log is below.</source>
        <translation>检查期间运行器崩溃(退出代码 %1);其日志见下方。</translation>
    </message>
    <message>
        <source>The dataset could not be checked (exit code %1): %2</source>
        <translation>无法检查数据集(退出代码 %1):%2</translation>
    </message>
    <message>
        <source>see the runner&apos;s log below</source>
        <translation>请参阅下方的运行器日志</translation>
    </message>
    <message numerus="yes">
        <source>No problems found in %n image(s).</source>
        <translation>
            <numerusform>在 %n 张图像中未发现问题。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n image(s) in use;</source>
        <translation>
            <numerusform>使用中的图像 %n 张;</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n finding(s) below.</source>
        <translation>
            <numerusform>下方列出 %n 项问题。</numerusform>
        </translation>
    </message>
    <message>
        <source>A run would refuse this dataset.</source>
        <translation>训练运行会拒绝此数据集。</translation>
    </message>
    <message>
        <source>Duplicates were not looked for.</source>
        <translation>未检查重复项。</translation>
    </message>
    <message>
        <source>Only the images&apos; headers were read (“Check again” decodes every image).</source>
        <translation>仅读取了图像的文件头(“重新检查”会解码每张图像)。</translation>
    </message>
    <message>
        <source>Why a run would refuse it</source>
        <translation>训练运行拒绝它的原因</translation>
    </message>
    <message>
        <source>Images without a caption file</source>
        <translation>没有标注文件的图像</translation>
    </message>
    <message>
        <source>Empty captions</source>
        <translation>空标注</translation>
    </message>
    <message>
        <source>Files with the same content</source>
        <translation>内容相同的文件</translation>
    </message>
    <message>
        <source>same content as %1</source>
        <translation>与 %1 内容相同</translation>
    </message>
    <message>
        <source>Smaller than the smallest bucket</source>
        <translation>小于最小分桶的图像</translation>
    </message>
    <message>
        <source>Cannot be read</source>
        <translation>无法读取的文件</translation>
    </message>
    <message>
        <source>Folders: images × repeats</source>
        <translation>文件夹:图像数 × 重复次数</translation>
    </message>
    <message>
        <source>%1 × %2 = %3</source>
        <translation>%1 × %2 = %3</translation>
    </message>
    <message>
        <source>(regularisation images)</source>
        <translation>(正则化图像)</translation>
    </message>
    <message numerus="yes">
        <source>(%n held out for validation)</source>
        <translation>
            <numerusform>(留出 %n 张用于验证)</numerusform>
        </translation>
    </message>
    <message>
        <source>Buckets</source>
        <translation>分桶</translation>
    </message>
    <message>
        <source>%1 × %2</source>
        <translation>%1 × %2</translation>
    </message>
    <message numerus="yes">
        <source>%n image(s)</source>
        <translation>
            <numerusform>%n 张图像</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n with repeats</source>
        <translation>
            <numerusform>含重复共 %n</numerusform>
        </translation>
    </message>
    <message>
        <source>What reading the dataset said</source>
        <translation>读取数据集时的提示</translation>
    </message>
</context>
<context>
    <name>sinter::gui::LogView</name>
    <message>
        <source>Find in log</source>
        <translation>在日志中查找</translation>
    </message>
    <message>
        <source>Next</source>
        <translation>下一个</translation>
    </message>
    <message>
        <source>Previous</source>
        <translation>上一个</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <source>Copy the selection, or the whole log when nothing is selected</source>
        <translation>复制所选内容;未选择时复制整个日志</translation>
    </message>
    <message>
        <source>Save…</source>
        <translation>保存…</translation>
    </message>
    <message>
        <source>Save the log to a file</source>
        <translation>将日志保存到文件</translation>
    </message>
    <message>
        <source>Could not write %1: %2</source>
        <translation>无法写入 %1:%2</translation>
    </message>
    <message>
        <source>Save log</source>
        <translation>保存日志</translation>
    </message>
    <message>
        <source>Log files (*.log *.txt);;All files (*)</source>
        <translation>日志文件 (*.log *.txt);;所有文件 (*)</translation>
    </message>
    <message numerus="yes">
        <source> [… %n characters not shown …] </source>
        <translation>
            <numerusform> [… 省略 %n 个字符 …] </numerusform>
        </translation>
    </message>
</context>
<context>
    <name>sinter::gui::LossChart</name>
    <message>
        <source>Loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>Smoothed</source>
        <translation>平滑</translation>
    </message>
    <message>
        <source>Validation loss</source>
        <translation>验证损失</translation>
    </message>
    <message>
        <source>Drag across steps to zoom in; right-click to see the whole run again.</source>
        <translation>拖动选择步数范围以放大；右键单击可重新查看整个运行。</translation>
    </message>
    <message>
        <source>Kept best (validation)</source>
        <translation>保留的最佳(验证)</translation>
    </message>
    <message>
        <source>Early stop</source>
        <translation>提前停止</translation>
    </message>
</context>
<context>
    <name>sinter::gui::MainWindow</name>
    <message>
        <source>Tools</source>
        <translation>工具</translation>
    </message>
    <message>
        <source>Tools — Sinter</source>
        <translation>工具 — Sinter</translation>
    </message>
    <message>
        <source>&amp;Open…</source>
        <translation>打开(&amp;O)…</translation>
    </message>
    <message>
        <source>&amp;Save</source>
        <translation>保存(&amp;S)</translation>
    </message>
    <message>
        <source>Save &amp;As…</source>
        <translation>另存为(&amp;A)…</translation>
    </message>
    <message>
        <source>%1 (running)</source>
        <translation>%1(运行中)</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;New</source>
        <translation>新建(&amp;N)</translation>
    </message>
    <message>
        <source>Open &amp;Recent</source>
        <translation>最近打开(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Import kohya_ss JSON…</source>
        <translation>导入 kohya_ss JSON(&amp;I)…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;Run</source>
        <translation>运行(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Start training</source>
        <translation>开始训练(&amp;S)</translation>
    </message>
    <message>
        <source>S&amp;top</source>
        <translation>停止(&amp;T)</translation>
    </message>
    <message>
        <source>&amp;Print command</source>
        <translation>显示命令(&amp;P)</translation>
    </message>
    <message>
        <source>&amp;Settings</source>
        <translation>设置(&amp;S)</translation>
    </message>
    <message>
        <source>Runner &amp;program…</source>
        <translation>运行器程序(&amp;P)…</translation>
    </message>
    <message>
        <source>Open user &amp;preset folder</source>
        <translation>打开用户预设文件夹(&amp;P)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>&amp;About Sinter</source>
        <translation>关于 Sinter(&amp;A)</translation>
    </message>
    <message>
        <source>%1[*] — %2 — Sinter</source>
        <translation>%1[*] — %2 — Sinter</translation>
    </message>
    <message>
        <source>(none)</source>
        <translation>(无)</translation>
    </message>
    <message>
        <source>Clear list</source>
        <translation>清除列表</translation>
    </message>
    <message>
        <source>Unsaved changes</source>
        <translation>未保存的更改</translation>
    </message>
    <message>
        <source>The %1 settings (%2) have unsaved changes. Save them?</source>
        <translation>%1 设置(%2)有未保存的更改。是否保存?</translation>
    </message>
    <message>
        <source>Save</source>
        <translation>保存</translation>
    </message>
    <message>
        <source>Saved %1</source>
        <translation>已保存 %1</translation>
    </message>
    <message>
        <source>Save configuration</source>
        <translation>保存配置</translation>
    </message>
    <message>
        <source>Open configuration</source>
        <translation>打开配置</translation>
    </message>
    <message>
        <source>TOML (*.toml);;All files (*)</source>
        <translation>TOML (*.toml);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Import kohya_ss configuration</source>
        <translation>导入 kohya_ss 配置</translation>
    </message>
    <message>
        <source>kohya_ss JSON (*.json);;All files (*)</source>
        <translation>kohya_ss JSON (*.json);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Imported %1 into the %2 tab.</source>
        <translation>已将 %1 导入到 %2 标签页。</translation>
    </message>
    <message numerus="yes">
        <source>Not carried over: this changes training (%n)</source>
        <translation>
            <numerusform>未迁移: 这会改变训练 (%n)</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Carried over (%n)</source>
        <translation>
            <numerusform>已迁移 (%n)</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>At kohya_ss&apos;s defaults: nothing lost (%n)</source>
        <translation>
            <numerusform>保持 kohya_ss 默认值: 没有丢失任何设置 (%n)</numerusform>
        </translation>
    </message>
    <message>
        <source>Everything that changes training was carried over. The details list each setting.</source>
        <translation>所有影响训练的设置均已迁移。详细信息列出了每项设置。</translation>
    </message>
    <message numerus="yes">
        <source>%n setting(s) not carried over: this changes training.</source>
        <translation>
            <numerusform>%n 项设置未迁移: 这会改变训练。</numerusform>
        </translation>
    </message>
    <message>
        <source>sinter-runner program</source>
        <translation>sinter-runner 程序</translation>
    </message>
    <message>
        <source>About Sinter</source>
        <translation>关于 Sinter</translation>
    </message>
    <message>
        <source>&lt;h3&gt;Sinter %1&lt;/h3&gt;&lt;p&gt;A native training studio for SDXL, FLUX.1, SD 1.x, SD 2.x and SD 3.x.&lt;/p&gt;&lt;p&gt;Runner: %2&lt;/p&gt;</source>
        <translation>&lt;h3&gt;Sinter %1&lt;/h3&gt;&lt;p&gt;面向 SDXL、FLUX.1、SD 1.x、SD 2.x 和 SD 3.x 的原生训练工作室。&lt;/p&gt;&lt;p&gt;运行器:%2&lt;/p&gt;</translation>
    </message>
    <message>
        <source>Training is running</source>
        <translation>训练正在运行</translation>
    </message>
    <message numerus="yes">
        <source>%n run(s) in progress. Stop them (they save first) and quit?</source>
        <translation>
            <numerusform>有 %n 个运行正在进行。要停止它们(会先保存)并退出吗?</numerusform>
        </translation>
    </message>
    <message>
        <source>Use the &amp;bundled runner</source>
        <translation>使用自带的运行器(&amp;B)</translation>
    </message>
    <message>
        <source>Runner: %1</source>
        <translation>运行器:%1</translation>
    </message>
    <message>
        <source>Stopping the runs; the window closes when they have saved.</source>
        <translation>正在停止运行;保存完成后窗口将关闭。</translation>
    </message>
    <message>
        <source>Check &amp;dataset…</source>
        <translation>检查数据集(&amp;D)…</translation>
    </message>
    <message>
        <source>Checkpoint &amp;grid…</source>
        <translation>检查点网格(&amp;G)…</translation>
    </message>
    <message>
        <source>&amp;Queue</source>
        <translation>队列(&amp;Q)</translation>
    </message>
    <message>
        <source>Add current config to &amp;queue</source>
        <translation>将当前配置加入队列(&amp;Q)</translation>
    </message>
    <message>
        <source>Queue</source>
        <translation>队列</translation>
    </message>
</context>
<context>
    <name>sinter::gui::OptionEditor</name>
    <message>
        <source>Not set</source>
        <translation>未设置</translation>
    </message>
    <message>
        <source>Default</source>
        <translation>默认</translation>
    </message>
    <message>
        <source>Kept for this session only; never saved to a file</source>
        <translation>仅在本次会话中保留,绝不会保存到文件</translation>
    </message>
    <message>
        <source>Choose a folder</source>
        <translation>选择文件夹</translation>
    </message>
    <message>
        <source>Choose a file</source>
        <translation>选择文件</translation>
    </message>
    <message>
        <source>Items separated by spaces; quote items that contain spaces</source>
        <translation>各项之间用空格分隔;包含空格的项请加引号</translation>
    </message>
</context>
<context>
    <name>sinter::gui::OptionForm</name>
    <message>
        <source>Source model</source>
        <translation>源模型</translation>
    </message>
    <message>
        <source>Dataset</source>
        <translation>数据集</translation>
    </message>
    <message>
        <source>Training</source>
        <translation>训练</translation>
    </message>
    <message>
        <source>Network</source>
        <translation>网络</translation>
    </message>
    <message>
        <source>Embedding</source>
        <translation>嵌入</translation>
    </message>
    <message>
        <source>Detected from the checkpoint: %1, which this tab does not train (textual inversion: SD 1.x, SD 2.x and SDXL).</source>
        <translation>从检查点检测到:%1,本标签页不训练该模型系列(文本反演仅支持 SD 1.x、SD 2.x 和 SDXL)。</translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation>优化器</translation>
    </message>
    <message>
        <source>Torch Compile Settings</source>
        <translation>Torch 编译设置</translation>
    </message>
    <message>
        <source>Saving</source>
        <translation>保存</translation>
    </message>
    <message>
        <source>Samples</source>
        <translation>采样</translation>
    </message>
    <message>
        <source>Logging</source>
        <translation>日志</translation>
    </message>
    <message>
        <source>Folders</source>
        <translation>文件夹</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>Basic</source>
        <translation>基本</translation>
    </message>
    <message>
        <source>Advanced</source>
        <translation>高级</translation>
    </message>
    <message>
        <source>Detected from the checkpoint: %1</source>
        <translation>从检查点检测到:%1</translation>
    </message>
    <message>
        <source>The checkpoint&apos;s tensor names match no known model family.</source>
        <translation>检查点的张量名称与任何已知模型系列都不匹配。</translation>
    </message>
    <message>
        <source>Could not read the checkpoint: %1</source>
        <translation>无法读取检查点:%1</translation>
    </message>
    <message>
        <source>The checkpoint file does not exist yet.</source>
        <translation>检查点文件尚不存在。</translation>
    </message>
</context>
<context>
    <name>sinter::gui::PresetDiffDialog</name>
    <message>
        <source>Apply preset</source>
        <translation>应用预设</translation>
    </message>
    <message numerus="yes">
        <source>Applying “%1” changes %n option(s):</source>
        <translation>
            <numerusform>应用“%1”将更改 %n 个选项:</numerusform>
        </translation>
    </message>
    <message>
        <source>Option</source>
        <translation>选项</translation>
    </message>
    <message>
        <source>Current</source>
        <translation>当前值</translation>
    </message>
    <message>
        <source>Preset</source>
        <translation>预设值</translation>
    </message>
    <message>
        <source>Apply</source>
        <translation>应用</translation>
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
        <translation>队列结束时(不经过 shell)运行的程序及其参数;SINTER_QUEUE_DONE、SINTER_QUEUE_FAILED、SINTER_QUEUE_INTERRUPTED 和 SINTER_QUEUE_PENDING 中是各项数量</translation>
    </message>
    <message>
        <source>Add current config to queue</source>
        <translation>将当前配置加入队列</translation>
    </message>
    <message>
        <source>Add to queue</source>
        <translation>加入队列</translation>
    </message>
    <message>
        <source>Added to the queue as run %1, into %2: another run of the queue writes the same files into its output folder.</source>
        <translation>已作为第 %1 个运行加入队列,输出到 %2:队列中的另一个运行会向其输出文件夹写入同名文件。</translation>
    </message>
    <message>
        <source>Added to the queue as run %1.</source>
        <translation>已作为第 %1 个运行加入队列。</translation>
    </message>
    <message>
        <source>Choose a training tab (LoRA, DreamBooth, Fine-tune or Textual Inversion): its settings are what the queue runs.</source>
        <translation>请选择训练标签页(LoRA、DreamBooth、微调或文本反演):队列运行的是该标签页的设置。</translation>
    </message>
    <message>
        <source>Config: %1</source>
        <translation>配置: %1</translation>
    </message>
    <message>
        <source>Done</source>
        <translation>完成</translation>
    </message>
    <message>
        <source>Down</source>
        <translation>下移</translation>
    </message>
    <message>
        <source>Failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>Go on with the next run</source>
        <translation>继续下一个运行</translation>
    </message>
    <message>
        <source>Interrupted</source>
        <translation>已中断</translation>
    </message>
    <message>
        <source>Keep a copy of the current tab&apos;s settings as the next run of the queue, with an output folder of its own</source>
        <translation>将当前标签页设置的副本作为队列的下一个运行保存,并使用其专属的输出文件夹</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>消息</translation>
    </message>
    <message>
        <source>Output folder</source>
        <translation>输出文件夹</translation>
    </message>
    <message>
        <source>Pending</source>
        <translation>等待中</translation>
    </message>
    <message>
        <source>Queue the run again from its start</source>
        <translation>将此运行从头重新加入队列</translation>
    </message>
    <message>
        <source>Queue the run again, going on from %1 (step %2)</source>
        <translation>将此运行重新加入队列,从 %1(第 %2 步)继续</translation>
    </message>
    <message>
        <source>Queue the run again, going on from the last training state it saved</source>
        <translation>将此运行重新加入队列,从其最后保存的训练状态继续</translation>
    </message>
    <message>
        <source>Queue: %1</source>
        <translation>队列: %1</translation>
    </message>
    <message>
        <source>Ran the end command: %1</source>
        <translation>已运行结束命令: %1</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>继续</translation>
    </message>
    <message>
        <source>Resumes from %1.</source>
        <translation>将从 %1 继续。</translation>
    </message>
    <message>
        <source>Resumes from: %1</source>
        <translation>继续自: %1</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <source>Run again</source>
        <translation>再次运行</translation>
    </message>
    <message>
        <source>Run the pending entries one after another, each in the tab of its training type</source>
        <translation>依次运行等待中的条目,每个条目在其训练类型的标签页中运行</translation>
    </message>
    <message>
        <source>Running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>Sinter</source>
        <translation>Sinter</translation>
    </message>
    <message>
        <source>Start queue</source>
        <translation>开始队列</translation>
    </message>
    <message>
        <source>Started in: %1</source>
        <translation>启动文件夹: %1</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Stop queue</source>
        <translation>停止队列</translation>
    </message>
    <message>
        <source>Stop the queue</source>
        <translation>停止队列</translation>
    </message>
    <message>
        <source>Stop the run going on (it saves its network and training state) and start no other</source>
        <translation>停止正在进行的运行(会保存网络和训练状态),且不再启动其他运行</translation>
    </message>
    <message>
        <source>The end command could not be started: %1 (%2)</source>
        <translation>无法启动结束命令: %1 (%2)</translation>
    </message>
    <message>
        <source>The queue is empty: “Add current config to queue” adds the current tab&apos;s settings.</source>
        <translation>队列为空:“将当前配置加入队列”会加入当前标签页的设置。</translation>
    </message>
    <message>
        <source>Up</source>
        <translation>上移</translation>
    </message>
    <message>
        <source>When a run fails:</source>
        <translation>运行失败时:</translation>
    </message>
    <message>
        <source>When the queue ends, run:</source>
        <translation>队列结束时运行:</translation>
    </message>
    <message>
        <source>optional, e.g. notify-send Sinter &quot;queue finished&quot;</source>
        <translation>可选,例如 notify-send Sinter &quot;queue finished&quot;</translation>
    </message>
</context>
<context>
    <name>sinter::gui::QueueRunner</name>
    <message>
        <source>A run failed and the queue stops there (on failure: stop the queue).</source>
        <translation>有运行失败,队列在此停止(失败时:停止队列)。</translation>
    </message>
    <message>
        <source>Nothing to run: no entry of the queue is pending.</source>
        <translation>没有可运行的内容:队列中没有等待中的条目。</translation>
    </message>
    <message>
        <source>Queue: run %1 of %2 (%3).</source>
        <translation>队列: 第 %1 / %2 个运行(%3)。</translation>
    </message>
    <message>
        <source>Running %1 of %2 in the %3 tab.</source>
        <translation>正在 %3 标签页中运行第 %1 / %2 个。</translation>
    </message>
    <message>
        <source>Stopping the queue: the run saves, then the queue stops.</source>
        <translation>正在停止队列:当前运行先保存,然后队列停止。</translation>
    </message>
    <message>
        <source>The queue has ended: %1 done, %2 failed, %3 interrupted, %4 pending.</source>
        <translation>队列已结束:完成 %1,失败 %2,中断 %3,等待中 %4。</translation>
    </message>
    <message>
        <source>The queue stopped; the runs left are pending.</source>
        <translation>队列已停止;其余运行仍在等待中。</translation>
    </message>
    <message>
        <source>The snapshot cannot be read: %1</source>
        <translation>无法读取快照: %1</translation>
    </message>
    <message>
        <source>The snapshot names no training type.</source>
        <translation>快照未指定训练类型。</translation>
    </message>
    <message>
        <source>Waiting for the run in the %1 tab to end.</source>
        <translation>正在等待 %1 标签页中的运行结束。</translation>
    </message>
</context>
<context>
    <name>sinter::gui::RunController</name>
    <message>
        <source>Could not start %1: %2</source>
        <translation>无法启动 %1:%2</translation>
    </message>
    <message>
        <source>Could not start %1: it is a folder, not a program.</source>
        <translation>无法启动 %1：这是一个文件夹，不是程序。</translation>
    </message>
    <message>
        <source>%1 [… line cut: %2 more not read]</source>
        <translation>%1 [… 行已截断：其余 %2 未读取]</translation>
    </message>
    <message>
        <source>%1 [… line cut: %2 more not read; a line this long is not read as an event]</source>
        <translation>%1 [… 行已截断：其余 %2 未读取；这么长的行不作为事件读取]</translation>
    </message>
</context>
<context>
    <name>sinter::gui::RunMonitor</name>
    <message>
        <source>Idle</source>
        <translation>空闲</translation>
    </message>
    <message>
        <source>%v / %m steps</source>
        <translation>%v / %m 步</translation>
    </message>
    <message>
        <source>Starting…</source>
        <translation>正在启动…</translation>
    </message>
    <message>
        <source>%1 on %2, %3 steps</source>
        <translation>在 %2 上进行 %1,共 %3 步</translation>
    </message>
    <message>
        <source>, %1 images, %2 skipped</source>
        <translation>，%1 张图像，跳过 %2 个</translation>
    </message>
    <message>
        <source>, %1 images</source>
        <translation>，%1 张图像</translation>
    </message>
    <message>
        <source>Preparing</source>
        <translation>准备中</translation>
    </message>
    <message>
        <source>Warm-up</source>
        <translation>预热</translation>
    </message>
    <message>
        <source>Warm-up: %1 captured in %2 s (total %3 s)</source>
        <translation>预热:%1 捕获耗时 %2 秒(共 %3 秒)</translation>
    </message>
    <message>
        <source>Training</source>
        <translation>训练中</translation>
    </message>
    <message>
        <source>Warm-up took %1 s</source>
        <translation>预热耗时 %1 秒</translation>
    </message>
    <message>
        <source>Epoch %1 / %2</source>
        <translation>第 %1 / %2 轮</translation>
    </message>
    <message>
        <source>Epoch %1</source>
        <translation>第 %1 轮</translation>
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
        <translation>剩余时间 %1</translation>
    </message>
    <message>
        <source>Epoch %1 / %2 done, average loss %3</source>
        <translation>第 %1 / %2 轮完成,平均损失 %3</translation>
    </message>
    <message>
        <source>Saved %1: %2</source>
        <translation>已保存 %1:%2</translation>
    </message>
    <message>
        <source>Force-stopped: the runner was killed; the last saved state is what remains.</source>
        <translation>已强制停止:运行器已被终止;保留的是最后一次保存的状态。</translation>
    </message>
    <message>
        <source>Stopped at step %1; the network and training state were saved.</source>
        <translation>已在第 %1 步停止;网络和训练状态已保存。</translation>
    </message>
    <message>
        <source>Completed: %1 steps.</source>
        <translation>已完成:%1 步。</translation>
    </message>
    <message>
        <source>Failed: the runner crashed.</source>
        <translation>失败:运行器崩溃。</translation>
    </message>
    <message>
        <source>Failed with exit code %1.</source>
        <translation>失败,退出代码 %1。</translation>
    </message>
    <message>
        <source>The configuration was refused; nothing was trained.</source>
        <translation>配置被拒绝;没有进行任何训练。</translation>
    </message>
    <message>
        <source>Completed</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>Stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <source>Failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>%1 / %2 steps</source>
        <translation>%1 / %2 步</translation>
    </message>
    <message>
        <source>The runner&apos;s done event counts %1 steps, not between 0 and the run&apos;s %2; the last step seen, %3, is shown.</source>
        <translation>运行器的 done 事件报告了 %1 步，不在 0 到本次运行的 %2 步之间；显示最后收到的步数 %3。</translation>
    </message>
    <message>
        <source>The runner&apos;s done event counts %1 steps, which no step event showed; the last step seen, %2, is shown.</source>
        <translation>运行器的 done 事件报告了 %1 步，没有任何 step 事件显示过；显示最后收到的步数 %2。</translation>
    </message>
    <message>
        <source>Paused</source>
        <translation>已暂停</translation>
    </message>
    <message>
        <source>Completed: stopped early at step %1: %2.</source>
        <translation>已完成：在第 %1 步提前停止：%2。</translation>
    </message>
</context>
<context>
    <name>sinter::gui::RunPanel</name>
    <message>
        <source>Start training</source>
        <translation>开始训练</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Finish the current step, save the network and training state, then stop</source>
        <translation>完成当前步骤,保存网络和训练状态,然后停止</translation>
    </message>
    <message>
        <source>Force stop</source>
        <translation>强制停止</translation>
    </message>
    <message>
        <source>Kill the runner now; nothing more is saved</source>
        <translation>立即终止运行器;不会再保存任何内容</translation>
    </message>
    <message>
        <source>Print command</source>
        <translation>显示命令</translation>
    </message>
    <message>
        <source>Show the exact command and the TOML file a run would use</source>
        <translation>显示运行时将使用的确切命令和 TOML 文件</translation>
    </message>
    <message>
        <source>The runner has not stopped yet; Force stop kills it.</source>
        <translation>运行器尚未停止;可使用强制停止将其终止。</translation>
    </message>
    <message>
        <source>Stop requested: the runner finishes the current step and saves.</source>
        <translation>已请求停止:运行器将完成当前步骤并保存。</translation>
    </message>
    <message>
        <source>Compile plan: %1; mechanisms: %2; regions: %3</source>
        <translation>编译计划:%1;机制:%2;区域:%3</translation>
    </message>
    <message>
        <source>backend=%1, mode=%2, dynamic=%3</source>
        <translation>backend=%1,mode=%2,dynamic=%3</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Unavailable in this build: %1</source>
        <translation>此版本不可用:%1</translation>
    </message>
    <message>
        <source>Warning: %1</source>
        <translation>警告:%1</translation>
    </message>
    <message>
        <source>Error: %1</source>
        <translation>错误:%1</translation>
    </message>
    <message>
        <source>Saved (%1): %2</source>
        <translation>已保存(%1):%2</translation>
    </message>
    <message>
        <source>Sample: %1 (%2)</source>
        <translation>样本:%1(%2)</translation>
    </message>
    <message>
        <source>Runner exited with code %1.</source>
        <translation>运行器已退出,代码 %1。</translation>
    </message>
    <message>
        <source>Train on this many GPUs of this machine, one process each (data parallel): every GPU takes its share of each epoch&apos;s batches, so an epoch has fewer steps. Without a GPU the processes share the CPU.</source>
        <translation>使用本机上这么多块 GPU 训练，每块 GPU 一个进程（数据并行）：每块 GPU 承担每个 epoch 的一部分批次，因此一个 epoch 的步数更少。没有 GPU 时，这些进程共用 CPU。</translation>
    </message>
    <message>
        <source>GPUs:</source>
        <translation>GPU 数量:</translation>
    </message>
    <message>
        <source>Render the sample prompts after the current step, as sample_every_n_steps would</source>
        <translation>在当前步骤之后渲染样本提示词,与 sample_every_n_steps 相同</translation>
    </message>
    <message>
        <source>Save the trained weights after the current step, as save_every_n_steps names them (and the training state with save_state)</source>
        <translation>在当前步骤之后保存训练的权重,命名与 save_every_n_steps 相同(启用 save_state 时也保存训练状态)</translation>
    </message>
    <message>
        <source>Finish the current epoch, save as at the end of the run, and end the run there</source>
        <translation>完成当前轮次,像运行结束时一样保存,然后在此结束运行</translation>
    </message>
    <message>
        <source>Sample now asked: the runner samples after the current step.</source>
        <translation>已请求立即生成样本:运行器将在当前步骤之后生成样本。</translation>
    </message>
    <message>
        <source>Save now asked: the runner saves after the current step.</source>
        <translation>已请求立即保存:运行器将在当前步骤之后保存。</translation>
    </message>
    <message>
        <source>Stop after this epoch asked: the run ends when the current epoch does.</source>
        <translation>已请求本轮结束后停止:运行将在当前轮次结束时结束。</translation>
    </message>
    <message>
        <source>Resume asked.</source>
        <translation>已请求继续。</translation>
    </message>
    <message>
        <source>Pause asked: the run pauses after the current step.</source>
        <translation>已请求暂停:运行将在当前步骤之后暂停。</translation>
    </message>
    <message>
        <source>Go on training from where the run paused</source>
        <translation>从暂停处继续训练</translation>
    </message>
    <message>
        <source>Pause after the current step; the model stays loaded, and the pause counts in no step time, it/s or ETA</source>
        <translation>在当前步骤之后暂停;模型保持加载,暂停时间不计入步骤时间、it/s 或 ETA</translation>
    </message>
</context>
<context>
    <name>sinter::gui::RunnerCompilePlan</name>
    <message>
        <source>Could not write the config for the runner: %1</source>
        <translation>无法为运行器写入配置:%1</translation>
    </message>
    <message>
        <source>The runner could not be started (%1): %2</source>
        <translation>无法启动运行器(%1):%2</translation>
    </message>
</context>
<context>
    <name>sinter::gui::SampleGallery</name>
    <message>
        <source>Image not found</source>
        <translation>找不到图像</translation>
    </message>
    <message>
        <source>Sample images of this session&apos;s runs</source>
        <translation>本次会话各次运行的样本图像</translation>
    </message>
    <message>
        <source>Sample images</source>
        <translation>样本图像</translation>
    </message>
    <message>
        <source>Run %1 (%2)</source>
        <translation>运行 %1 (%2)</translation>
    </message>
    <message>
        <source>epoch %1, step %2</source>
        <translation>第 %1 轮，第 %2 步</translation>
    </message>
    <message>
        <source>step %1</source>
        <translation>第 %1 步</translation>
    </message>
    <message>
        <source>%1
prompt %2: %3
%4</source>
        <translation>%1
提示词 %2：%3
%4</translation>
    </message>
    <message>
        <source>The image cannot be read: %1</source>
        <translation>无法读取图像：%1</translation>
    </message>
    <message>
        <source>Sample images appear here while a run with sample prompts trains.</source>
        <translation>使用样本提示词的运行在训练时，样本图像会显示在这里。</translation>
    </message>
    <message>
        <source>No sample images in this run yet.</source>
        <translation>此次运行还没有样本图像。</translation>
    </message>
    <message>
        <source>Checkpoint grid…</source>
        <translation>检查点网格…</translation>
    </message>
    <message>
        <source>Compare the saved files: the sample prompts rendered for the base model and each file, side by side</source>
        <translation>比较已保存的文件:用基础模型和每个文件渲染的样本提示词并排显示</translation>
    </message>
</context>
<context>
    <name>sinter::gui::SampleViewer</name>
    <message>
        <source>Sample at step %1</source>
        <translation>第 %1 步的样本</translation>
    </message>
    <message>
        <source>The image %1 cannot be read: %2</source>
        <translation>无法读取图像 %1：%2</translation>
    </message>
    <message>
        <source>Step %1</source>
        <translation>第 %1 步</translation>
    </message>
    <message>
        <source>, end of epoch %1</source>
        <translation>，第 %1 轮结束</translation>
    </message>
    <message>
        <source>, prompt %1</source>
        <translation>，提示词 %1</translation>
    </message>
    <message>
        <source>Open folder</source>
        <translation>打开文件夹</translation>
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
        <translation>微调</translation>
    </message>
    <message>
        <source>Textual Inversion</source>
        <translation>文本反演</translation>
    </message>
    <message>
        <source>Configuration</source>
        <translation>配置</translation>
    </message>
    <message>
        <source>Preset:</source>
        <translation>预设:</translation>
    </message>
    <message>
        <source>Apply…</source>
        <translation>应用…</translation>
    </message>
    <message>
        <source>Show what the preset changes, then apply it</source>
        <translation>先显示预设将更改的内容,再应用</translation>
    </message>
    <message>
        <source>Save as preset…</source>
        <translation>另存为预设…</translation>
    </message>
    <message>
        <source>Save the current settings as your own preset</source>
        <translation>将当前设置保存为自己的预设</translation>
    </message>
    <message>
        <source>%1 (yours)</source>
        <translation>%1(我的)</translation>
    </message>
    <message>
        <source>%1 (cannot be read)</source>
        <translation>%1(无法读取)</translation>
    </message>
    <message>
        <source>Apply preset</source>
        <translation>应用预设</translation>
    </message>
    <message>
        <source>“%1” would change nothing.</source>
        <translation>“%1”不会更改任何内容。</translation>
    </message>
    <message>
        <source>A preset needs a name.</source>
        <translation>预设需要一个名称。</translation>
    </message>
    <message>
        <source>Save as preset</source>
        <translation>另存为预设</translation>
    </message>
    <message>
        <source>Preset name:</source>
        <translation>预设名称:</translation>
    </message>
    <message>
        <source>Choose an output folder first: the run&apos;s TOML file is written there.</source>
        <translation>请先选择输出文件夹:运行用的 TOML 文件会写入那里。</translation>
    </message>
    <message>
        <source>Print command</source>
        <translation>显示命令</translation>
    </message>
    <message>
        <source>Cannot start</source>
        <translation>无法开始</translation>
    </message>
    <message>
        <source>Fix the marked fields first:
%1</source>
        <translation>请先修正标记的字段:
%1</translation>
    </message>
    <message>
        <source>Choose a preset…</source>
        <translation>选择预设…</translation>
    </message>
    <message>
        <source>Dataset check — %1</source>
        <translation>数据集检查 — %1</translation>
    </message>
    <message numerus="yes">
        <source>Dataset check: %n finding(s); Run ▸ Check dataset… shows them.</source>
        <translation>
            <numerusform>数据集检查:发现 %n 项问题;运行 ▸ 检查数据集… 可查看。</numerusform>
        </translation>
    </message>
    <message>
        <source>Check dataset…</source>
        <translation>检查数据集…</translation>
    </message>
    <message>
        <source>Read the dataset as a run would and list images without captions, empty captions, duplicates, images that are too small and files that cannot be read</source>
        <translation>像训练运行一样读取数据集,并列出没有标注的图像、空标注、重复项、过小的图像和无法读取的文件</translation>
    </message>
    <message>
        <source>Check dataset</source>
        <translation>检查数据集</translation>
    </message>
    <message>
        <source>Checkpoint grid — %1</source>
        <translation>检查点网格 — %1</translation>
    </message>
    <message>
        <source>Choose an output folder first: each queued run writes into its own.</source>
        <translation>请先选择输出文件夹:队列中的每个运行都写入各自的文件夹。</translation>
    </message>
</context>
<context>
    <name>sinter::gui::ToolsTab</name>
    <message>
        <source>Safetensors (*.safetensors);;All files (*)</source>
        <translation>Safetensors (*.safetensors);;所有文件 (*)</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1（%2）</translation>
    </message>
    <message>
        <source>Show every flag sd-scripts&apos; script takes</source>
        <translation>显示 sd-scripts 脚本接受的全部参数</translation>
    </message>
    <message>
        <source>Run tool</source>
        <translation>运行工具</translation>
    </message>
    <message>
        <source>Check a LoRA file...</source>
        <translation>检查 LoRA 文件...</translation>
    </message>
    <message>
        <source>The result: the files&apos; sizes and what the LoRA written holds.</source>
        <translation>结果：文件大小，以及写出的 LoRA 的内容。</translation>
    </message>
    <message>
        <source>Tool</source>
        <translation>工具</translation>
    </message>
    <message>
        <source>Check a LoRA file</source>
        <translation>检查 LoRA 文件</translation>
    </message>
    <message>
        <source>The runner did not start: %1</source>
        <translation>运行器未能启动：%1</translation>
    </message>
    <message>
        <source>files separated by ;</source>
        <translation>以 ; 分隔的文件</translation>
    </message>
    <message>
        <source>Browse...</source>
        <translation>浏览...</translation>
    </message>
    <message>
        <source>Choose files</source>
        <translation>选择文件</translation>
    </message>
    <message>
        <source>Save as</source>
        <translation>另存为</translation>
    </message>
    <message>
        <source>Choose a file</source>
        <translation>选择文件</translation>
    </message>
    <message>
        <source>%1 (default)</source>
        <translation>%1（默认）</translation>
    </message>
    <message>
        <source>(not set)</source>
        <translation>（未设置）</translation>
    </message>
    <message>
        <source>default %1</source>
        <translation>默认 %1</translation>
    </message>
    <message>
        <source>numbers separated by spaces</source>
        <translation>以空格分隔的数字</translation>
    </message>
    <message>
        <source>--%1 (required)</source>
        <translation>--%1（必填）</translation>
    </message>
    <message>
        <source>--%1 is required: %2</source>
        <translation>--%1 为必填项：%2</translation>
    </message>
    <message>
        <source>Running %1...</source>
        <translation>正在运行 %1...</translation>
    </message>
    <message>
        <source>%1 (%2):</source>
        <translation>%1（%2）：</translation>
    </message>
    <message>
        <source>The tool crashed.</source>
        <translation>工具崩溃了。</translation>
    </message>
    <message>
        <source>The tool failed (exit %1); the log says why.</source>
        <translation>工具失败（退出码 %1）；原因见日志。</translation>
    </message>
    <message>
        <source>Done.</source>
        <translation>完成。</translation>
    </message>
    <message>
        <source>Done: wrote %1 (%2).</source>
        <translation>完成：已写出 %1（%2）。</translation>
    </message>
    <message>
        <source>input --%1: %2 (%3)</source>
        <translation>输入 --%1：%2（%3）</translation>
    </message>
</context>
</TS>
